"""charlm: document split, next-character batches, the bigram baseline and the held-out loss."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest
import torch

from attnviz.models.checkpoint import LoadedModel
from attnviz.models.registry import build_model
from attnviz.tasks.charlm import CharLMTask, bigram_loss, load_corpus


@pytest.fixture(scope="module")
def task():
    return CharLMTask()


def test_documents_split_disjoint_and_deterministic(task):
    from pydoc_data.topics import topics

    train, test = load_corpus()
    assert set(train).isdisjoint(test) and set(train) | set(test) == set(topics)
    assert 0.05 < sum(map(len, test.values())) / sum(map(len, topics.values())) < 0.35
    assert CharLMTask().tokenizer.vocab == task.tokenizer.vocab
    assert sorted(test) == task.test_docs


def test_batches_are_next_character_windows(task):
    batch = task.sample_batch("train", 8, np.random.default_rng(0))
    ids, tgt = batch.inputs["ids"], batch.targets
    assert ids.shape == tgt.shape == (8, task.seq_len)
    assert torch.equal(ids[:, 1:], tgt[:, :-1])
    train_text = "\n\n".join(load_corpus()[0].values())
    for row in range(8):
        text = "".join(task.tokenizer.vocab[i] for i in ids[row].tolist()) + task.tokenizer.vocab[int(tgt[row, -1])]
        assert text in train_text
    assert torch.equal(batch.inputs["ids"], task.sample_batch("train", 8, np.random.default_rng(0)).inputs["ids"])


def test_bigram_loss_against_a_direct_count():
    train = np.array([0, 1, 2, 1, 2, 0, 1, 1])
    prev, nxt = np.array([1, 2, 0]), np.array([2, 0, 2])
    pairs = Counter(zip(train[:-1].tolist(), train[1:].tolist()))
    firsts = Counter(train[:-1].tolist())
    expect = -np.mean([math.log((pairs[(p, n)] + 1) / (firsts[p] + 3)) for p, n in zip(prev, nxt)])
    assert bigram_loss(train, prev, nxt, 3) == pytest.approx(expect)


def test_evaluate_covers_the_held_out_text(task):
    torch.manual_seed(0)
    model = build_model(task.model_config()).eval()
    loaded = LoadedModel(model, model.cfg, {"task": "charlm"}, task.tokenizer, device=torch.device("cpu"))
    metrics = task.evaluate(loaded)
    windows = task.held_out_windows()
    assert metrics["n_chars"] == windows.shape[0] * task.seq_len >= len(task.test_ids) - task.seq_len - 1
    # an untrained model predicts about uniformly; the bigram model is far better than uniform
    assert metrics["loss"] == pytest.approx(math.log(len(task.tokenizer.vocab)), abs=0.1)
    assert metrics["bigram_loss"] < math.log(len(task.tokenizer.vocab)) - 1.0
    # recompute the loss independently: log-softmax in numpy, every window at once
    with torch.no_grad():
        logits = model(ids=torch.from_numpy(windows[:, :-1])).double().numpy()
    logp = logits - logits.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    nll = -np.take_along_axis(logp, windows[:, 1:, None], -1).mean()
    assert nll == pytest.approx(metrics["loss"], rel=1e-4)


def test_character_ids_equal_a_per_character_lookup(task):
    """The code-point lookup table gives every character the tokenizer's own id, [UNK] outside it."""
    index, unk = task.tokenizer.index, task.tokenizer.id_of("[UNK]")
    text = "def f(x):\n    return x ** 2  # é ☃ 😀 \t[UNK]"
    want = np.array([index.get(c, unk) for c in text], dtype=np.int64)
    np.testing.assert_array_equal(task._ids(text), want)
    assert (task._ids("😀") == unk).all() and task._ids("").shape == (0,)
    # the corpus itself, as training reads it
    train_text = "\n\n".join(load_corpus()[0].values())[:50000]
    np.testing.assert_array_equal(task._ids(train_text), [index.get(c, unk) for c in train_text])
