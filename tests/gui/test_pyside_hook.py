"""PySide6's per-module "uses PySide?" check, made on the raw file: the same answers, no cached source."""

from __future__ import annotations

import linecache
import sys

import pytest

import attnviz.gui.app  # noqa: F401 - installs the cheap check, as the app does
from attnviz.gui.pyside_hook import _feature_globals, cheap_check_installed, install_cheap_feature_check


@pytest.fixture
def scratch_modules(tmp_path, monkeypatch):
    (tmp_path / "h3_uses_qt.py").write_text("from PySide6.QtCore import QObject\nVALUE = 1\n", encoding="utf-8")
    (tmp_path / "h3_plain.py").write_text("VALUE = 2\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in ("h3_uses_qt", "h3_plain"):
        sys.modules.pop(name, None)


def test_the_app_installs_it_and_installing_again_changes_nothing():
    assert cheap_check_installed()
    check = _feature_globals()["_mod_uses_pyside"]
    assert install_cheap_feature_check()
    assert _feature_globals()["_mod_uses_pyside"] is check


def test_modules_get_the_answers_pyside_would_give_without_their_source_cached(scratch_modules):
    scope = _feature_globals()
    cheap, original = scope["_mod_uses_pyside"], scope["_mod_uses_pyside"].__wrapped__
    import h3_plain  # an import statement: PySide6's hook wraps __import__ (import_module bypasses it)
    import h3_uses_qt

    uses_qt, plain = h3_uses_qt, h3_plain
    # the import hook recorded them: 0 (a PySide user) and -1 (ignored), as PySide6's own check decides
    assert scope["pyside_feature_dict"]["h3_uses_qt"] == 0
    assert scope["pyside_feature_dict"]["h3_plain"] == -1
    assert str(scratch_modules / "h3_plain.py") not in linecache.cache  # nothing read through inspect
    for module in (uses_qt, plain):
        assert cheap(module) == original(module)


def test_a_module_without_a_source_file_gets_pysides_own_check():
    cheap = _feature_globals()["_mod_uses_pyside"]
    assert cheap(sys) is cheap.__wrapped__(sys) is False  # built in: no file at all
