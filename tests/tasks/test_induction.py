"""The ``induction`` task: data, split, metric recomputation, typed input and the bundled model."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.errors import InputError
from attnviz.models import build_model
from attnviz.models.checkpoint import LoadedModel
from attnviz.io import bundled_models
from attnviz.tasks import get_task
from attnviz.tasks.base import IGNORE
from attnviz.tasks.induction import MAX_N, MAX_PREFIX, MIN_N, induction_target


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    # tiny models gain nothing from threads, and on a shared machine two threads can be 10x slower
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def task():
    return get_task("induction")


@pytest.fixture(scope="module")
def untrained(task):
    torch.manual_seed(0)
    cfg = task.model_config()
    return LoadedModel(model=build_model(cfg).eval(), config=cfg, info={"task": "induction"},
                       tokenizer=task.tokenizer, device=torch.device("cpu"))


def test_batches_are_deterministic_given_the_seed(task):
    a = task.sample_batch("train", 16, np.random.default_rng(5))
    b = task.sample_batch("train", 16, np.random.default_rng(5))
    assert torch.equal(a.inputs["ids"], b.inputs["ids"]) and torch.equal(a.targets, b.targets)


def test_train_and_test_repeated_parts_are_disjoint(task):
    train = {half for _, half in task.sample_examples("train", 3000, np.random.default_rng(0))}
    test = {half for _, half in task.sample_examples("test", 1000, np.random.default_rng(1))}
    assert train and test and not train & test


def test_sequences_repeat_and_targets_are_the_next_letter(task):
    examples = task.sample_examples("test", 64, np.random.default_rng(2))
    batch = task.sample_batch_of(examples)
    bos = task.tokenizer.id_of("[BOS]")
    prefix_lengths = set()
    for (prefix, half), ids, tgt in zip(examples, batch.inputs["ids"].tolist(), batch.targets.tolist()):
        ids = [i for i in ids if i != task.tokenizer.pad_id]
        m, n = len(prefix), len(half)
        prefix_lengths.add(m)
        assert ids[0] == bos and MIN_N <= n <= MAX_N and m <= MAX_PREFIX and len(ids) == 1 + m + 2 * n
        first, second = ids[1 + m : 1 + m + n], ids[1 + m + n :]
        assert first == second == list(half) and len(set(first)) == n  # distinct: the continuation is unique
        assert not set(ids[1 : 1 + m]) & set(first)  # prefix letters never occur in the repeated part
        assert all(t == IGNORE for t in tgt[len(ids):])  # padding
        for q, t in enumerate(tgt[: len(ids)]):
            if q >= 1 + m + n:
                # the repetition goes on: the next letter, or x_1 again after the last one
                assert t == (ids[q + 1] if q + 1 < len(ids) else half[0])
                k = induction_target(q, n)
                # "the token after the previous occurrence" of the query's letter is the target letter
                assert ids[k - 1] == ids[q] and ids[k] == t and k <= q
            else:
                assert t == IGNORE
    assert len(prefix_lengths) >= 3  # the copy starts at varying positions


def test_evaluate_agrees_with_single_example_traces(task, untrained, monkeypatch):
    """The batched metric equals a per-example recomputation from capture() Traces."""
    from attnviz.capture import capture

    monkeypatch.setattr(task, "n_eval", 40)
    metrics = task.evaluate(untrained, seed=11)
    examples = task.sample_examples("test", 40, np.random.default_rng(11))
    cfg, vocab = untrained.config, task.tokenizer.vocab
    mass = np.zeros((cfg.n_layers, cfg.n_heads))
    prev_mass = np.zeros(cfg.n_heads)
    ok = count = 0
    for prefix, half in examples:
        ids = [task.bos_id, *prefix, *half, *half]
        trace = capture(untrained.model, {"ids": torch.tensor([ids])}, [vocab[i] for i in ids])
        logits = untrained.model(torch.tensor([ids]))[0]
        for q in range(1 + len(prefix) + len(half), len(ids)):
            # the letter after the previous occurrence of ids[q], found by search, not by formula
            prev = max(j for j in range(1, q) if ids[j] == ids[q])
            for layer in range(cfg.n_layers):
                mass[layer] += trace[f"L{layer}.probs"][:, q, prev + 1]
            prev_mass += trace["L0.probs"][:, q, q - 1]
            ok += int(logits[q].argmax()) == ids[prev + 1]
            count += 1
    assert metrics["induction_score"] == pytest.approx((mass / count).max(), rel=1e-5)
    assert metrics["repeat_accuracy"] == pytest.approx(ok / count)
    assert metrics["previous_token_score"] == pytest.approx((prev_mass / count).max(), rel=1e-5)


def test_prepare_text_accepts_letters(untrained):
    from attnviz.runtime import prepare_text

    prep = prepare_text(untrained, "Dragon Fly drag")
    assert prep.tokens == ["[BOS]"] + list("dragonflydrag")
    assert prep.inputs["ids"].shape == (1, 14)


@pytest.mark.parametrize("text, message", [
    ("", "empty"), ("abc abc!", "'!'"), ("ab3", "'3'"), ("a" * (MAX_PREFIX + 2 * MAX_N + 1), "at most"),
])
def test_prepare_text_rejects_bad_input(untrained, text, message):
    from attnviz.runtime import prepare_text

    with pytest.raises(InputError, match=message):
        prepare_text(untrained, text)


def test_prepare_text_truncates_when_asked(task, untrained):
    from attnviz.runtime import prepare_text

    prep = prepare_text(untrained, "q" * (MAX_PREFIX + 2 * MAX_N + 5), truncate=True)
    assert len(prep.tokens) == untrained.config.max_len and "truncated" in prep.meta["notice"]


@pytest.mark.skipif("induction" not in bundled_models(), reason="bundled model not trained yet")
def test_bundled_model_reproduces_its_metrics(task):
    from attnviz.runtime import load_model

    loaded = load_model("induction", device="cpu")
    stored = loaded.info["metrics"]
    fresh = task.evaluate(loaded)
    for key in ("repeat_accuracy", "induction_score", "previous_token_score"):
        assert fresh[key] == pytest.approx(stored[key], abs=2e-3), key
    for key, (op, value) in task.targets.items():  # the targets make_assets checks
        assert (fresh[key] >= value) if op == ">=" else (fresh[key] <= value), key
