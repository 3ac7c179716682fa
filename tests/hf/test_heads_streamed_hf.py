"""``attnviz heads`` on a Hugging Face decoder scores from q, k and each row's log-sum-exp: the capture per input
keeps no (H, T, T) map and no walkthrough arrays, the scores are streamed over row blocks and equal the same
scores on the model's own eager probabilities."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.analysis.head_scores import per_input_scores
from attnviz.analysis.trace_head_scores import token_ids

from .factories import make_model

TEXT = "the cat sat on the mat and the dog sat on the cat " * 12


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("scan")
    return {"llama": make_model("llama", root / "llama", seed=4, max_pos=512),
            "gemma2": make_model("gemma2", root / "gemma2", seed=5)}  # sliding window and soft-cap


@pytest.mark.parametrize("family", ["llama", "gemma2"])
def test_scan_scores_equal_the_eager_full_map_scores(folders, family, monkeypatch):
    from attnviz.capture import on_demand
    from attnviz.hf.loader import load_hf_model
    from attnviz.runtime import run_trace
    from attnviz.runtime.batch_scores import score_heads_by_trace

    loaded = load_hf_model(folders[family], device="cpu")
    eager = run_trace(loaded, text=TEXT, truncate=True, precision="float32", rollout=False)
    scan = run_trace(loaded, text=TEXT, truncate=True, precision="float32", rollout=False, layers=[],
                     attention="on_demand")
    T = len(scan.tokens)
    assert T > 40 and scan.tokens == eager.tokens
    kept = [k for k in scan.arrays if k.startswith("L")]
    assert kept and all(k.rsplit(".", 1)[1] in ("q", "k", "lse") or ".score_" in k for k in kept), kept
    ids = token_ids(scan.tokens)

    def whole_map_asked(self):
        raise AssertionError("a whole map was asked for")

    monkeypatch.setattr(on_demand.OnDemandProbs, "full", whole_map_asked)
    got = score_heads_by_trace(loaded, [TEXT])
    monkeypatch.undo()
    for layer in range(scan.n_layers):
        ref_same = per_input_scores(scan.probs(layer)[None], np.ones((1, T), bool), ids=ids)  # the scan's maps
        ref_eager = per_input_scores(eager.probs(layer)[None], np.ones((1, T), bool), ids=ids)  # the model's own
        for name, want in ref_same.items():
            np.testing.assert_allclose(got.scores["self"][name][layer], want[0], rtol=0, atol=1e-6, err_msg=name)
            np.testing.assert_allclose(got.scores["self"][name][layer], ref_eager[name][0], rtol=0, atol=1e-5,
                                       err_msg=name)


def test_another_input_gives_other_scores(folders):  # negative control: the comparison above can fail
    from attnviz.hf.loader import load_hf_model
    from attnviz.runtime.batch_scores import score_heads_by_trace

    loaded = load_hf_model(folders["llama"], device="cpu")
    a = score_heads_by_trace(loaded, [TEXT]).scores["self"]
    b = score_heads_by_trace(loaded, ["a dog ran to the mat " * 9]).scores["self"]
    assert max(np.abs(a[n] - b[n]).max() for n in ("entropy", "previous_token", "first_token")) > 1e-3
