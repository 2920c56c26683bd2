#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds with warnings as errors, runs ctest
# (unit tests against a fake Target, integration tests driving the real lldb-19 and gdb).
set -euo pipefail
cd "$(dirname "$0")/.."
# The codec's tests also run under AddressSanitizer + UBSan, and its fuzzer for a few seconds.
scripts/setup.sh -DSTROBE_WERROR=ON -DSTROBE_SANITIZE=ON
cd "${STROBE_BUILD_DIR:-build}"
ctest --output-on-failure --timeout 600 -j2
