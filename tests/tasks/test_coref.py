"""coref: deterministic data, disjoint splits, labels right by construction, "it" handling, the metric."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.capture import capture
from attnviz.errors import InputError
from attnviz.models.checkpoint import LoadedModel
from attnviz.models.registry import build_model
from attnviz.runtime import prepare_text
from attnviz.tasks.coref import ANIMATE, ANIMATE_ADJ, PLACE_ADJ, PLACES, CorefTask


@pytest.fixture(scope="module")
def task():
    return CorefTask()


@pytest.fixture(scope="module")
def untrained(task):
    torch.manual_seed(0)
    model = build_model(task.model_config()).eval()
    return LoadedModel(model, model.cfg, {"task": "coref", "labels": task.labels}, task.tokenizer,
                       device=torch.device("cpu"), extra={"task_obj": task})


def test_generation_is_deterministic(task):
    a = task.sentences("train", 50, np.random.default_rng(1))
    assert a == CorefTask().sentences("train", 50, np.random.default_rng(1))
    assert a != task.sentences("train", 50, np.random.default_rng(2))
    assert CorefTask().tokenizer.vocab == task.tokenizer.vocab


def test_splits_are_disjoint_and_cover_every_word(task):
    rng = np.random.default_rng(0)

    def combos(split):
        return {(ref, text.split()[-1]) for text, ref in task.sentences(split, 3000, rng)}

    train, test = combos("train"), combos("test")
    assert train and test and not train & test
    words = lambda split: {w for text, _ in task.sentences(split, 3000, rng) for w in text.split()}  # noqa: E731
    assert set(ANIMATE + PLACES + ANIMATE_ADJ + PLACE_ADJ) <= words("train")


def test_labels_are_right_by_construction(task):
    items = task.sentences("train", 200, np.random.default_rng(3)) + task.sentences("test", 200, np.random.default_rng(3))
    batch = task.encode(items)
    for i, (text, _) in enumerate(items):
        words = text.split()
        animal = next(w for w in words if w in ANIMATE)
        place = next(w for w in words if w in PLACES)
        adjective = words[-1]
        assert adjective in ANIMATE_ADJ or adjective in PLACE_ADJ
        referent = animal if adjective in ANIMATE_ADJ else place
        assert task.labels[int(batch.targets[i])] == referent
        assert batch.inputs["ids"][i, batch.inputs["pool_index"][i]] == task.tokenizer.id_of("it")


def test_fast_encoding_equals_the_tokenizer(task):
    items = task.sentences("train", 100, np.random.default_rng(4))
    batch = task.encode(items)
    for i, (text, _) in enumerate(items):
        ids = task.tokenizer.encode(text).ids
        assert batch.inputs["ids"][i, : len(ids)].tolist() == ids
        assert not batch.inputs["key_pad"][i, : len(ids)].any() and batch.inputs["key_pad"][i, len(ids):].all()


def test_prepare_text_classifies_at_it(untrained):
    prep = prepare_text(untrained, "The animal didn't cross the street because it was too tired")
    assert prep.tokens[prep.inputs["pool_index"].item()] == "it"
    assert "notice" not in prep.meta
    assert prep.inputs["ids"].shape == (1, 12)


def test_prepare_text_without_it_uses_cls_and_says_so(untrained):
    prep = prepare_text(untrained, "the dog crossed the zebra crossing")
    assert prep.inputs["pool_index"].item() == 0
    assert '"it"' in prep.meta["notice"] and "[CLS]" in prep.meta["notice"]
    assert "zebra" in prep.meta["notice"]  # unknown words are named
    with pytest.raises(InputError, match="at most 32"):
        prepare_text(untrained, "it " * 40)
    assert "truncated" in prepare_text(untrained, "it " * 40, truncate=True).meta["notice"]


def _recount(model, task, items):
    hits = np.zeros((model.config.n_layers, model.config.n_heads))
    correct = 0
    for text, ref in items:
        prep = prepare_text(model, text)
        trace = capture(model.model, prep.inputs, prep.tokens)
        it, noun = prep.tokens.index("it"), prep.tokens.index(ref)
        for layer in range(trace.n_layers):
            hits[layer] += trace.probs(layer)[:, it].argmax(-1) == noun
        correct += int(np.argmax(trace["prediction"]) == task.labels.index(ref))
    return hits / len(items), correct / len(items)


def test_focus_head_is_chosen_on_validation_and_measured_on_test(task, untrained):
    metrics = task.evaluate(untrained, seed=5, n=40)
    val, _ = _recount(untrained, task, task.sentences("val", 40, np.random.default_rng(6)))
    test, accuracy = _recount(untrained, task, task.sentences("test", 40, np.random.default_rng(5)))
    layer, head = metrics["focus_layer"], metrics["focus_head"]
    assert val[layer, head] == pytest.approx(val.max())  # chosen on validation sentences ...
    assert metrics["focus_val_share"] == pytest.approx(val.max())
    assert metrics["it_attention"] == pytest.approx(test[layer, head])  # ... reported on test sentences
    assert metrics["accuracy"] == pytest.approx(accuracy)


def test_validation_combinations_are_never_trained_on_nor_tested(task):
    rng = np.random.default_rng(7)
    combos = {split: {(ref, text.split()[-1]) for text, ref in task.sentences(split, 2000, rng)}
              for split in ("train", "val", "test")}
    assert all(combos.values())
    assert not combos["val"] & combos["train"] and not combos["val"] & combos["test"]


def test_bundled_focus_head_is_right_on_both_lecture_sentences():
    from attnviz.runtime import load_model, run_trace

    loaded = load_model("coref", device="cpu")
    for text, noun in (("The animal didn't cross the street because it was too tired", "animal"),
                       ("The animal didn't cross the street because it was too wide", "street")):
        trace = run_trace(loaded, text=text)
        focus = trace.meta["focus"]
        tokens = [t.lower() for t in trace.tokens]
        assert focus["query"] == tokens.index("it")
        row = trace[f"L{focus['layer']}.probs"][focus["head"], focus["query"]]
        assert tokens[int(np.argmax(row))] == noun
