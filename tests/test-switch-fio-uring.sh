#!/bin/bash
# test-switch-fio-uring.sh - test-switch-fio.sh with FUSE requests on io_uring:
# a switch waits for the requests in flight while a ring request is handled.
switch_rqdisk_opts=(--fuse-uring)
source "$(dirname "$0")/test-switch-fio.sh"
