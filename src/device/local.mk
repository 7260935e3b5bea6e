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
	src/device/log_writes.h \
	src/device/model.c \
	src/device/model.h \
	src/device/model_hdd.c \
	src/device/model_impl.h \
	src/device/model_ssd.c \
	src/device/wcache_map.c \
	src/device/wcache_map.h \
	$(NULL)
src_device_libdevice_la_LIBADD = -lm $(PTHREAD_LIBS)
