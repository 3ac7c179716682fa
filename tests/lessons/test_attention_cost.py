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
    assert "cores" in res.values["machine"] and "(≈ T²)" in res.line and "^" not in res.line


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


# -- the claim on injected measurements (no machine in the loop: the points are given, nothing is timed) --------

T = [256, 512, 1024, 2048]


def _fake(eager_bytes, tiled_bytes, machine="test-cpu, 2 cores"):
    """A measurement as measure_attention_cost returns it, with made-up points (time is never judged)."""
    return attention_cost.AttentionCost(list(T), 4, 16, {"eager": [1.0, 2.0, 3.0, 4.0], "tiled": [1.0] * 4},
                                        {"eager": [float(b) for b in eager_bytes],
                                         "tiled": [float(b) for b in tiled_bytes]}, machine)


def _inject(monkeypatch, cost):
    """Every measurement of this test returns ``cost``; the shared points start empty."""
    monkeypatch.setattr(attention_cost, "measure_attention_cost", lambda *a, **k: cost)
    monkeypatch.setattr(attention_cost, "_SHARED", {"key": None, "cost": None})


def test_judge_cost_on_injected_points():
    from attnviz.lessons.claims_cost import judge_cost

    t = np.array(T, float)
    held = judge_cost(_fake(40 * t ** 2, 3000 * t), model="charlm")
    assert held.ok and held.values["eager_exp"] == pytest.approx(2) and held.values["tiled_exp"] == pytest.approx(1)
    assert held.values["eager_mb"] == pytest.approx(40 * 2048 ** 2 / 1e6)  # the longest length's own point
    assert "charlm" in held.line and "test-cpu" in held.line
    # `lesson check` prints this line: the caption's words, not "grows as T^2.00" (issue 36)
    assert "grows with T to the power 2.00 (≈ T²)" in held.line and "(SDPA) to the power 1.00 (≈ T)" in held.line
    assert "^" not in held.line
    # negative controls: eager memory growing linearly (a path that never built T×T) fails, and so does a
    # tiled path that grows like T²
    assert not judge_cost(_fake(40 * t, 3000 * t)).ok
    assert not judge_cost(_fake(40 * t ** 2, 3000 * t ** 2)).ok


def test_the_scene_caption_names_model_machine_and_the_injected_points(monkeypatch):
    from attnviz.lessons.claims import format_caption

    t = np.array(T, float)
    _inject(monkeypatch, _fake(40 * t ** 2, 3000 * t, machine="a test machine"))
    res = evaluate_claim(_scene(), Workbench())
    assert res.ok, res.line
    caption = format_caption(_scene().caption, res)
    assert "charlm" in caption and "4 heads × 16" in caption and "a test machine" in caption
    # the fitted exponents as a lecturer reads them (issue 36: "T^2.00" printed its caret on the slide)
    assert "to the power 2.00 (≈ T²)" in caption and "to the power 1.00 (≈ T)" in caption and "^" not in caption and f"{40 * 2048 ** 2 / 1e6:.0f} MB" in caption
    # the control: the same scene with linearly growing eager memory is refused
    _inject(monkeypatch, _fake(40 * t, 3000 * t))
    assert not evaluate_claim(_scene(), Workbench()).ok


def test_figure_and_caption_share_one_measurement(monkeypatch):
    """The scene's figure and its caption read the same points (they differed by ~10 % of the time when each
    measured); the Measure button (fresh) and another path measure again."""
    calls = []
    monkeypatch.setattr(attention_cost, "measure_attention_cost", lambda *a, **k: calls.append(a) or object())
    monkeypatch.setattr(attention_cost, "_SHARED", {"key": None, "cost": None})
    first = attention_cost.shared_attention_cost(4, 16)
    assert attention_cost.shared_attention_cost(4, 16) is first and len(calls) == 1
    assert attention_cost.shared_attention_cost(4, 16, fresh=True) is not first and len(calls) == 2
    attention_cost.shared_attention_cost(8, 16)  # another shape
    monkeypatch.setitem(attention_cost.PATHS, "tiled", attention_cost._eager)
    attention_cost.shared_attention_cost(8, 16)  # another path
    assert len(calls) == 4


@pytest.mark.parametrize("suffix", ["png", "pdf"])
def test_the_figure_exports_the_injected_points(tmp_path, monkeypatch, suffix):
    from attnviz.cli import main

    t = np.array(T, float)
    _inject(monkeypatch, _fake(40 * t ** 2, 3000 * t))
    out = tmp_path / f"cost.{suffix}"
    assert main(["export", "--model", "charlm", "--text", "a b c", "--view", "attention-cost", "-o", str(out)]) == 0
    head = out.read_bytes()[:8]
    assert head.startswith(b"%PDF") if suffix == "pdf" else head == b"\x89PNG\r\n\x1a\n"


def test_growth_words_keep_the_measured_exponent_and_name_only_a_power_it_is_near():
    from attnviz.lessons.claims_cost import growth_words, power_of_t

    assert [power_of_t(k) for k in (0, 1, 2, 3, 12)] == ["1", "T", "T²", "T³", "T¹²"]
    assert growth_words(1.98) == "to the power 1.98 (≈ T²)"
    assert growth_words(1.04) == "to the power 1.04 (≈ T)"
    # control: halfway between powers is not rounded to one of them
    assert growth_words(1.5) == "to the power 1.50, between T and T²"
    assert growth_words(float("nan")).startswith("not measured")


def test_the_negative_control_is_stated_and_refuses_a_test_that_cannot_tell_the_paths_apart(monkeypatch):
    """Issue 34: the control a user sees. The same test with the two paths' points swapped must fail; with a
    tolerance that lets the swapped test hold too (paths that grow alike), the claim is refused; `lesson check`'s line and
    the caption say which."""
    from attnviz.lessons.claims import format_caption
    from attnviz.lessons.claims_cost import judge_cost

    t = np.array(T, float)
    held = judge_cost(_fake(40 * t ** 2, 3000 * t))
    assert held.ok and held.values["control"] == "fails, as it must"
    assert held.line.endswith("control: the same test with the two paths swapped fails, as it must")
    # both paths growing alike (T^1.5): with tolerance 0.55 each is within it of its target, and so is the swap
    alike = judge_cost(_fake(40 * t ** 1.5, 3000 * t ** 1.5), tolerance=0.55)
    assert not alike.ok and "also holds: the test cannot tell them apart" in alike.line
    assert judge_cost(_fake(40 * t ** 1.6, 3000 * t ** 1.4), tolerance=0.55).ok  # apart, if little: the swap fails
    _inject(monkeypatch, _fake(40 * t ** 2, 3000 * t, machine="a test machine"))
    caption = format_caption(_scene().caption, evaluate_claim(_scene(), Workbench()))
    assert "Control: the same test with the two paths swapped fails, as it must." in caption
