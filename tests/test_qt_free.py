"""The core stays Qt-free: only attnviz/gui, attnviz/figures, attnviz/export and the GUI benchmarks may import Qt."""

import ast
import subprocess
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "attnviz"
QT = {"PySide6", "pyqtgraph", "superqt", "shiboken6"}
ALLOWED = {"gui", "figures", "export", "bench"}  # bench measures the GUI; nothing below it imports bench


def _qt_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        found += [n for n in names if n.split(".")[0] in QT]
    return found


def test_no_qt_imports_outside_gui_and_export():
    offenders = {}
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in ALLOWED:
            continue
        hits = _qt_imports(path)
        if hits:
            offenders[str(rel)] = hits
    assert not offenders, f"Qt imported outside attnviz/gui, figures and export: {offenders}"


def test_the_scanner_sees_a_qt_import(tmp_path):
    # guard against a scanner that can never fail
    f = tmp_path / "x.py"
    f.write_text("def f():\n    from PySide6.QtCore import QTimer\n    import pyqtgraph as pg\n")
    assert _qt_imports(f) == ["PySide6.QtCore", "pyqtgraph"]


def test_core_modules_import_without_loading_qt():
    code = (
        "import sys, attnviz.runtime, attnviz.capture, attnviz.models, attnviz.cli;"
        "import attnviz.analysis;"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'PySide6','pyqtgraph','superqt'});"
        "print(','.join(bad)); sys.exit(1 if bad else 0)"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, f"Qt loaded by core imports: {res.stdout} {res.stderr[-500:]}"
