"""The recorders' module walk, kept per model (attnviz/hf/module_plan.py): equal to a fresh walk, reused while the
module tree is unchanged, rebuilt after surgery, and never keeping the model alive."""

from __future__ import annotations

import copy
import gc
import weakref

import pytest

from attnviz.hf.attention_record import AttentionRecorder
from attnviz.hf.module_plan import module_plan

from .tiny_models import build


@pytest.mark.parametrize("name", ["llama", "gpt2"])
def test_plan_equals_a_fresh_walk(name):
    model, _ = build(name)
    plan = module_plan(model)
    assert plan.modules(model) == list(model.modules())
    assert plan.names == {id(m): n for n, m in model.named_modules()}
    assert plan.parents(model) == {id(c): m for m in model.modules() for c in m.children()}
    assert plan.select(model, "attention-test", lambda m: "Attention" in type(m).__name__) == \
        [m for m in model.modules() if "Attention" in type(m).__name__]


def test_plan_reused_while_unchanged_and_rebuilt_after_surgery():
    model, _ = build("llama")
    before = module_plan(model)
    assert module_plan(model) is before  # nothing changed: no second walk
    layer = model.model.layers[1]
    new_attn = copy.deepcopy(layer.self_attn)
    layer.self_attn = new_attn  # a user's surgery between two captures
    after = module_plan(model)
    assert after is not before
    recorder = AttentionRecorder(model)
    assert any(m is new_attn for m in recorder.modules)
    assert recorder.names[id(new_attn)] == "model.layers.1.self_attn"
    # control: the plan kept from before the surgery does not know the new module (so reusing it would be wrong)
    assert not any(m is new_attn for m in before.modules(model))


def test_plan_rebuilt_when_a_module_is_renamed():
    model, _ = build("llama")
    before = module_plan(model)
    layer = model.model.layers[0]
    attn = layer._modules.pop("self_attn")
    layer._modules["self_attention"] = attn  # same module, another name
    after = module_plan(model)
    assert after is not before
    assert after.names[id(attn)] == "model.layers.0.self_attention"
    assert before.names[id(attn)] == "model.layers.0.self_attn"  # control: the stale name


def test_plan_does_not_keep_the_model_alive():
    model, _ = build("gpt2")
    module_plan(model)
    ref = weakref.ref(model)
    del model
    gc.collect()
    assert ref() is None
