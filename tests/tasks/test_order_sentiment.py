"""order-sentiment: swapped pairs, labels by construction, disjoint splits, the no-position blind spot."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
import torch

from attnviz.models.checkpoint import LoadedModel
from attnviz.models.registry import build_model
from attnviz.runtime import prepare_text
from attnviz.tasks import get_task
from attnviz.tasks.order_sentiment import NEGATIVE, POSITIVE, THINGS, OrderSentimentTask, swap


@pytest.fixture(scope="module")
def task():
    return OrderSentimentTask()


def _untrained(task, seed=0):
    torch.manual_seed(seed)
    model = build_model(task.model_config()).eval()
    return LoadedModel(model, model.cfg, {"task": task.name, "labels": task.labels}, task.tokenizer,
                       device=torch.device("cpu"), extra={"task_obj": task})


def _asserted(words):
    """The adjective the sentence asserts: templates put it after "was"/"but" or first; the denied one
    follows "not", "be" or "seemed" (an independent reading of the templates)."""
    adjectives = [i for i, w in enumerate(words) if w in POSITIVE or w in NEGATIVE]
    assert len(adjectives) == 2
    asserted = [i for i in adjectives if i == 0 or words[i - 1] in ("was", "but")]
    denied = [i for i in adjectives if i > 0 and words[i - 1] in ("not", "be", "seemed")]
    assert len(asserted) == 1 and len(denied) == 1
    return words[asserted[0]]


def test_labels_are_right_by_construction(task):
    items = task.sentences("train", 300, np.random.default_rng(0)) + task.sentences("test", 300, np.random.default_rng(0))
    for text, label in items:
        assert label == int(_asserted(text.split()) in POSITIVE)


def test_pairs_are_the_same_words_with_opposite_labels(task):
    items = task.sentences("test", 200, np.random.default_rng(1), pairs=True)
    for (a, la), (b, lb) in zip(items[0::2], items[1::2]):
        assert Counter(a.split()) == Counter(b.split()) and a != b
        assert la == 1 - lb
    assert swap("the food was good , not bad at all", "good", "bad") == "the food was bad , not good at all"


def test_generation_is_deterministic_and_splits_disjoint(task):
    assert task.sentences("train", 40, np.random.default_rng(2)) == \
        OrderSentimentTask().sentences("train", 40, np.random.default_rng(2))

    def combos(split):
        out = set()
        for text, _ in task.sentences(split, 3000, np.random.default_rng(3)):
            words = text.split()
            out.add((next(w for w in words if w in THINGS), frozenset(w for w in words if w in POSITIVE + NEGATIVE)))
        return out

    train, test = combos("train"), combos("test")
    assert train and test and not train & test


def test_fast_encoding_equals_the_tokenizer(task):
    items = task.sentences("train", 100, np.random.default_rng(4))
    batch = task.encode(items)
    for i, (text, _) in enumerate(items):
        ids = task.tokenizer.encode(text).ids
        assert batch.inputs["ids"][i, : len(ids)].tolist() == ids


def test_probes_tokenize_like_training_sentences(task):
    loaded = _untrained(task)
    good, bad = task.probe_inputs()
    assert good == "the food was good, not bad at all" and bad == "the food was bad, not good at all"
    tokens = prepare_text(loaded, good).tokens
    assert tokens == ["[CLS]", "the", "food", "was", "good", ",", "not", "bad", "at", "all"]
    assert task.tokenizer.id_of("[UNK]") not in prepare_text(loaded, good).inputs["ids"][0].tolist()


def test_without_positions_a_swapped_pair_gets_the_same_answer():
    task = get_task("order-sentiment-nopos")
    assert task.model_config().pos == "none"
    for seed in range(3):
        metrics = task.evaluate(_untrained(task, seed), seed=seed, n=200)
        assert metrics["swapped_pair_accuracy"] == 0.5 and metrics["pair_both_correct"] == 0.0


def test_with_positions_a_pair_can_get_different_answers(task):
    loaded = _untrained(task)
    batch = task.encode(task.sentences("test", 100, np.random.default_rng(5), pairs=True))
    with torch.no_grad():
        logits = loaded.model(**batch.inputs)
    assert not torch.allclose(logits[0::2], logits[1::2], atol=1e-4)
