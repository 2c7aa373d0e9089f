#!/usr/bin/env bash
# The test suite under a sanitizer: scripts/sanitize.sh [address|thread|undefined]
# Builds into its own directory, so the normal build is left alone.
set -euo pipefail
cd "$(dirname "$0")/.."
sanitizer=${1:-address}
case $sanitizer in
    address | thread | undefined) ;;
    *) echo "usage: $0 [address|thread|undefined]" >&2; exit 64 ;;
esac
# The end-to-end tests run the built courier binary, instrumented too.
# The real .deb install test installs the built binary system-wide: not an
# instrumented one.
export COURIER_SANITIZED=$sanitizer
# Defects outside courier that the sanitizer would stop the suite on: see the file.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:suppressions=$PWD/scripts/asan-suppressions.txt}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
swift build --build-tests --sanitize="$sanitizer" --scratch-path ".build/sanitize-$sanitizer"
swift test --skip-build --sanitize="$sanitizer" --scratch-path ".build/sanitize-$sanitizer"
