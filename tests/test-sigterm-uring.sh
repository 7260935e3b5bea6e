#!/bin/bash
# test-sigterm-uring.sh - test-sigterm.sh with FUSE requests on io_uring.
sigterm_rqdisk_opts=(--fuse-uring)
source "$(dirname "$0")/test-sigterm.sh"
