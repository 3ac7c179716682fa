"""The masked-lm scene of the attention lesson: its claim holds on the bundled model and fails on broken ones."""

from __future__ import annotations

import pytest
import torch

from attnviz.errors import InputError
from attnviz.lessons.claim_result import format_caption
from attnviz.lessons.claims import Workbench, evaluate_claim
from tests.lessons.test_claim_controls import _bench_with, _reinit, _scene


@pytest.fixture(scope="module")
def scene():
    return _scene("masked-lm")


def test_claim_holds_on_the_bundled_model_and_names_its_numbers(scene):
    bench = Workbench()
    r = evaluate_claim(scene, bench)
    assert r.ok, r.line
    v = r.values
    assert v["held"] >= 0.5 and v["held"] - v["unigram"] >= 0.2 and v["it"] >= 0.9 and v["polarity"] >= 0.9
    # the scene's numbers are the trace's: the guess and its probability are the prediction row at the [MASK]
    trace = bench.trace(scene)
    q = trace.tokens.index("[MASK]")
    row = trace.row("prediction", q)
    assert v["guess"] == trace.meta["labels"][int(row.argmax())] and v["guess_p"] == pytest.approx(float(row.max()))
    caption = format_caption(scene.caption, r)
    assert "{" not in caption and f"{v['held']:.0%}" in caption


def test_claim_fails_on_an_untrained_model(scene):
    r = evaluate_claim(scene, _bench_with("masked-lm", _reinit))
    assert not r.ok and r.values["held"] < r.values["unigram"], r.line


def test_claim_fails_when_the_output_words_are_shuffled(scene):
    # the same attention and hidden states, the output layer's rows permuted: every guess names another word
    def shuffle(loaded):
        g = torch.Generator().manual_seed(0)
        perm = torch.randperm(loaded.model.head.weight.shape[0], generator=g)
        with torch.no_grad():
            loaded.model.head.weight.copy_(loaded.model.head.weight[perm])
            loaded.model.head.bias.copy_(loaded.model.head.bias[perm])

    r = evaluate_claim(scene, _bench_with("masked-lm", shuffle))
    assert not r.ok, r.line


def test_a_scene_without_mask_is_one_line(scene):
    from dataclasses import replace

    with pytest.raises(InputError) as err:
        evaluate_claim(replace(scene, text="the meal was good , not bad at all"), Workbench())
    assert "[MASK]" in str(err.value) and "\n" not in str(err.value)
