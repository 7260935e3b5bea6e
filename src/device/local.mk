# SPDX-License-Identifier: BSD-3-Clause
# dm-log-writes' on-disk format, encoded and decoded: the log-writes filter
# writes logs, rqdisk-crash (which links no libdevice) reads them.
noinst_LTLIBRARIES += src/device/liblogwrites.la
src_device_liblogwrites_la_SOURCES = src/device/log_writes.c src/device/log_writes.h

# The device below the queue: the stack, its filters and the models; no
# liburing either.  (The simulated backend joins from src/backend/local.mk.)
noinst_LTLIBRARIES += src/device/libdevice.la
src_device_libdevice_la_SOURCES = \
	src/device/device.c \
	src/device/device.h \
	src/device/fault.h \
	src/device/fault_badblocks.c \
	src/device/fault_rules.c \
	src/device/filter_delay.c \
	src/device/filter_fault.c \
	src/device/filter_log_writes.c \
	src/device/filter_model.c \
	src/device/filter_write_cache.c \
	src/device/kv.c \
	src/device/kv.h \
	src/device/log_writes_files.c \
	src/device/log_writes_impl.h \
	src/device/log_writes_writer.c \
	src/device/model.c \
	src/device/model.h \
	src/device/model_hdd.c \
	src/device/model_impl.h \
	src/device/model_ssd.c \
	src/device/wcache_map.c \
	src/device/wcache_map.h \
	$(NULL)
src_device_libdevice_la_LIBADD = src/device/liblogwrites.la -lm $(PTHREAD_LIBS)
