"""Import plans kept on disk: the same plan as one made from the source, made again after any edit or
when the stored file is damaged, and never a reason for start-up to fail. The start-up's collector hold."""

from __future__ import annotations

import gc
import os
import sys

import pytest

from attnviz.gui.startup import plan_cache
from attnviz.gui.gc_pause import gc_paused
from attnviz.gui.startup.plan_cache import cached_import_plan
from attnviz.gui.startup.stepped_import import SteppedImport, import_plan


def _write(root, name: str) -> None:
    pkg = root / name
    pkg.mkdir()
    (pkg / "leaf.py").write_text("VALUE = 3\n", encoding="utf-8")
    (pkg / "middle.py").write_text("from .leaf import VALUE\nDOUBLE = 2 * VALUE\n", encoding="utf-8")
    (pkg / "__init__.py").write_text("from .middle import DOUBLE\nTOTAL = DOUBLE + 1\n", encoding="utf-8")


@pytest.fixture
def package(tmp_path, monkeypatch):
    src = tmp_path / "src"
    src.mkdir()
    monkeypatch.syspath_prepend(str(src))
    names = []

    def make(name):
        _write(src, name)
        names.append(name)
        return src / name

    yield make
    for name in names:
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[mod]


def _same(a, b) -> bool:
    # code objects compare by their contents; steps as tuples
    return [(k, w if k == "module" else (w.co_code, w.co_consts)) for k, w in a] == \
        [(k, w if k == "module" else (w.co_code, w.co_consts)) for k, w in b]


def test_the_stored_plan_is_read_back_instead_of_the_source(package, tmp_path, monkeypatch):
    package("plancache_a")
    cache = tmp_path / "cache"
    first = cached_import_plan("plancache_a", folder=cache)
    assert _same(first, import_plan("plancache_a"))
    assert len(list(cache.glob("plancache_a-*.marshal"))) == 1

    def no_source(*_a, **_k):
        raise AssertionError("the source was read although the stored plan is valid")

    monkeypatch.setattr(plan_cache, "import_plan", no_source)
    again = cached_import_plan("plancache_a", folder=cache)
    assert _same(again, first)
    stepper = SteppedImport("plancache_a", again)  # the stored plan imports the package as the source's would
    stepper.finish()
    assert sys.modules["plancache_a"].TOTAL == 7
    assert "plancache_a.leaf" in sys.modules


def test_an_edited_source_makes_a_new_plan(package, tmp_path):
    pkg = package("plancache_b")
    cache = tmp_path / "cache"
    before = cached_import_plan("plancache_b", folder=cache)
    assert ("module", "plancache_b.extra") not in before
    (pkg / "extra.py").write_text("X = 1\n", encoding="utf-8")
    init = pkg / "__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "from .extra import X\n", encoding="utf-8")
    os.utime(init, ns=(init.stat().st_atime_ns, init.stat().st_mtime_ns + 10**9))  # even within one clock tick
    after = cached_import_plan("plancache_b", folder=cache)
    assert ("module", "plancache_b.extra") in after
    assert _same(after, import_plan("plancache_b"))


def test_a_damaged_or_foreign_file_is_made_again(package, tmp_path):
    package("plancache_c")
    cache = tmp_path / "cache"
    good = cached_import_plan("plancache_c", folder=cache)
    (stored,) = cache.glob("plancache_c-*.marshal")
    for junk in (b"\x00\x01not marshal", b"", __import__("marshal").dumps([("module", 3)])):
        stored.write_bytes(junk)
        assert _same(cached_import_plan("plancache_c", folder=cache), good)
        assert _same(__import__("marshal").loads(stored.read_bytes()), good)  # and the file is whole again


def test_a_cache_that_cannot_be_written_only_costs_time(package, tmp_path):
    package("plancache_d")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder", encoding="utf-8")
    plan = cached_import_plan("plancache_d", folder=blocker / "plans")
    assert _same(plan, import_plan("plancache_d"))


def test_old_plans_are_pruned_to_the_newest_few(package, tmp_path):
    package("plancache_e")
    cache = tmp_path / "cache"
    cache.mkdir()
    for i in range(plan_cache.KEEP + 3):
        old = cache / f"plancache_e-{i:032x}.marshal"
        old.write_bytes(b"old")
        os.utime(old, (1_000_000 + i, 1_000_000 + i))
    other = cache / "otherpkg-0.marshal"
    other.write_bytes(b"another package's plan")
    cached_import_plan("plancache_e", folder=cache)
    left = sorted(cache.glob("plancache_e-*.marshal"))
    assert len(left) == plan_cache.KEEP
    assert other.exists()


def test_an_imported_package_needs_no_plan(tmp_path):
    assert cached_import_plan("json", folder=tmp_path) == []
    assert not tmp_path.joinpath("json").exists() and not list(tmp_path.iterdir())


def test_a_paused_import_freezes_what_it_built_and_nested_pauses_hold():
    assert gc.isenabled()
    with gc_paused():
        with gc_paused():
            pass
        assert not gc.isenabled(), "the inner pause ended the outer one"
    assert gc.isenabled()
