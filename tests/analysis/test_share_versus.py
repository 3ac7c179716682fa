"""The rollout figure states the model's own held-out comparison of rollout and raw attention, in words that call
a gap within noise a tie (and a real gap a lead)."""

from __future__ import annotations

from attnviz.analysis.share_versus import rollout_verdict, versus


def test_a_gap_within_two_standard_errors_is_a_tie_and_a_larger_one_is_not():
    assert versus(0.992, 0.991, 1000) == "a tie within noise"
    assert versus(0.95, 0.80, 1000) == "rollout ahead"  # control: a real gap is named
    assert versus(0.70, 0.90, 1000) == "rollout behind"
    assert versus(0.95, 0.80, 10) == "a tie within noise"  # ten scenes cannot tell 15 points apart


def test_the_verdict_reads_the_models_stored_metrics():
    line = rollout_verdict({"offcentre_rollout": 0.992, "offcentre_raw": 0.991, "offcentre_n": 1000})
    assert line == ("held out (1,000 off-centre scenes): rollout peaks on the shape 99.2%, raw last-layer "
                    "attention 99.1%: a tie within noise")
    assert rollout_verdict({"accuracy": 0.99}) is None  # a model that measured no such thing says nothing


