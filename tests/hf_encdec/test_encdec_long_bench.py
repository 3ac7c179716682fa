"""The encoder–decoder rows of ``bench --only long`` run and print ratios (figures are never asserted: this only
checks that each family and length gives its ratio rows, on the on-demand path)."""

from __future__ import annotations

import math

import pytest


def test_rows_for_each_family_and_length(monkeypatch):
    pytest.importorskip("transformers")
    import attnviz.bench.encdec_long as bench
    import attnviz.hf.encdec_capture as cap

    monkeypatch.setattr(cap, "ON_DEMAND_T", 8)  # the tiny length here goes the long inputs' way
    rows = bench.measure_encdec_long(repeat=1, lengths=(16,), families=("t5", "bart"))
    for family in ("t5", "bart"):
        ratios = [v for k, v in rows.items() if k.startswith(f"encdec long: {family} source T=16") and "/" in k]
        assert len(ratios) == 2 and all(math.isfinite(r) and r > 0 for r in ratios)
