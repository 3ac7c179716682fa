"""Decoder positions of an encoder–decoder are named by the token they produced ("→ un").

Checked against the bundled translate model: the label of each row is the model's own argmax at that
position (greedy decoding), the per-position distributions end in ``prediction``, the attended source
is the numpy argmax of the cross-attention row, and ``--data`` exports carry the same labels.
"""

from __future__ import annotations

import csv

import numpy as np
import pytest

from attnviz.analysis.decoder_positions import (attended_source, position_distribution, produced_tokens,
                                                 row_labels)
from attnviz.capture.trace import layer_prefix
from attnviz.selection import SelectionState


@pytest.fixture(scope="module")
def translated(request):
    from attnviz.io import bundled_models
    from attnviz.runtime import load_model, run_trace

    if "translate" not in bundled_models():
        pytest.skip("the bundled translate model is not built (make assets)")
    loaded = load_model("translate")
    return loaded, run_trace(loaded, text="the big dog sees a small cat")


def test_each_row_is_named_by_the_token_its_position_produced(translated):
    loaded, trace = translated
    vocab = (loaded.tgt_tokenizer or loaded.tokenizer).vocab
    steps = trace["next_probs"]  # (T, C)
    assert steps.shape == (len(trace.tokens), len(vocab))
    np.testing.assert_allclose(steps[-1], trace["prediction"], atol=1e-6)
    made = produced_tokens(trace)
    assert made[-1] is None
    for i, token in enumerate(made[:-1]):
        assert token == trace.tokens[i + 1] == vocab[int(np.argmax(steps[i]))]  # greedy: what it wrote
    labels = row_labels(trace, "cross")
    assert labels[:-1] == [f"→ {t}" for t in trace.tokens[1:]] and labels[-1] == "(end): nothing written"
    assert row_labels(trace, "self") == list(trace.tokens)  # self-attention rows keep their input tokens
    assert row_labels(trace, "enc") == list(trace.src_tokens)


def test_gold_alignments_read_right_with_the_produced_labels(translated):
    """The task's gold pairs say: row r (writing tokens[r + 1]) attends to source s. With rows read
    as the produced word, the best cross-attention layer agrees with most of them."""
    from attnviz.runtime import task_of

    loaded, trace = translated
    gold = task_of(loaded).gold("the big dog sees a small cat")
    assert gold["tgt_tokens"] == list(trace.tokens)
    labels = row_labels(trace, "cross")
    for row, src in gold["pairs"]:
        assert labels[row] == f"→ {gold['tgt_tokens'][row + 1]}"
    best = max(sum(int(np.argmax(trace[layer_prefix(layer, "cross") + "probs"].mean(0)[r]) == s)
                   for r, s in gold["pairs"]) for layer in range(trace.n_layers))
    assert best >= 0.75 * len(gold["pairs"])


def test_attended_source_is_the_argmax_of_the_cross_attention_row(translated):
    _, trace = translated
    probs = np.asarray(trace[layer_prefix(1, "cross") + "probs"], np.float64)
    for q in range(len(trace.tokens)):
        assert attended_source(trace, 1, 1, q) == int(np.argmax(probs[1, q]))
    assert attended_source(trace, 1, 1, len(trace.tokens)) is None


def test_position_distribution_follows_the_position(translated):
    _, trace = translated
    row, pos = position_distribution(trace, 2)
    assert pos == 2 and np.array_equal(row, np.asarray(trace["next_probs"][2], np.float64))
    # no position chosen: the one that wrote the last word, where the walkthrough and What if open (one rule),
    # not the one that wrote [EOS] nor the (end) row after it
    from attnviz.analysis.walkthrough_default import default_query

    at = position_distribution(trace, None)[1]
    assert at == default_query(trace, "cross") and at < len(trace.tokens) - 2
    assert produced_tokens(trace)[at] == trace.tokens[at + 1] and trace.tokens[at + 1] != "[EOS]"


def test_data_exports_name_the_produced_token(translated, tmp_path):
    from attnviz.export.data import figure_data, write_figure_data

    _, trace = translated
    data = figure_data("head-map", trace, SelectionState(layer=1, head=0, part="cross"))
    path = write_figure_data(tmp_path / "cross.csv", data)
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    assert rows[0][1:] == list(trace.src_tokens)
    assert [r[0] for r in rows[1:]] == row_labels(trace, "cross")
    with np.load(write_figure_data(tmp_path / "cross.npz", data)) as npz:
        assert list(npz["row_labels"]) == row_labels(trace, "cross")
