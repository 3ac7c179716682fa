"""The layers declared in pyproject.toml hold: import-linter checks them, imports inside functions included."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
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
    assert "2 kept, 0 broken" in res.stdout


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
