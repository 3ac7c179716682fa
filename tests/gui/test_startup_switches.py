"""Each start-up mechanism is switched off by ATTNVIZ_STARTUP_<NAME>=0 and then really does nothing; the
``bench --only startup`` section launches the app with a mechanism on and off and prints the pair."""

from __future__ import annotations

import gc
import sys

import pytest

from attnviz.gui.startup import prefetch as startup_prefetch
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


def test_hold_gc_off_leaves_the_collector_running(monkeypatch):
    monkeypatch.setenv(env_name("hold_gc"), "0")
    startup_prefetch.hold_gc_for_startup()
    try:
        assert gc.isenabled()
    finally:
        startup_prefetch.release_startup_gc()
    monkeypatch.delenv(env_name("hold_gc"))
    startup_prefetch.hold_gc_for_startup()
    try:
        assert not gc.isenabled()
    finally:
        startup_prefetch.release_startup_gc()
    assert gc.isenabled()


def test_prefetch_off_starts_no_thread(monkeypatch):
    started = []
    monkeypatch.setattr(startup_prefetch, "prefetch", lambda key, *_a: started.append(key))
    monkeypatch.setenv(env_name("prefetch"), "0")
    startup_prefetch.prefetch_startup_imports()
    assert started == []
    monkeypatch.delenv(env_name("prefetch"))
    startup_prefetch.prefetch_startup_imports()
    assert started == ["pyqtgraph", "view-dependencies", "views"]


@pytest.mark.slow
def test_the_bench_section_prints_an_on_off_pair_per_mechanism():
    from attnviz.bench.startup_switches import measure_startup_switches

    out = measure_startup_switches(1, mechanisms=("hold_gc",))
    assert out["launch pairs per mechanism"] == 1
    for label in ("all on", "hold_gc off"):
        figure = out[f"{label}: first map ms, median (range)"]
        assert float(figure.split()[0]) > 0
    gain = out["hold_gc gain: off - on per pair, median (range), ms"]
    assert gain.startswith("first map ") and "start-up stall" in gain and "stall until live" in gain
    assert "load 1 min" in " ".join(out)


@pytest.mark.parametrize("off", [True, False])
def test_native_preload_off_imports_torch_the_ordinary_way(off, monkeypatch):
    from attnviz.gui import heavy_imports
    from attnviz.gui.startup import native_preload

    calls = []
    monkeypatch.setattr(native_preload, "preload_torch_libraries", lambda: calls.append("preload") or [])
    monkeypatch.setattr(heavy_imports, "_torch_ready", False)
    if off:
        monkeypatch.setenv(env_name("native_preload"), "0")
    heavy_imports.ensure_torch()
    assert calls == ([] if off else ["preload"])
