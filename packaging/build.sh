#!/usr/bin/env bash
# Build distributable artefacts into dist/: a wheel (always) and, with --bundle, the one-folder
# PyInstaller app (the same as `make wheel` / `make bundle`). Run from anywhere.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
if [ "${1:-}" = "--bundle" ]; then
  make wheel bundle
else
  make wheel
fi
echo "built: $(ls dist)"
