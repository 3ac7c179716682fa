"""Negative controls: every claim of the built-in lesson fails on a broken model or a wrong formula.

A claim that passes on a re-initialised or shuffled model, or on a table built with the wrong formula,
tests nothing; each test here breaks one thing and expects the claim to fail.
"""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest
import torch

from attnviz.lessons.claims import Workbench, evaluate_claim
from attnviz.lessons.lesson import load_lesson
from attnviz.models.registry import build_model


def _scene(kind: str):
    return next(s for s in load_lesson("attention").scenes if s.claim["kind"] == kind)


def _bench_with(name: str, change) -> Workbench:
    """A workbench whose model ``name`` is a changed copy of the bundled one."""
    bench = Workbench()
    loaded = copy.copy(bench.model(name))
    loaded.model = copy.deepcopy(loaded.model)
    change(loaded)
    bench._models[bench._key(name)] = loaded
    return bench


def _reinit(loaded):
    torch.manual_seed(3)
    fresh = build_model(loaded.config).eval()
    loaded.model.load_state_dict(fresh.state_dict())


def _shuffle(loaded):
    g = torch.Generator().manual_seed(4)
    with torch.no_grad():
        for p in loaded.model.parameters():
            flat = p.view(-1)
            flat.copy_(flat[torch.randperm(flat.numel(), generator=g)])


@pytest.mark.parametrize("kind", ["attends-to", "scale-saturation"])
@pytest.mark.parametrize("broken", [_reinit, _shuffle], ids=["reinit", "shuffled"])
def test_coref_claims_fail_on_a_broken_model(kind, broken):
    scene = _scene(kind)
    assert evaluate_claim(scene, Workbench(), n=40).ok  # the control's control: it holds as bundled
    assert not evaluate_claim(scene, _bench_with(scene.model, broken), n=40).ok


def test_attends_to_fails_on_an_answer_broadcast():
    """Every row of the head gets the "it" row's query: each row looks where "it" looks."""
    scene = _scene("attends-to")
    bench = Workbench()
    trace = bench.trace(scene)
    layer, head = trace.meta["focus"]["layer"], trace.meta["focus"]["head"]

    def broadcast(loaded):
        attn = loaded.model.stack.blocks[layer].attn

        def hook(module, args, out):  # q_proj's output: copy the "it" row's query to every row
            it = trace.meta["focus"]["query"]
            if out.shape[1] > it:
                return out[:, it:it + 1].expand_as(out).clone()

        attn.q_proj.register_forward_hook(hook)

    broken = evaluate_claim(scene, _bench_with(scene.model, broadcast), n=40)
    assert not broken.ok and broken.values["others"] > 0.3


def _set_table(table):
    def change(loaded):
        from attnviz.models.blocks import PositionalEncoding

        enc = next(m for m in loaded.model.modules() if isinstance(m, PositionalEncoding))
        enc.table = torch.as_tensor(table(*enc.table.shape), dtype=enc.table.dtype)

    return change


def _table(n, d, base=10000.0, halves=False):
    pos = np.arange(n)[:, None]
    angle = pos / base ** (np.arange(0, d, 2) / d)
    if halves:  # sin in the first half, cos in the second
        return np.concatenate([np.sin(angle), np.cos(angle)], 1)
    t = np.zeros((n, d))
    t[:, 0::2], t[:, 1::2] = np.sin(angle), np.cos(angle)
    return t


@pytest.mark.parametrize("wrong", [dict(base=100.0), dict(base=7.0, halves=True), dict(halves=True)],
                         ids=["base100", "base7-halves", "halves"])
def test_sinusoidal_fails_on_a_wrong_formula(wrong):
    scene = _scene("sinusoidal")
    assert evaluate_claim(scene, _bench_with(scene.model, _set_table(_table)), n=10).ok
    r = evaluate_claim(scene, _bench_with(scene.model, _set_table(lambda n, d: _table(n, d, **wrong))), n=10)
    assert not r.ok and r.values["formula"] > 1e-3 and r.values["held"] < 1e-4  # the shift property alone would pass


def test_scale_claim_numbers_are_the_figures_head():
    scene = _scene("scale-saturation")
    r = evaluate_claim(scene, Workbench(), n=20)
    assert r.ok and r.values["d_k"] == 16
    assert r.values["spread_big"] / r.values["spread_small"] == pytest.approx(math.sqrt(256 / 4), rel=0.15)


def _corrupt_record(key: str):
    """A broken capture: the attention records ``key`` slightly off what the module computed."""
    def change(loaded):
        from attnviz.capture.batch import attention_modules

        def hook(module, args, out):
            if module.record is not None and key in module.record:
                module.record[key] = module.record[key] * 0.98 + 0.01

        for attn in attention_modules(loaded.model)["self"]:
            attn.register_forward_hook(hook)

    return change


@pytest.mark.parametrize("kind,key", [("six-steps", "probs"), ("six-steps", "z"), ("matrix-form", "probs"),
                                      ("concat-heads", "out")])
def test_recomputation_claims_fail_when_the_recorded_numbers_are_not_the_formulas(kind, key):
    scene = _scene(kind)
    assert evaluate_claim(scene, Workbench(), n=20).ok
    r = evaluate_claim(scene, _bench_with(scene.model, _corrupt_record(key)), n=20)
    assert not r.ok and max(r.here, r.held_out) > 1e-4


