"""Start-up order: torch is imported only after pyqtgraph and the views are, for every first model.

Importing torch on a worker while the GUI thread imported pyqtgraph crashed PySide6 6.11 (a segfault in its
attribute lookup while a view painted, in 4-6 of 6 runs; 0 of 8 with torch held back). The window now holds
the first model's load until its views are installed, with or without a stored opening trace. Checked in a
fresh interpreter, where the window's start-up is the first to import pyqtgraph, torch and the views.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_CHILD = r"""
import json, sys
from PySide6.QtCore import QTimer
from attnviz.gui.app import create_application
from attnviz.gui.window.main_window import MainWindow

app = create_application()
win = MainWindow(model=sys.argv[1], autostart=False)
seen = {"torch_before_start": "torch" in sys.modules, "pyqtgraph_before_start": "pyqtgraph" in sys.modules}
win.views_ready.connect(lambda: seen.setdefault("torch_at_views_ready", "torch" in sys.modules))
def shown(trace):
    seen["live"] = win.loaded is not None
    seen["torch_at_live_map"] = "torch" in sys.modules
    if win.loaded is not None:
        app.quit()
win.trace_shown.connect(shown)
QTimer.singleShot(120000, app.quit)
win.show()
win.start()
app.exec()
print("ORDER " + json.dumps(seen), flush=True)
win.close()
"""


@pytest.mark.parametrize("model", ["tiny-encoder", "tiny-decoder"])
def test_torch_waits_for_the_views_when_there_is_no_stored_opening_trace(model, assets, tmp_path):
    from attnviz.runtime.opening import OPENING_FILE

    assert not (assets / "models" / model / OPENING_FILE).exists()  # the tiny models have none
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", ATTNVIZ_ASSETS=str(assets),
               ATTNVIZ_SETTINGS=str(tmp_path / "settings.ini"))
    out = subprocess.run([sys.executable, "-c", _CHILD, model], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    line = next(x for x in out.stdout.splitlines() if x.startswith("ORDER "))
    seen = json.loads(line.split(" ", 1)[1])
    assert seen["torch_before_start"] is False and seen["pyqtgraph_before_start"] is False
    assert seen["torch_at_views_ready"] is False  # the views were installed before torch was asked for
    assert seen["live"] is True and seen["torch_at_live_map"] is True  # and the live model did come
