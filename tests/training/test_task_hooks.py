"""The two training hooks a task declares: its own initialisation and per-parameter weight decay."""

from __future__ import annotations

import pytest
import torch

from attnviz.training import train
from attnviz.training.schedule import make_optimizer


def test_decay_by_name_gives_a_parameter_its_own_group(tiny_task):
    from attnviz.models.registry import build_model

    model = build_model(tiny_task.model_config())
    name = next(n for n, p in model.named_parameters() if p.dim() >= 2)
    opt = make_optimizer(model, 1e-3, 0.1, {name: 2.5})
    target = dict(model.named_parameters())[name]
    decays = {id(p): g["weight_decay"] for g in opt.param_groups for p in g["params"]}
    assert decays[id(target)] == 2.5
    assert len(decays) == sum(p.requires_grad for p in model.parameters())  # every parameter exactly once
    assert sum(len(g["params"]) for g in opt.param_groups) == len(decays)
    # the rest keep the rule: matrices decayed, vectors not
    for n, p in model.named_parameters():
        if n != name:
            assert decays[id(p)] == (0.1 if p.dim() >= 2 else 0.0)
    with pytest.raises(ValueError, match="does not have"):
        make_optimizer(model, 1e-3, 0.1, {"no.such.weight": 1.0})


def test_the_loop_runs_the_tasks_hooks(tiny_task, monkeypatch):
    seen = {}

    def prepare(model):
        seen["called"] = True
        torch.nn.init.zeros_(next(p for p in model.parameters() if p.dim() >= 2))

    monkeypatch.setattr(tiny_task, "prepare_model", prepare)
    first = next(n for n, p in _model(tiny_task).named_parameters() if p.dim() >= 2)
    monkeypatch.setattr(tiny_task, "decay_by_name", {first: 1.0})
    ev = None
    for ev in train(tiny_task, steps=1, device="cpu", seed=0, n_snapshots=0):
        pass
    assert seen == {"called": True}
    # one AdamW step from zero moves a weight by at most lr · (1 + a little): the zero start really happened
    w = dict(ev.result.model.named_parameters())[first]
    assert float(w.detach().abs().max()) <= 2 * ev.result.info["lr"]


def _model(task):
    from attnviz.models.registry import build_model

    return build_model(task.model_config())