def test_concat_heads_fails_on_heads_that_look_alike():
    """coref's last layer: every head resolves "it" the same way (mean TV well under 0.3)."""
    import dataclasses

    scene = dataclasses.replace(_scene("concat-heads"), model="coref",
                                text="The animal didn't cross the street because it was too tired", layer=1)
    r = evaluate_claim(scene, Workbench(), n=40)
    assert r.here < 1e-4 and r.values["tv"] < 0.3 and not r.ok


def test_causal_mask_fails_on_a_decoder_that_sees_the_future():
    scene = _scene("causal-mask")

    def unmask(loaded):
        from attnviz.capture.batch import attention_modules

        for attn in attention_modules(loaded.model)["self"]:
            attn.causal = False

    r = evaluate_claim(scene, _bench_with(scene.model, unmask), n=20)
    assert not r.ok and r.here > 0


def test_permutation_fails_on_a_model_with_positions():
    import dataclasses

    scene = _scene("permutation")
    r = evaluate_claim(dataclasses.replace(scene, model=scene.claim["with_positions"]), Workbench(), n=20)
    assert not r.ok and r.here > 1e-3


@pytest.mark.parametrize("kind", ["word-order", "filters-pca", "rollout-pointing", "cross-alignment"])
def test_trained_claims_fail_on_a_reinitialised_model(kind):
    scene = _scene(kind)
    name = scene.claim.get("with_positions", scene.model) if kind == "word-order" else scene.model
    name = "order-sentiment" if kind == "word-order" else name
    assert not evaluate_claim(scene, _bench_with(name, _reinit), n=40).ok


def test_rollout_pointing_fails_on_a_centre_prior(monkeypatch):
    """Attention replaced by a model-free centre prior (the best fixed patch of the large scenes, for every
    scene, as rollout and as raw attention): the model still classifies, its pointer knows nothing."""
    from attnviz.tasks import pointing

    real = pointing.classify_and_point
    scene = _scene("rollout-pointing")

    def centre_prior(model, images, chunk=128, with_raw=False):
        preds, peaks, raw = real(model, images, chunk, with_raw=True)
        prior = np.full_like(peaks, 1 * 4 + 1)  # patch (1, 1) of the 4×4 grid: the best fixed patch on large scenes
        return (preds, prior, prior) if with_raw else (preds, prior)

    monkeypatch.setattr(pointing, "classify_and_point", centre_prior)
    r = evaluate_claim(scene, Workbench(), n=40)
    assert not r.ok
    assert r.values["large_held"] > 0.8  # on large central shapes the prior would have passed the old check
    assert r.values["lead"] < r.values["margin"]


def test_rollout_pointing_refuses_an_unknown_layout():
    import dataclasses

    from attnviz.errors import InputError

    scene = _scene("rollout-pointing")
    bad = dataclasses.replace(scene, claim={**scene.claim, "layout": "middle"})
    with pytest.raises(InputError, match="layout must be one of large, offcentre"):
        evaluate_claim(bad, Workbench(), n=10)


def test_six_steps_fails_on_a_one_hot_row():
    """The lecture head at "it" is one-hot: z = v of one token, which the walkthrough scene must not show."""
    import dataclasses

    scene = _scene("six-steps")
    bench = Workbench()
    focus = bench.trace(scene).meta["focus"]
    r = evaluate_claim(dataclasses.replace(scene, layer=focus["layer"], head=focus["head"]), bench, n=10)
    assert r.here < 1e-4 and r.values["top_weight"] >= 0.8 and not r.ok


def test_rollout_against_raw_attention_is_called_a_tie_within_noise():
    from attnviz.analysis.share_versus import versus as _versus

    # two standard errors of a difference of two shares on 1 000 scenes: 2·√(0.5/1000) ≈ 4.5 points
    assert _versus(0.992, 0.990, 1000) == _versus(0.96, 0.99, 1000) == "a tie within noise"
    assert _versus(0.99, 0.90, 1000) == "rollout ahead" and _versus(0.80, 0.95, 1000) == "rollout behind"
    assert _versus(0.99, 0.90, 10) == "a tie within noise"  # the same gap on ten scenes proves nothing


def test_cross_alignment_caption_measures_the_head_on_screen():
    """Scene 16 draws one head (cross L1·H0) under its caption: both numbers are that head's when it is the best
    single head, and the caption says so; on another head both are the layer's, heads averaged, and it says that."""
    import dataclasses

    from attnviz.lessons.claims import HELD_OUT_SEED, format_caption

    scene = _scene("cross-alignment")
    bench = Workbench()
    metrics = bench.task_metrics(scene.model, HELD_OUT_SEED)
    best = (metrics["alignment_best_head_layer"], metrics["alignment_best_head_index"])
    assert (scene.layer, scene.head) == best  # the lecture's map is the best head
    r = evaluate_claim(scene, bench, n=20)
    assert r.ok and r.held_out == pytest.approx(metrics["alignment_best_head"])
    caption = format_caption(scene.caption, r)
    assert f"this head, L{scene.layer}·H{scene.head}" in caption
    other = dataclasses.replace(scene, head=1 - scene.head)  # control: a head that is not the best one
    r2 = evaluate_claim(other, bench, n=20)
    assert r2.held_out == pytest.approx(metrics["alignment"]) and "heads averaged" in format_caption(other.caption, r2)
