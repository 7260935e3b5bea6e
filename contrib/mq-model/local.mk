# SPDX-License-Identifier: BSD-3-Clause
# The multi-queue path's model (doc/mq-model.md): a library the unit test
# checks, and the program that prints its table; built, not installed.
noinst_LTLIBRARIES += contrib/mq-model/libmqmodel.la
contrib_mq_model_libmqmodel_la_SOURCES = contrib/mq-model/mq_model.c contrib/mq-model/mq_model.h
noinst_PROGRAMS += contrib/mq-model/mq-model
contrib_mq_model_mq_model_SOURCES = contrib/mq-model/mq_model_main.c
contrib_mq_model_mq_model_LDADD = contrib/mq-model/libmqmodel.la src/common/libcommon.la
