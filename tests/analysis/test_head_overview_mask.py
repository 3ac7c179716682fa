"""The long input's pooled mask (analysis.head_overview.pooled_mask, shared by the All heads grid's thumbnails and
its page-by-page overviews): a mask computed on demand, read a row block at a time, gives the blocks a whole mask
gives; a trace without a mask gives None."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis.block_pool import block_all
from attnviz.analysis.head_overview import pooled_mask
from attnviz.bench.on_demand_traces import capture_format_trace, on_demand_trace


@pytest.mark.parametrize("kr, kc, step", [(10, 10, 30), (7, 4, 7), (1, 1, 64)])
def test_blocks_read_row_by_row_equal_the_whole_mask(kr, kc, step):
    trace = capture_format_trace(300, n_heads=1, d_head=8)
    assert hasattr(trace.deferred["L0.mask"], "block")  # the on-demand path, not a whole array
    got = pooled_mask(trace, "self", kr, kc, step)
    want = block_all(np.isneginf(trace["L0.mask"]), kr, kc)
    np.testing.assert_array_equal(got, want)
    # the control: a causal mask's blocks are neither all masked nor none (the comparison can fail)
    assert 0 < got.sum() < got.size
    # a block straddling the diagonal is not wholly masked: one cell of the row block it spans is seen
    assert not got[0, 0]


def test_no_mask_gives_none():
    assert pooled_mask(on_demand_trace(50, n_layers=1, n_heads=1, d_head=4), "self", 5, 5, 10) is None
