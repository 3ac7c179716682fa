#!/usr/bin/env bash
# Build distributable artefacts: a wheel (always) and, with --bundle, a one-folder PyInstaller app
# that carries the bundled models and samples. Run from anywhere; output goes to dist/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
py="${PYTHON:-$root/.venv/bin/python}"
"$py" -m pip install -q build
"$py" -m build --wheel --outdir dist .
if [ "${1:-}" = "--bundle" ]; then
  "$py" -m pip install -q pyinstaller
  "$py" -m PyInstaller --noconfirm --distpath dist --workpath build/pyinstaller packaging/attnviz.spec
  echo "bundle: dist/attnviz/ (set ATTNVIZ_ASSETS only to override the bundled assets folder)"
fi
echo "built: $(ls dist)"
