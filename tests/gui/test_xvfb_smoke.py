"""Smoke test on a real X server: the window opens, shows `shapes` and `coref`, and its screenshot is not blank.

Starts ``Xvfb`` itself (no xvfb-run) when the binary exists, runs the app in a child process on that
display (platform ``xcb``), grabs the window with ``QScreen.grabWindow`` after each model's first
attention map and checks the pictures: the window's size, and real content (many colours, the
viridis map of the head map among them). The screenshots stay in the test's tmp folder.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.xvfb

MODELS = ("shapes", "coref")
SCREEN = (1600, 1000)

_CHILD = r"""
import json, sys
from PySide6.QtCore import QTimer
from attnviz.gui.app import create_application
from attnviz.gui.window.main_window import MainWindow

out_dir, models = sys.argv[1], sys.argv[2].split(",")
app = create_application()
win = MainWindow(model=models[0])
win.resize(1400, 880)
report = {"shots": []}
todo = list(models)

def shoot(trace=None):
    if not win.views_area.views or win.trace is None or win.loaded.name != todo[0]:
        return
    name = todo.pop(0)
    win.views_area.repaint()
    app.processEvents()
    pix = win.screen().grabWindow(win.winId())
    path = f"{out_dir}/{name}.png"
    pix.save(path)
    report["shots"].append({"model": name, "path": path, "width": pix.width(), "height": pix.height(),
                            "dpr": pix.devicePixelRatio(), "window": [win.width(), win.height()],
                            "tokens": len(win.trace.tokens), "kind": win.trace.kind})
    if todo:
        win.load_model(todo[0])
    else:
        print("SMOKE " + json.dumps(report), flush=True)
        win.close()

win.trace_shown.connect(shoot)
win.views_ready.connect(shoot)
win.notice_shown.connect(lambda text, level: report.setdefault("notices", []).append([level, text]))
QTimer.singleShot(120000, app.quit)  # never hang the test run
win.show()
sys.exit(app.exec())
"""


def _free_display() -> int:
    for n in range(150, 400):
        if not Path(f"/tmp/.X11-unix/X{n}").exists() and not Path(f"/tmp/.X{n}-lock").exists():
            return n
    pytest.skip("no free X display number")


@pytest.fixture
def xvfb_display():
    binary = shutil.which("Xvfb")
    if binary is None:
        pytest.skip("Xvfb is not installed (apt-get install xvfb): the real-window smoke test needs it")
    n = _free_display()
    proc = subprocess.Popen([binary, f":{n}", "-screen", "0", f"{SCREEN[0]}x{SCREEN[1]}x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 10
    while not Path(f"/tmp/.X11-unix/X{n}").exists():
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            pytest.skip("Xvfb did not start")
        time.sleep(0.1)
    yield f":{n}"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def _viridis_pixels(img: np.ndarray) -> int:
    """How many pixels are close to a colour of the viridis map (the head map is drawn with it)."""
    import pyqtgraph as pg

    lut = pg.colormap.get("viridis").getLookupTable(0.0, 1.0, 32)[:, :3].astype(np.int16)  # (32, 3)
    px = img[::2, ::2, :3].reshape(-1, 1, 3).astype(np.int16)  # subsampled (N, 1, 3)
    near = (np.abs(px - lut[None]).sum(-1) < 24).any(-1)
    return int(near.sum())


def test_real_window_shows_shapes_and_coref(xvfb_display, tmp_path):
    from attnviz.io import bundled_models

    missing = [m for m in MODELS if m not in bundled_models()]
    if missing:
        pytest.skip(f"bundled model(s) {', '.join(missing)} not installed yet (make assets)")
    env = dict(os.environ, DISPLAY=xvfb_display, QT_QPA_PLATFORM="xcb",
               ATTNVIZ_SETTINGS=str(tmp_path / "settings.ini"))
    env.pop("ATTNVIZ_ASSETS", None)
    res = subprocess.run([sys.executable, "-c", _CHILD, str(tmp_path), ",".join(MODELS)], env=env,
                         capture_output=True, text=True, timeout=180)
    line = next((ln for ln in res.stdout.splitlines() if ln.startswith("SMOKE ")), None)
    assert line is not None, f"the app did not finish (exit {res.returncode}): {res.stderr[-1500:]}"
    report = json.loads(line[len("SMOKE "):])
    assert [s["model"] for s in report["shots"]] == list(MODELS)
    assert not [n for n in report.get("notices", []) if n[0] == "error"]
    from PIL import Image

    for shot in report["shots"]:
        img = np.asarray(Image.open(shot["path"]).convert("RGB"))
        w, h = shot["window"]
        assert (img.shape[1], img.shape[0]) == (round(w * shot["dpr"]), round(h * shot["dpr"]))
        assert (w, h) == (1400, 880)
        colours = len(np.unique(img.reshape(-1, 3)[::7], axis=0))
        assert img.std() > 20 and colours > 200, f"{shot['model']}: the screenshot looks blank"
        assert _viridis_pixels(img) > 2000, f"{shot['model']}: no attention map in the screenshot"
    kinds = {s["model"]: s["kind"] for s in report["shots"]}
    assert kinds == {"shapes": "vit", "coref": "encoder"}
