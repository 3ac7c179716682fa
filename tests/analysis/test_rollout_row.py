"""A rollout row streamed over row blocks equals the row of the full rollout; at 16,384 tokens it never
asks for a whole map."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis.rollout import compute_rollout
from attnviz.analysis.rollout_row import rollout_row
from attnviz.bench.on_demand_traces import on_demand_trace
from attnviz.bench.traces import sample_trace
from attnviz.errors import InputError


@pytest.mark.parametrize("kind", ["encoder", "decoder"])
@pytest.mark.parametrize("fusion, residual, start", [("mean", 0.5, 0), ("max", 0.3, 1), ("min", 0.0, 0)])
def test_the_streamed_row_is_the_full_rollouts_row(kind, fusion, residual, start):
    tr = sample_trace(kind, T=23, n_layers=3)
    full = compute_rollout(tr, fusion=fusion, residual=residual, start_layer=start)
    for q in (0, 7, 22):
        got = rollout_row(tr, q, fusion=fusion, residual=residual, start_layer=start, chunk_rows=4)
        np.testing.assert_allclose(got, full[q], atol=1e-12)


def test_a_wrong_layer_order_is_caught():  # negative control: multiplying bottom-up gives another row
    tr = sample_trace("encoder", T=12, n_layers=3)
    reversed_layers = [tr.probs(i) for i in reversed(range(3))]
    wrong = compute_rollout(reversed_layers)
    assert np.abs(rollout_row(tr, 5) - wrong[5]).max() > 1e-3


def test_a_long_rollout_row_reads_blocks_only():
    tr = on_demand_trace(16_384, n_layers=2, n_heads=1, d_head=8)  # the whole map raises
    row = rollout_row(tr, 300, chunk_rows=512)  # causal: rows past 300 are never asked for
    assert row.shape == (16_384,) and row.sum() == pytest.approx(1.0) and not row[301:].any()
    with pytest.raises(InputError, match="discard"):
        rollout_row(tr, 300, discard=0.1)


# head scores of a long on-demand trace stream now (tests/analysis/test_trace_head_scores.py)
