"""Importing a package a step at a time gives the same package as an ordinary import, never shows a
half-built one, and fails as an ordinary import does. Preloading torch's libraries leaves torch working."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from attnviz.gui.startup.stepped_import import SteppedImport, import_plan


def _write_package(root, name: str, broken: bool = False) -> None:
    pkg = root / name
    (pkg / "sub").mkdir(parents=True)
    (pkg / "leaf.py").write_text("VALUE = 3\n", encoding="utf-8")
    (pkg / "middle.py").write_text("from .leaf import VALUE\nDOUBLE = 2 * VALUE\n", encoding="utf-8")
    (pkg / "sub" / "__init__.py").write_text("from ..middle import DOUBLE\nfrom . import deep\n", encoding="utf-8")
    (pkg / "sub" / "deep.py").write_text(
        "from .. import config\nSEEN = config()\n" + ("raise ValueError('broken module')\n" if broken else ""),
        encoding="utf-8")
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        import os
        def config():
            return "configured"
        from .middle import (
            DOUBLE,
        )
        from .sub import deep
        if False:
            from . import never  # a branch not taken: not part of the plan's unconditional imports
        TOTAL = DOUBLE + 1
    """), encoding="utf-8")


@pytest.fixture
def package(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    names = []

    def make(name, broken=False):
        _write_package(tmp_path, name, broken)
        names.append(name)
        return name

    yield make
    for name in names:
        for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
            del sys.modules[mod]


def test_a_plan_imports_leaves_first_one_module_per_step(package):
    name = package("steppkg_a")
    plan = import_plan(name)
    modules = [what for kind, what in plan if kind == "module"]
    assert modules == [f"{name}.leaf", f"{name}.middle", f"{name}.sub.deep", f"{name}.sub"]
    assert f"{name}.never" not in modules
    stepper = SteppedImport(name, plan)
    seen = []
    while stepper.step():
        seen.append(sorted(m for m in sys.modules if m.startswith(name + ".")))
    # the package arrives piece by piece: its first statements, then one module per step
    assert seen[:4] == [[], [], [f"{name}.leaf"], [f"{name}.leaf", f"{name}.middle"]]
    mod = sys.modules[name]
    assert mod.TOTAL == 7 and mod.deep.SEEN == "configured" and "__getattr__" not in vars(mod)
    assert not mod.__spec__._initializing


def test_asking_a_half_built_package_for_a_name_finishes_it(package):
    name = package("steppkg_b")
    stepper = SteppedImport(name, import_plan(name))
    stepper.step()
    assert sys.modules[name].TOTAL == 7  # not there yet: the rest of the import ran at once
    assert stepper.done


def test_a_failing_step_fails_like_an_ordinary_import(package):
    name = package("steppkg_c", broken=True)
    stepper = SteppedImport(name, import_plan(name))
    with pytest.raises(ValueError, match="broken module"):
        stepper.finish()
    assert name not in sys.modules


def test_preloaded_torch_libraries_leave_torch_working():
    code = ("from attnviz.gui.startup.native_preload import preload_torch_libraries\n"
            "loaded = preload_torch_libraries()\n"
            "import torch\n"
            "print(sorted(loaded), float(torch.ones(3).sum()))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    loaded, total = res.stdout.strip().rsplit(" ", 1)
    assert float(total) == 3.0
    if sys.platform.startswith("linux"):
        assert "libtorch_cpu.so" in loaded
