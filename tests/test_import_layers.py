"""The layers declared in pyproject.toml hold: import-linter checks them, imports inside functions included."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _lint(config: Path, cwd: Path) -> subprocess.CompletedProcess:
    exe = Path(sys.executable).parent / "lint-imports"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([str(exe), "--config", str(config), "--no-cache"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_declared_layers_and_the_qt_rule_hold():
    res = _lint(ROOT / "pyproject.toml", ROOT)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]
    assert "3 kept, 0 broken" in res.stdout


def test_the_checker_sees_an_upward_import_inside_a_function(tmp_path):
    # guard against a contract that can never fail: a low layer importing a high one in a function body
    pkg = tmp_path / "layered"
    (pkg / "high").mkdir(parents=True)
    (pkg / "low").mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "high" / "__init__.py").write_text("from layered import low\n")
    (pkg / "low" / "__init__.py").write_text("def f():\n    from layered import high\n    return high\n")
    cfg = tmp_path / "contracts.toml"
    cfg.write_text(textwrap.dedent("""
        [tool.importlinter]
        root_package = "layered"

        [[tool.importlinter.contracts]]
        name = "high above low"
        type = "layers"
        layers = ["layered.high", "layered.low"]
    """))
    res = _lint(cfg, tmp_path)
    assert res.returncode != 0 and "layered.low is not allowed to import layered.high" in res.stdout


def _gui_contract() -> dict:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]["contracts"]
    (gui,) = [c for c in contracts if c["name"].startswith("Layers inside the GUI")]
    return gui


def _layer_modules(layers: list[str]) -> list[str]:
    return [name.strip() for layer in layers for name in layer.replace(":", "|").split("|")]


def test_every_module_of_the_gui_has_a_layer():
    # a new module directly under attnviz/gui that no layer names would escape the contract unseen
    named = set(_layer_modules(_gui_contract()["layers"]))
    gui = ROOT / "attnviz" / "gui"
    present = {f"attnviz.gui.{p.stem}" for p in gui.glob("*.py") if p.stem != "__init__"}
    present |= {f"attnviz.gui.{p.parent.name}" for p in gui.glob("*/__init__.py")}
    assert present - named == set(), "modules of attnviz/gui in no layer of the GUI contract"
    assert {m for m in named if m.startswith("attnviz.gui.")} - present == set(), "layers naming no module"


def _skeleton(root: Path, modules: list[str], upward: tuple[str, str] | None) -> None:
    """Empty packages named like the real ones (``attnviz.gui.views`` …), one upward import if asked."""
    for name in ["attnviz", "attnviz.gui", *modules]:
        d = root.joinpath(*name.split("."))
        d.mkdir(parents=True, exist_ok=True)
        (d / "__init__.py").write_text("")
    if upward:
        low, high = upward
        (root.joinpath(*low.split(".")) / "__init__.py").write_text(f"def f():\n    import {high}\n")


def _gui_contract_on_skeleton(tmp_path: Path, upward) -> subprocess.CompletedProcess:
    gui = _gui_contract()
    _skeleton(tmp_path, _layer_modules(gui["layers"]), upward)
    layers = ",\n".join(f'    "{layer}"' for layer in gui["layers"])
    cfg = tmp_path / "contracts.toml"
    cfg.write_text(f'[tool.importlinter]\nroot_package = "attnviz"\n\n[[tool.importlinter.contracts]]\n'
                   f'name = "gui"\ntype = "layers"\nlayers = [\n{layers}\n]\n')
    return _lint(cfg, tmp_path)


def test_the_gui_contract_fails_when_a_view_imports_a_panel(tmp_path):
    # the real contract's layers, on empty packages of the same names: a view importing a panel (the upward
    # import this contract was written to stop) breaks it; the same packages without that import keep it
    res = _gui_contract_on_skeleton(tmp_path / "up", ("attnviz.gui.views", "attnviz.gui.panels"))
    assert res.returncode != 0 and "attnviz.gui.views is not allowed to import attnviz.gui.panels" in res.stdout
    res = _gui_contract_on_skeleton(tmp_path / "down", ("attnviz.gui.panels", "attnviz.gui.views"))
    assert res.returncode == 0, res.stdout[-2000:]
