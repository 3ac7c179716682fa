"""The shipped training studies (√d_k, path length): their files are validated as untrusted, their
summaries recompute by hand, their claims hold as shipped and fail on a study whose labels are
swapped (the negative controls), and the gradients they plot equal finite differences."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from attnviz.analysis import path_length as pl
from attnviz.analysis import scale_training as st
from attnviz.errors import InputError


def _study_scale(losses: dict) -> dict:
    """A tiny √d_k study: losses[(init, scale)] = list over seeds of loss curves."""
    runs = []
    for (init, scale), curves in losses.items():
        for seed, curve in enumerate(curves):
            n = len(curve)
            runs.append({"init": init, "scale": scale, "seed": seed, "step": list(range(0, 10 * n, 10)),
                         "train_loss": curve, "loss": curve, "accuracy": [0.5] * n, "entropy": [1.0] * n})
    return {"format": "attnviz-scale-study", "version": 1, "d_head": 256, "steps": 20, "runs": runs}


def test_scale_summary_gap_by_hand(tmp_path):
    doc = _study_scale({("unit", "scaled"): [[2.0, 1.0, 0.0], [2.0, 0.5, 0.1]],
                        ("unit", "unscaled"): [[2.0, 2.0, 1.0], [2.0, 0.6, 0.1]]})
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    s = st.summarise(st.load_study(path))
    # per seed: mean(unscaled) − mean(scaled) = (5 − 3)/3 and (2.7 − 2.6)/3; the smaller one
    assert s["worst_gap"]["unit"] == pytest.approx(0.1 / 3)
    assert s["groups"][("unit", "scaled")]["mean_loss"] == pytest.approx(np.mean([[2, 1, 0], [2, 0.5, 0.1]]))


@pytest.mark.parametrize("damage", [
    lambda d: d.update(format="other"),
    lambda d: d["runs"][0].update(loss=[1.0]),  # fewer points than steps
    lambda d: d["runs"][0].update(init="huge"),
    lambda d: d["runs"][0]["loss"].__setitem__(0, float("nan")),
    lambda d: d["runs"][0].update(step="many"),
])
def test_scale_study_file_is_validated(tmp_path, damage):
    doc = _study_scale({("unit", "scaled"): [[2.0, 1.0]], ("unit", "unscaled"): [[2.0, 2.0]]})
    damage(doc)
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError):
        st.load_study(path)


def _path_doc() -> dict:
    runs = []
    for model in ("rnn", "attention"):
        runs.append({"model": model, "seed": 0, "loss": [1.0], "accuracy": [1.0, 0.5], "grad": [1.0, 0.01],
                     "grad_init": [1.0, 0.1], "accuracy_init": [0.1, 0.1]})
    return {"format": "attnviz-path-length", "distances": [1, 2], "runs": runs}


def test_path_file_is_validated(tmp_path):
    path = tmp_path / "p.json"
    path.write_text(json.dumps(_path_doc()))
    s = pl.summarise(pl.load_study(path))
    assert s["models"]["rnn"]["grad_ratio"][0] == pytest.approx(0.01)
    for damage in (lambda d: d["runs"].pop(), lambda d: d["runs"][0].update(grad=[1.0]),
                   lambda d: d["runs"][0].update(model="lstm"), lambda d: d.update(distances="x")):
        doc = _path_doc()
        damage(doc)
        path.write_text(json.dumps(doc))
        with pytest.raises(InputError):
            pl.load_study(path)
    assert list(pl.sequential_steps([1, 5, 9])["rnn"]) == [1, 5, 9]
    assert set(pl.sequential_steps([1, 5, 9])["attention"]) == {1.0}


@pytest.mark.parametrize("name", ["rnn", "attention"])
def test_input_gradient_equals_finite_differences(name):
    """‖∂ logit / ∂ x_t‖ of the study: autograd against a central difference, at a near and a far position."""
    from attnviz.training.path_length_study import MAX_LEN, VOCAB, build_models, sample

    model = build_models(0)[name].double().eval()
    ids, last, y = sample(np.random.default_rng(1), 1, MAX_LEN)

    def logit(x):
        pad = ids == VOCAB
        out = model.forward_embedded(x, last, key_pad=pad) if name == "attention" else model.forward_embedded(x, last)
        return out[0, y[0]]

    x = model.embed(ids).detach().double().requires_grad_(True)
    logit(x).backward()
    for t in (MAX_LEN - 2, 3):
        for i in (0, 5):
            eps = 1e-6
            xp, xm = x.detach().clone(), x.detach().clone()
            xp[0, t, i] += eps
            xm[0, t, i] -= eps
            with torch.no_grad():
                fd = (float(logit(xp)) - float(logit(xm))) / (2 * eps)
            assert x.grad[0, t, i].item() == pytest.approx(fd, rel=1e-4, abs=1e-9)


def _swap(doc: dict, key: str, a: str, b: str) -> dict:
    for run in doc["runs"]:
        run[key] = {a: b, b: a}.get(run[key], run[key])
    return doc


def test_scale_training_claim_holds_and_fails_with_labels_swapped(tmp_path, monkeypatch):
    from attnviz.lessons.claims import Workbench, evaluate_claim
    from attnviz.lessons.lesson import load_lesson

    scene = next(s for s in load_lesson("attention").scenes if s.claim["kind"] == "scale-training")
    bench = Workbench()
    res = evaluate_claim(scene, bench)
    assert res.ok, res.line
    swapped = _swap(json.loads(st.study_path().read_text()), "scale", "scaled", "unscaled")
    path = tmp_path / "swapped.json"
    path.write_text(json.dumps(swapped))
    monkeypatch.setattr(st, "study_path", lambda: path)
    bad = evaluate_claim(scene, bench)
    assert not bad.ok and bad.values["gap"] < 0
    assert bad.values["replay_share"] > 1  # the replay catches it too: each run replayed against the other's curve


def test_path_length_claim_holds_and_fails_with_models_swapped(tmp_path, monkeypatch):
    from attnviz.lessons.claims import Workbench, evaluate_claim
    from attnviz.lessons.lesson import load_lesson

    scene = next(s for s in load_lesson("attention").scenes if s.claim["kind"] == "path-length")
    bench = Workbench()
    res = evaluate_claim(scene, bench)
    assert res.ok, res.line
    assert res.values["recomputed"] <= 1e-3
    swapped = _swap(json.loads(pl.study_path().read_text()), "model", "rnn", "attention")
    path = tmp_path / "swapped.json"
    path.write_text(json.dumps(swapped))
    monkeypatch.setattr(pl, "study_path", lambda: path)
    assert not evaluate_claim(scene, bench).ok


def test_scale_replay_is_deterministic():
    from attnviz.training.scale_study import run_variant

    a = run_variant(False, "unit", 5, stop_after=3, eval_every=3, n_eval=16, d_head=16)
    b = run_variant(False, "unit", 5, stop_after=3, eval_every=3, n_eval=16, d_head=16)
    assert a == b and a["step"] == [0, 3] and all(math.isfinite(v) for v in a["loss"])
