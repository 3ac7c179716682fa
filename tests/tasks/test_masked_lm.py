"""The masked-lm task: BERT's corruption recipe, held-out sentences, reading [MASK], metrics recomputed."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.errors import InputError
from attnviz.tasks.base import IGNORE
from attnviz.tasks.masked_lm import MASK_SHARE, MaskedLMTask, mask_positions


@pytest.fixture(scope="module")
def task():
    return MaskedLMTask()


def test_fifteen_percent_chosen_at_least_one_each():
    rng = np.random.default_rng(0)
    lengths = list(rng.integers(5, 15, size=4000))
    chosen = mask_positions(lengths, rng)
    assert all(len(c) >= 1 and c.max() < n and len(set(c)) == len(c) for c, n in zip(chosen, lengths))
    share = sum(len(c) for c in chosen) / sum(lengths)
    # 15 % plus the forced one of sentences that drew none (0.85^n of them): between 15 % and 20 %
    assert MASK_SHARE <= share <= 0.20
    # control: with no forcing needed (long sentences) the share is 15 % within noise
    long = mask_positions([400] * 200, np.random.default_rng(1))
    assert sum(len(c) for c in long) / 80_000 == pytest.approx(MASK_SHARE, abs=0.005)


def test_eighty_ten_ten_and_targets_only_where_chosen(task):
    rng = np.random.default_rng(2)
    words = [task.words(t) for t, _ in task.sentences("train", 3000, rng)]
    chosen = mask_positions([len(w) for w in words], rng)
    plain = task.encode_masked(words, [np.array([], int) for _ in words], None)
    batch = task.encode_masked(words, chosen, rng)
    tgt, ids, orig = batch.targets, batch.inputs["ids"], plain.inputs["ids"]
    picked = tgt != IGNORE
    assert int(picked.sum()) == sum(len(c) for c in chosen)
    assert torch.equal(tgt[picked], orig[picked])  # the target is the original word
    assert torch.equal(ids[~picked], orig[~picked])  # nothing else is touched
    masked = (ids[picked] == task.mask_id).float().mean().item()
    kept = (ids[picked] == orig[picked]).float().mean().item()
    other = 1 - masked - kept
    # a random word is sometimes the original one (1/196): "kept" gets ~0.05 % extra
    assert masked == pytest.approx(0.8, abs=0.02) and kept == pytest.approx(0.1, abs=0.015)
    assert other == pytest.approx(0.1, abs=0.015)
    # held-out masking: every chosen position is [MASK]
    held = task.encode_masked(words[:50], chosen[:50], None)
    assert bool((held.inputs["ids"][held.targets != IGNORE] == task.mask_id).all())


def test_held_out_sentences_are_never_generated_for_training(task):
    train = {t for t, _ in task.sentences("train", 6000, np.random.default_rng(3))}
    test = {t for t, _ in task.sentences("test", 2000, np.random.default_rng(4))}
    assert train.isdisjoint(test)
    # control: two training samples do share sentences (the check above can find overlap)
    again = {t for t, _ in task.sentences("train", 6000, np.random.default_rng(5))}
    assert train & again


def test_read_text_reads_mask_in_any_case(task):
    got = task.read_text(None, "The meal was [mask] , not bad at [MASK]", 32)
    assert got.tokens == ["[CLS]", "the", "meal", "was", "[MASK]", ",", "not", "bad", "at", "[MASK]", "[SEP]"]
    assert got.ids[4] == got.ids[9] == task.mask_id
    assert got.meta["labels"] == task.tokenizer.vocab and got.meta["query_index"] == 4
    assert "notice" not in got.meta
    none = task.read_text(None, "the meal was good", 32)
    assert "no [MASK]" in none.meta["notice"]
    with pytest.raises(InputError):
        task.read_text(None, "   ", 32)


def _bundled():
    from attnviz.models.checkpoint import load_checkpoint
    from attnviz.io import assets_dir

    return load_checkpoint(assets_dir() / "models" / "masked-lm")


def test_masked_accuracy_recomputed_one_sentence_at_a_time(task):
    # independent of encode_masked and the batched forward: ids built from the vocabulary by hand
    from attnviz.tasks.order_sentiment import NEGATIVE, POSITIVE

    loaded = _bundled()
    m = task.evaluate(loaded, seed=99, n=60)
    rng = np.random.default_rng(99)
    items = task.sentences("test", 60, rng)
    words = [t.split(" ") for t, _ in items]
    chosen = mask_positions([len(w) for w in words], rng)
    vocab = {w: i for i, w in enumerate(task.tokenizer.vocab)}
    right = total = it_right = it_total = 0
    pol_right = pol_total = 0
    for (text, src), ws, where in zip(items, words, chosen):
        def guess(hide):
            ids = [vocab["[CLS]"]] + [vocab["[MASK]"] if i in hide else vocab[w] for i, w in enumerate(ws)] + [vocab["[SEP]"]]
            with torch.no_grad():
                out = loaded.model(ids=torch.tensor([ids]))[0]  # (T, V)
            return {i: int(out[i + 1].argmax()) for i in hide}
        g = guess(set(int(i) for i in where))
        right += sum(g[i] == vocab[ws[i]] for i in g)
        total += len(g)
        if src == "coref":
            it_total += 1
            it_right += guess({ws.index("it")})[ws.index("it")] == vocab["it"]
        else:
            # the generator says which polarity the sentence asserts; its one adjective of that polarity is hidden
            wanted = POSITIVE if src == "positive" else NEGATIVE
            k = next(i for i, w in enumerate(ws) if w in wanted)
            word = task.tokenizer.vocab[guess({k})[k]]
            pol_total += 1
            pol_right += word in wanted
    assert m["masked_accuracy"] == pytest.approx(right / total, abs=1e-6) and m["n_masked"] == total
    assert m["it_accuracy"] == pytest.approx(it_right / it_total, abs=1e-6)
    assert m["polarity_accuracy"] == pytest.approx(pol_right / pol_total, abs=1e-6)


def test_bundled_model_meets_its_targets_and_an_untrained_one_does_not(task):
    from attnviz.models.registry import build_model
    from attnviz.training.make_assets import check_targets

    loaded = _bundled()
    assert check_targets(task, loaded.info["metrics"]) == []
    m = task.evaluate(loaded, seed=7, n=300)
    assert check_targets(task, m) == []
    assert m["masked_accuracy"] > m["unigram_accuracy"] + 0.25
    # negative control: the same architecture untrained is below the frequency baseline and misses every target
    torch.manual_seed(0)
    loaded.model = build_model(loaded.config).eval()
    bad = task.evaluate(loaded, seed=7, n=300)
    assert bad["masked_accuracy"] < bad["unigram_accuracy"]
    # every skill target missed; "it" guessed elsewhere stays bounded (a false-alarm guard, not a skill)
    missed = {line.split(" = ")[0] for line in check_targets(task, bad)}
    assert missed == set(task.targets) - {"it_elsewhere"}
