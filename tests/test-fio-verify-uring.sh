#!/bin/bash
# test-fio-verify-uring.sh - test-fio-verify.sh with FUSE requests on io_uring.
fio_rqdisk_opts=(--fuse-uring)
source "$(dirname "$0")/test-fio-verify.sh"
