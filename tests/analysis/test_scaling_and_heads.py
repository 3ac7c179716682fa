"""The numbers behind the √d_k and many-heads figures, against direct recomputation; both figures export."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis.head_diversity import head_tv, layer_diversity, pairwise_tv
from attnviz.analysis.scaling import random_spread, scale_reason, softmax_stats

TIRED = "The animal didn't cross the street because it was too tired"


def test_random_spread_grows_like_sqrt_dk():
    s = random_spread((4, 64, 256), n=20000, seed=1)
    for d, (raw, scaled) in s.items():
        assert raw == pytest.approx(np.sqrt(d), rel=0.05) and scaled == pytest.approx(1.0, rel=0.05)


def test_softmax_stats_equal_the_explicit_jacobian():
    rng = np.random.default_rng(2)
    scores = rng.normal(size=(5, 7)) * 3
    valid = np.ones_like(scores, bool)
    valid[:, -2:] = False
    top, grad = softmax_stats(scores, valid)
    tops, norms = [], []
    for row, keep in zip(scores, valid):
        p = np.exp(row[keep] - row[keep].max())
        p /= p.sum()
        tops.append(p.max())
        norms.append(np.linalg.norm(np.diag(p) - np.outer(p, p)))
    assert top == pytest.approx(np.mean(tops)) and grad == pytest.approx(np.mean(norms))


def test_random_rows_in_blocks_equal_one_whole_draw(monkeypatch):
    """The random keys are drawn a block of rows at a time (memory); the numbers are those of one whole draw,
    recomputed here independently (control: another seed differs)."""
    from attnviz.analysis import scaling

    monkeypatch.setattr(scaling, "_RANDOM_BLOCK_CELLS", 7 * 16 * 5)  # 5 rows a block: blocks and a remainder
    d_k, T, n = 16, 7, 23
    rng = np.random.default_rng(3)
    q, k = rng.standard_normal((n, d_k)), rng.standard_normal((n, T, d_k))
    dots = np.einsum("nd,ntd->nt", q, k)
    want = {"scaled": softmax_stats(dots / 4.0), "raw": softmax_stats(dots)}
    assert scaling.random_rows(d_k, T, n=n, seed=3) == want
    assert scaling.random_rows(d_k, T, n=n, seed=4) != want


def test_scale_reason_states_its_length_limit(monkeypatch):
    """Beyond MAX_KEYS keys the figure is refused in one line (not gigabytes of T × T float64); control: the
    same trace under the limit is drawn."""
    from attnviz.analysis import scaling
    from attnviz.errors import AttnvizError
    from attnviz.runtime import load_model, run_trace

    trace = run_trace(load_model("coref", device="cpu"), text=TIRED, rollout=False)
    assert scale_reason(trace, 0, 3, n=40)["keys"] == len(trace.tokens)
    monkeypatch.setattr(scaling, "MAX_KEYS", len(trace.tokens) - 1)
    with pytest.raises(AttnvizError, match="shorten the input"):
        scale_reason(trace, 0, 3, n=40)


def test_head_tv_by_hand():
    a = np.array([[1.0, 0.0], [0.5, 0.5]])
    b = np.array([[0.0, 1.0], [0.5, 0.5]])
    P = np.stack([a, b, a])  # (H=3, T=2, T=2)
    tv = pairwise_tv(P)
    assert tv[0, 1] == pytest.approx(0.5) and tv[0, 2] == 0  # rows: TV 1 and 0, mean 0.5
    assert head_tv(P) == pytest.approx((0.5 + 0 + 0.5) * 2 / 6)
    assert layer_diversity([(P[None], None), (np.stack([a, a, a])[None], None)]) == pytest.approx(head_tv(P) / 2)


def test_scale_reason_uses_the_heads_own_scores():
    from attnviz.runtime import load_model, run_trace

    trace = run_trace(load_model("coref", device="cpu"), text=TIRED, rollout=False)
    d = scale_reason(trace, 0, 3, n=400)
    logits = np.asarray(trace["L0.logits"], np.float64)[3]  # q·k × scale, as the model computed it
    assert d["head_spread_scaled"] == pytest.approx(logits.std(), rel=1e-5)
    assert d["head_top_scaled"] == pytest.approx(np.asarray(trace["L0.probs"])[3].max(-1).mean(), rel=1e-5)
    assert d["d_k"] == trace.meta["d_head"] and d["keys"] == len(trace.tokens)


@pytest.mark.parametrize("args", [["--model", "induction", "--text", "dragonflydragonfly", "--view", "many-heads"],
                                  ["--model", "coref", "--text", TIRED, "--view", "matrix-z"],
                                  ["--model", "coref", "--text", TIRED, "--view", "scale-reason"]])
def test_the_new_figures_export(args, tmp_path):
    from PySide6.QtGui import QImage

    from attnviz.cli import main

    out = tmp_path / "f.png"
    assert main(["export", *args, "-o", str(out)]) == 0
    img = QImage(str(out))
    assert img.width() == 1920 and len({img.pixel(x, y) for x in range(0, 1920, 40) for y in range(0, 1080, 40)}) > 8
