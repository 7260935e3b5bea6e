# SPDX-License-Identifier: BSD-3-Clause
# The device below the queue: the stack (device.c), and a folder per filter
# with its helpers, as nbdkit's filters/NAME/; no liburing either.
noinst_LTLIBRARIES += src/device/libdevice.la
src_device_libdevice_la_SOURCES = \
	src/device/device.c \
	src/device/device.h \
	src/device/delay/filter_delay.c \
	src/device/fault/fault.h \
	src/device/fault/fault_badblocks.c \
	src/device/fault/fault_impl.h \
	src/device/fault/fault_io.c \
	src/device/fault/fault_rules.c \
	src/device/fault/fault_watch.c \
	src/device/fault/filter_fault.c \
	src/device/log-writes/filter_log_writes.c \
	src/device/log-writes/log_writes_attrs.c \
	src/device/log-writes/log_writes_entries.c \
	src/device/log-writes/log_writes_files.c \
	src/device/log-writes/log_writes_impl.h \
	src/device/log-writes/log_writes_io.c \
	src/device/log-writes/log_writes_order.c \
	src/device/log-writes/log_writes_writer.c \
	src/device/model/filter_model.c \
	src/device/model/model.c \
	src/device/model/model.h \
	src/device/model/model_hdd.c \
	src/device/model/model_impl.h \
	src/device/model/model_ssd.c \
	src/device/write-cache/filter_write_cache.c \
	src/device/write-cache/wcache_impl.h \
	src/device/write-cache/wcache_io.c \
	src/device/write-cache/wcache_map.c \
	src/device/write-cache/wcache_map.h \
	src/device/write-cache/wcache_power.c \
	src/device/write-cache/wcache_writeback.c \
	$(NULL)
src_device_libdevice_la_LIBADD = src/common/libcommon.la -lm $(PTHREAD_LIBS)
