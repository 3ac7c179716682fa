"""Every number in the attention lesson's captions says what it measures (issue 36, audit a37).

Scene 17 said "fastest call 80 ms vs 19 ms" with neither the length T nor which path was which; scene 11 ended
"with positions: 0.46" with no word of what 0.46 is (max |P(RX) − R·P·Rᵀ| on the model with positions). Read from
the lesson as shipped, filled with made-up values: the words around each number."""

from __future__ import annotations

import re

from attnviz.lessons.caption import fill_caption
from attnviz.lessons.lesson import load_lesson


def _caption(view: str) -> str:
    return next(s.caption for s in load_lesson("attention").scenes if s.view == view)


def _filled(template: str, values: dict) -> str:
    names = set(re.findall(r"\{([A-Za-z_]\w*)", template))
    return fill_caption(template, {n: values.get(n, 7.0) for n in names})


def test_the_cost_scene_names_the_length_and_each_path():
    text = _filled(_caption("attention-cost"), {"t_max": 2048, "eager_ms": 80.0, "tiled_ms": 19.0})
    assert "at T = 2,048: eager 80 ms, tiled 19 ms" in text, text
    assert "80 ms vs 19 ms" not in text  # the old wording


def test_the_permutation_scene_names_what_with_positions_measures():
    text = _filled(_caption("permutation"), {"with_positions": 0.46})
    assert "with positions: max |P(RX) − R·P·Rᵀ| 0.46" in text, text


def test_control_a_caption_without_the_words_is_caught():
    """Control: the old scene-17 wording fails the check above."""
    old = "fastest call {eager_ms:,.0f} ms vs {tiled_ms:,.0f} ms."
    assert "eager 80 ms" not in _filled(old, {"eager_ms": 80.0, "tiled_ms": 19.0})
