# SPDX-License-Identifier: BSD-3-Clause
# A page per program, per filter and per backend; rqdisk(8) is their index.
dist_man_MANS += \
	man/rqdisk.8 \
	man/rqdisk-checkorder.1 \
	man/rqdisk-crash.1 \
	man/rqdisk-replay.1 \
	man/rqdisk-elevator.3 \
	man/rqdisk-elevators.7 \
	man/rqdisk-delay-filter.8 \
	man/rqdisk-fault-filter.8 \
	man/rqdisk-log-writes-filter.8 \
	man/rqdisk-model-filter.8 \
	man/rqdisk-write-cache-filter.8 \
	man/rqdisk-file-backend.8 \
	man/rqdisk-nbd-backend.8 \
	man/rqdisk-null-backend.8 \
	man/rqdisk-rbd-backend.8 \
	$(NULL)
