#!/bin/sh
# Nothing in courier is an API for the world: one executable and its own
# tests are the only users of its modules, so what crosses a target is
# `package` and the rest internal or private. `public` stays only where the
# line itself says why (`// public: reason`); this check, run by
# scripts/test, keeps it so.
set -eu
cd "$(dirname "$0")/.."
found=$(grep -rnE '^[^/"]*\bpublic\b' --include='*.swift' Sources | grep -v '// public: ' || true)
if [ -n "$found" ]; then
    echo "$found" >&2
    echo "check-access: 'public' without a reason (use package or internal, or add '// public: why')" >&2
    exit 1
fi
echo "check-access: no public declaration without a reason"
