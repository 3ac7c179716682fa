"""pyqtgraph's Qt mirrors filled on demand (attnviz.gui.pyqtgraph_mirrors): the same objects, created later."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from attnviz.gui.pyqtgraph_mirrors import MIRRORS, lazy_mirrors_active

# a fresh interpreter: pyqtgraph imported through attnviz.gui, as the app does
_CHILD = r"""
import json, sys
import attnviz.gui
from PySide6 import QtCore
import pyqtgraph as pg
from attnviz.gui.pyqtgraph_mirrors import MIRRORS, lazy_mirrors_active
held = {name: len(vars(sys.modules[name])) for name in MIRRORS}
wanted = {name: len(dir(sys.modules[source])) for name, source in MIRRORS.items()}
# ask the mirror for a name pyqtgraph's import did not need: it must come back as PySide6's own
late = "QXmlStreamReader" in vars(pg.QtCore), pg.QtCore.QXmlStreamReader is QtCore.QXmlStreamReader
print(json.dumps({"active": lazy_mirrors_active(), "held": held, "wanted": wanted, "late": late}))
"""


def test_pyqtgraph_imports_without_creating_every_pyside_type():
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    out = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["active"]
    for name in MIRRORS:
        # the point of the module: most names are not copied (created) at import; the eager copy held them all
        assert report["held"][name] < report["wanted"][name] / 2, (name, report)
    assert report["late"] == [False, True]


@pytest.mark.parametrize("mirror", sorted(MIRRORS))
def test_every_name_resolves_to_pyside6s_own_object(mirror):
    import importlib

    import pyqtgraph  # noqa: F401 - the suite imports it through attnviz.gui (conftest)

    assert lazy_mirrors_active()
    module = sys.modules[mirror]
    source = importlib.import_module(MIRRORS[mirror])
    missing = [n for n in dir(source) if not n.startswith("__") and not hasattr(module, n)]
    assert missing == []
    # pyqtgraph's own shims stay as pyqtgraph set them (QOpenGLWidget in QtWidgets); the rest is PySide6's
    differ = [n for n in dir(source) if not n.startswith("__") and getattr(module, n) is not getattr(source, n)]
    assert differ == []
    assert set(dir(source)) <= set(dir(module))
    with pytest.raises(AttributeError, match="has no attribute 'NoSuchQtName'"):
        module.NoSuchQtName  # noqa: B018
