"""The decode benchmark's measuring code runs (figures are printed, never asserted)."""

from __future__ import annotations


def test_decode_bench_runs_and_both_ways_agree():
    from attnviz.bench.decode import measure_decode, measure_model_keystroke

    out = measure_decode("reverse", n=1, batch=4)
    assert out["reverse outputs differing cached vs full"] == 0  # the same tokens: a check, not a timing
    assert out["reverse one input cached cpu ms"] > 0 and out["reverse batch of 4 full ms"] > 0
    assert out["reverse output tokens per example (median)"] >= 2  # [BOS] … [EOS]
    out = measure_model_keystroke("charlm", "the cat", n=1)
    assert set(out) == {"keystroke model run [charlm@7] ms", "keystroke model run [charlm@7] cpu ms"}


def test_decode_is_a_bench_section():
    from attnviz.commands.bench import _SECTION_RUNNERS, SECTIONS

    assert "decode" in SECTIONS and "decode" in _SECTION_RUNNERS
