"""`make compat` reads the ranges pyproject.toml promises and installs each end of them (packaging/compat.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def compat():
    spec = importlib.util.spec_from_file_location("attnviz_compat", ROOT / "packaging" / "compat.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_checked_package_has_a_tested_lower_bound(compat):
    specs = compat.ranges()
    assert set(specs) == set(compat.CHECKED)
    low = compat.requirements("low", specs)
    high = compat.requirements("high", specs)
    for name in compat.CHECKED:
        assert low[name] == f"{name}=={compat.lower_bound(specs[name])}"
        assert high[name] == f"{name}{specs[name]}"  # pip picks the newest release the range admits
    assert compat.lower_bound(specs["torch"]) == "2.13"  # the oldest CPU build installable here


def test_a_range_without_a_lower_bound_is_refused(compat, tmp_path):
    with pytest.raises(SystemExit, match="no lower bound"):
        compat.lower_bound("<2")
    toml = tmp_path / "pyproject.toml"
    toml.write_text('[project]\nname = "x"\ndependencies = ["numpy>=1"]\n', encoding="utf-8")
    with pytest.raises(SystemExit, match="names no range"):
        compat.ranges(toml)


def test_a_run_that_passed_and_then_crashed_is_not_a_pass(compat):
    assert compat._summary("== 3 passed in 1.0s ==", 0) == "3 passed in 1.0s"
    assert compat._summary("== 3 passed in 1.0s ==", -11) == "3 passed in 1.0s, then killed by signal 11"
    assert compat._summary("Fatal Python error", -11) == "crashed (signal 11)"
    failed = compat._summary("FAILED tests/a.py::t - boom\n== 1 failed, 2 passed in 1s ==", 1)
    assert failed.splitlines() == ["1 failed, 2 passed in 1s", "      FAILED tests/a.py::t"]
