"""What the window imports for its views (and to draw the stored opening trace) needs no torch: that work
runs on the torch-free views lane while torch still loads, so the first map does not wait for it."""

from __future__ import annotations

import subprocess
import sys


def test_view_dependencies_and_the_opening_trace_load_without_torch():
    from attnviz.gui.startup.import_plans import VIEW_DEPENDENCIES

    code = ("import importlib, sys\n"
            f"for name in {list(VIEW_DEPENDENCIES)!r}: importlib.import_module(name)\n"
            "import attnviz.runtime.opening, attnviz.capture.trace\n"
            "print('torch' in sys.modules)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr[-2000:]
    assert res.stdout.strip() == "False"
