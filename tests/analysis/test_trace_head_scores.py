"""Head scores streamed over blocks of query rows equal the same scores on the whole map, and a plain-loop
recomputation; a streamer that loses the row offset, or a wrong normaliser, is caught; a long on-demand trace is
scored without its whole map ever being asked for."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis.head_scores import per_input_scores, row_scores
from attnviz.analysis.trace_head_scores import rows_per_block, stream_input_scores, token_ids
from attnviz.bench.on_demand_traces import on_demand_trace
from attnviz.bench.traces import sample_trace

NAMES = ("previous_token", "duplicate_token", "induction", "first_token", "entropy", "distance")


def _repeating(tr, period: int):
    tr.tokens = [f"t{i % period}" for i in range(len(tr.tokens))]  # repeats: duplicate-token and induction rows
    return tr


def _loops(P: np.ndarray, ids: np.ndarray) -> dict[str, np.ndarray]:
    """The module docstring's definitions, one row at a time in plain Python: (H,) per score."""
    H, T, _ = P.shape
    out = {n: np.zeros(H) for n in NAMES}
    for h in range(H):
        prev, first, ent, dist, dup, ind = [], [], [], [], [], []
        for i in range(T):
            row = P[h, i].astype(np.float64)
            ent.append(-sum(p * np.log(p) for p in row if p > 0))
            dist.append(sum(row[j] * abs(i - j) for j in range(T)))
            if i >= 1:
                prev.append(row[i - 1])
                first.append(row[0])
            same = [j for j in range(i) if ids[j] == ids[i]]
            if same:
                dup.append(sum(row[j] for j in same))
            after = [j for j in range(1, T) if j - 1 < i and ids[j - 1] == ids[i]]
            if after:
                ind.append(sum(row[j] for j in after))
        for name, vals in zip(NAMES, (prev, dup, ind, first, ent, dist)):
            out[name][h] = np.mean(vals)
    return out


def test_streamed_scores_equal_the_whole_map_and_a_plain_recomputation():
    tr = _repeating(on_demand_trace(61, n_layers=2, n_heads=4, n_kv_heads=2, allow_full=True, seed=3), 7)
    ids = token_ids(tr.tokens)
    for layer in range(2):
        P = tr.probs(layer)  # (H, T, T) whole: the reference
        whole = per_input_scores(P[None], np.ones((1, 61), bool), ids=ids)
        streamed = stream_input_scores(tr, layer, ids=ids, block_cells=4 * 61 * 5)  # 5 rows a block: 13 blocks
        loops = _loops(P, ids[0])
        for name in NAMES:
            np.testing.assert_allclose(streamed[name], whole[name], rtol=0, atol=1e-6, err_msg=name)
            np.testing.assert_allclose(streamed[name][0], loops[name], rtol=0, atol=1e-6, err_msg=name)


def test_cross_attention_and_encoder_parts_stream_too():
    tr = sample_trace("encoder-decoder", T=9, n_layers=2)
    for part in tr.parts:
        P = tr.probs(1, part)
        tq, tk = P.shape[1:]
        square = part != "cross"
        ids = token_ids(tr.query_tokens(part)) if square else None
        whole = per_input_scores(P[None], np.ones((1, tq), bool), None if square else np.ones((1, tk), bool), ids)
        streamed = stream_input_scores(tr, 1, part, ids=ids, block_cells=P.shape[0] * tk * 2)
        assert set(streamed) == set(whole)
        for name in whole:
            np.testing.assert_allclose(streamed[name], whole[name], rtol=0, atol=1e-6, err_msg=f"{part} {name}")


def test_a_streamer_that_loses_the_row_offset_is_caught():  # negative control of the block bookkeeping
    tr = on_demand_trace(40, n_layers=1, n_heads=2, allow_full=True)
    whole = per_input_scores(tr.probs(0)[None], np.ones((1, 40), bool))
    step = 8
    total, n = np.zeros((1, 2)), 0
    for r0 in range(0, 40, step):
        A = tr.probs(0, rows=slice(r0, r0 + step)).astype(np.float64)[None]
        values, eligible = row_scores(A, np.arange(step), np.ones((1, 40), bool))["previous_token"]  # offset lost
        total += (values * eligible[:, None]).sum(-1)
        n += eligible.sum()
    assert np.abs(total / n - whole["previous_token"]).max() > 1e-2


def test_a_wrong_normaliser_is_caught():  # negative control of the comparison itself
    tr = on_demand_trace(30, n_layers=1, n_heads=2, allow_full=True)
    P = tr.probs(0)
    right = per_input_scores(P[None], np.ones((1, 30), bool))
    wrong = per_input_scores((P * 1.01)[None], np.ones((1, 30), bool))  # rows summing to 1.01, not 1
    assert np.abs(wrong["entropy"] - right["entropy"]).max() > 1e-3


def test_a_long_trace_is_scored_block_by_block_never_whole():
    T = 4096
    tr = on_demand_trace(T, n_layers=1, n_heads=2, d_head=16)  # its whole map raises WholeMapAsked
    provider = tr.deferred["L0.probs"]
    sizes = []
    block = provider.block

    def counted(*args):
        out = block(*args)
        sizes.append(out.size)
        return out

    provider.block = counted
    s = stream_input_scores(tr, 0, ids=token_ids(tr.tokens))
    assert max(sizes) <= 2 * rows_per_block(2, T) * T  # O(block · T), not T × T
    assert max(sizes) < 2 * T * T // 8
    # the trace's heads are built to lean on the previous token (even) and the first token (odd): each head's
    # own score stands out against the other head's (the control)
    assert s["previous_token"][0, 0] > 10 * s["previous_token"][0, 1]
    assert s["first_token"][0, 1] > 10 * s["first_token"][0, 0]
    assert np.isnan(s["duplicate_token"]).all()  # every token distinct: no row has an earlier copy


def test_score_trace_of_a_long_on_demand_trace_streams():
    from attnviz.runtime.batch_scores import score_trace

    got = score_trace(on_demand_trace(3000, n_layers=1, n_heads=2, d_head=16))
    prev = got.scores["self"]["previous_token"][0]
    assert got.n_inputs == 1 and prev[0] > 10 * prev[1]
    assert got.patterns["self"].shape == (1, 2, 128, 128)  # the mean pattern's corner only
    with pytest.raises(Exception):  # control: the same trace refuses its whole map
        on_demand_trace(3000, n_layers=1, n_heads=2, d_head=8).probs(0)
