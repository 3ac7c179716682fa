"""Each start-up mechanism is switched off by ATTNVIZ_STARTUP_<NAME>=0 and then really does nothing; the
``bench --only startup`` section launches the app with a mechanism on and off and prints the pair."""

from __future__ import annotations

import gc
import sys

import pytest

from attnviz.gui.startup.plan_cache import cached_import_plan
from attnviz.gui.startup.switches import MECHANISMS, enabled, env_name


def test_one_naming_scheme_and_unknown_names_are_refused(monkeypatch):
    for name in MECHANISMS:
        assert env_name(name) == "ATTNVIZ_STARTUP_" + name.upper()
        monkeypatch.delenv(env_name(name), raising=False)
        assert enabled(name)
        for off in ("0", "off", "No", "false "):
            monkeypatch.setenv(env_name(name), off)
            assert not enabled(name)
        monkeypatch.setenv(env_name(name), "1")
        assert enabled(name)
    with pytest.raises(KeyError):
        enabled("no_such_mechanism")


def test_plan_cache_off_stores_and_reads_nothing(tmp_path, monkeypatch):
    pkg = tmp_path / "src" / "switchpkg_a"
    pkg.mkdir(parents=True)
    (pkg / "leaf.py").write_text("VALUE = 3\n", encoding="utf-8")
    (pkg / "__init__.py").write_text("from .leaf import VALUE\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    monkeypatch.setenv(env_name("plan_cache"), "0")
    plan = cached_import_plan("switchpkg_a", folder=tmp_path / "cache")
    assert ("module", "switchpkg_a.leaf") in plan  # still a plan, made from the source
    assert not (tmp_path / "cache").exists()
    monkeypatch.delenv(env_name("plan_cache"))
    cached_import_plan("switchpkg_a", folder=tmp_path / "cache")
    assert len(list((tmp_path / "cache").glob("switchpkg_a-*.marshal"))) == 1  # the negative control
    sys.modules.pop("switchpkg_a", None)
