"""The ``translate`` task: grammar, gold alignment, split, metric recomputation, typed input, bundled model."""

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
from attnviz.tasks.translate import ADJS, LEXICON, NOUNS, PARTICLE, VERBS, parse_source, render


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    # tiny models gain nothing from threads, and on a shared machine two threads can be 10x slower
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def task():
    return get_task("translate")


@pytest.fixture(scope="module")
def untrained(task):
    torch.manual_seed(0)
    cfg = task.model_config(d_model=32, n_heads=2)
    return LoadedModel(model=build_model(cfg).eval(), config=cfg, info={"task": "translate"},
                       tokenizer=task.tokenizer, tgt_tokenizer=task.tgt_tokenizer, device=torch.device("cpu"))


def test_worked_example():
    src, tgt, align = render(("the", "big", "dog"), "sees", ("a", "small", "cat"))
    assert " ".join(src) == "the big dog sees a small cat"
    assert " ".join(tgt) == "lo wufa grano un miro pika na vidas"
    assert align == [0, 2, 1, 4, 6, 5, None, 3]


def test_alignment_points_to_the_translated_word_and_reorders(task):
    for src, tgt, align in task.sample_sentences("train", 300, np.random.default_rng(0)):
        assert parse_source(src) is not None
        aligned = [s for s in align if s is not None]
        assert sorted(aligned) == list(range(len(src)))  # every source word translated exactly once
        for word, s in zip(tgt, align):
            assert (word == PARTICLE) if s is None else LEXICON[src[s]] == word
        verb = next(i for i, w in enumerate(src) if w in LEXICON and LEXICON[w] == tgt[-1])
        assert align[-1] == verb  # verb-final
        for i, w in enumerate(src[:-1]):
            if w in ADJS:  # the adjective follows its noun in the target
                assert src[i + 1] in NOUNS and align.index(i) == align.index(i + 1) + 1
        if any(w in VERBS for w in src):
            assert PARTICLE in tgt


def test_parse_rejects_non_sentences():
    for words in (["dog", "the"], ["the", "dog"], ["the", "dog", "sees"], ["the", "dog", "sleeps", "a", "cat"],
                  ["the", "big", "big", "dog", "runs"], []):
        assert parse_source(words) is None


def test_batches_are_deterministic_and_splits_disjoint(task):
    a = task.sample_batch("train", 16, np.random.default_rng(9))
    b = task.sample_batch("train", 16, np.random.default_rng(9))
    assert all(torch.equal(a.inputs[k], b.inputs[k]) for k in a.inputs) and torch.equal(a.targets, b.targets)
    key = lambda ex: " ".join(ex[0])  # noqa: E731
    train = {key(e) for e in task.sample_sentences("train", 3000, np.random.default_rng(0))}
    test = {key(e) for e in task.sample_sentences("test", 1000, np.random.default_rng(0))}
    assert train and test and not train & test


def test_batch_encodes_the_translation(task):
    examples = task.sample_sentences("test", 20, np.random.default_rng(3))
    inputs, targets, _ = task.encode(examples)
    sv, tv = task.tokenizer.vocab, task.tgt_tokenizer.vocab
    for (src, tgt, _), s_ids, pad, dec_in, t_ids in zip(examples, inputs["src"].tolist(), inputs["src_pad"].tolist(),
                                                        inputs["tgt"].tolist(), targets.tolist()):
        assert [sv[i] for i, p in zip(s_ids, pad) if not p] == src + ["[EOS]"]
        assert [tv[i] for i in t_ids if i != IGNORE] == tgt + ["[EOS]"]
        assert [tv[i] for i in dec_in[: len(tgt) + 1]] == ["[BOS]"] + tgt


def test_info_gold_alignment_in_trace_coordinates(task):
    gold = task.info()["gold_alignment"]
    assert len(gold) == len(task.probe_inputs())
    for g in gold:
        assert g["src_tokens"][-1] == "[EOS]" and g["tgt_tokens"][0] == "[BOS]"
        for row, s in g["pairs"]:
            # decoder row `row` writes tgt_tokens[row + 1], the translation of src_tokens[s]
            assert g["tgt_tokens"][row + 1] == LEXICON[g["src_tokens"][s]]


def test_evaluate_agrees_with_single_example_traces(task, untrained, monkeypatch):
    """The batched, padded metric equals a per-example recomputation from capture() Traces."""
    from attnviz.capture import capture

    monkeypatch.setattr(task, "n_eval", 30)
    metrics = task.evaluate(untrained, seed=5)
    examples = task.sample_sentences("test", 30, np.random.default_rng(5))
    cfg = untrained.config
    head_hits, layer_hits, n = np.zeros((cfg.n_layers, cfg.n_heads)), np.zeros(cfg.n_layers), 0
    for src, tgt, align in examples:
        s = torch.tensor([[task.tokenizer.id_of(w) for w in src + ["[EOS]"]]])
        t = torch.tensor([[task.tgt_tokenizer.id_of(w) for w in ["[BOS]"] + tgt]])
        trace = capture(untrained.model, {"src": s, "tgt": t}, ["[BOS]"] + tgt)
        for row, gold in enumerate(align):
            if gold is None:
                continue
            n += 1
            for layer in range(cfg.n_layers):
                probs = trace[f"L{layer}.cross.probs"][:, row]  # (H, Ts)
                head_hits[layer] += probs.argmax(-1) == gold
                layer_hits[layer] += probs.mean(0).argmax() == gold
    assert metrics["alignment_best_head"] == pytest.approx((head_hits / n).max())
    assert metrics["alignment"] == pytest.approx((layer_hits / n).max())


def test_prepare_text_translates_and_gives_the_reference(task, untrained):
    from attnviz.runtime import prepare_text

    prep = prepare_text(untrained, "The big dog sees a small cat.")
    assert prep.src_tokens == "the big dog sees a small cat".split() + ["[EOS]"]
    assert prep.tokens[0] == "[BOS]" and prep.inputs["tgt"].shape[1] == len(prep.tokens)
    assert prep.meta["reference_text"] == "lo wufa grano un miro pika na vidas"
    assert prep.meta["alignment"] == task.gold("the big dog sees a small cat")["pairs"]
    odd = prepare_text(untrained, "dog the sees")
    assert "grammar" in odd.meta["notice"] and "alignment" not in odd.meta


@pytest.mark.parametrize("text, message", [
    ("", "empty"), ("?!", "empty"), ("the big elephant sees a cat", "'elephant'"),
    ("the zebra sees a gnu", "'zebra', 'gnu'"), ("the dog " * 10, "at most"),
])
def test_prepare_text_rejects_bad_input(untrained, text, message):
    from attnviz.runtime import prepare_text

    with pytest.raises(InputError, match=message):
        prepare_text(untrained, text)


@pytest.mark.skipif("translate" not in bundled_models(), reason="bundled model not trained yet")
def test_bundled_model_reproduces_its_metrics(task):
    from attnviz.runtime import load_model

    loaded = load_model("translate", device="cpu")
    stored = loaded.info["metrics"]
    fresh = task.evaluate(loaded)
    for key in ("exact", "alignment", "alignment_best_head"):
        assert fresh[key] == pytest.approx(stored[key], abs=2e-3), key
    for key, (op, value) in task.targets.items():  # the targets make_assets checks
        assert (fresh[key] >= value) if op == ">=" else (fresh[key] <= value), key
