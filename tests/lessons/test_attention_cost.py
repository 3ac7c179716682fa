"""The T² slide: measured eager vs tiled attention cost, its claim and the claim's negative controls."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.lessons.claims import Workbench, evaluate_claim
from attnviz.lessons.lesson import load_lesson
from attnviz.runtime import attention_cost
from attnviz.runtime.attention_cost import growth_exponent


def _scene():
    return next(s for s in load_lesson("attention").scenes if s.claim["kind"] == "attention-cost")


def test_growth_exponent_recovers_known_powers():  # the claim's ruler, against exact powers
    t = np.array([256, 512, 1024, 2048])
    assert growth_exponent(t, 3.0 * t ** 2) == pytest.approx(2.0)
    assert growth_exponent(t, 5.0 * t) == pytest.approx(1.0)
    assert np.isnan(growth_exponent(t, [np.nan, np.nan, 1.0, np.nan]))


def test_the_claim_holds_as_measured_and_names_its_numbers():
    res = evaluate_claim(_scene(), Workbench())
    assert res.ok, res.line
    assert abs(res.values["eager_exp"] - 2) <= 0.3 and abs(res.values["tiled_exp"] - 1) <= 0.3
    assert res.values["eager_mb"] > 10 * res.values["tiled_mb"]  # T×T against T·d at the longest length
    assert "cores" in res.values["machine"] and "T^" in res.line


@pytest.mark.parametrize("swap", ["tiled-is-eager", "eager-is-tiled"])
def test_the_claim_fails_when_a_path_is_not_what_it_says(monkeypatch, swap):
    """Negative control: with the tiled path replaced by the eager one (or the reverse) the growth is wrong."""
    if swap == "tiled-is-eager":
        monkeypatch.setitem(attention_cost.PATHS, "tiled", attention_cost._eager)
    else:
        monkeypatch.setitem(attention_cost.PATHS, "eager", attention_cost._tiled)
    assert not evaluate_claim(_scene(), Workbench()).ok


def test_the_figure_exports_with_measured_points(tmp_path, capsys):
    from attnviz.cli import main

    out = tmp_path / "cost.png"
    assert main(["export", "--model", "charlm", "--text", "a b c", "--view", "attention-cost", "-o", str(out)]) == 0
    assert out.is_file() and out.stat().st_size > 0
