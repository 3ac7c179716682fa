"""What a layer recorded on the fastest kernel keeps (issue 34, Deliver 2): no attention output beside z. The trace
recomputes it from z, W_O and b_O, equal to the output projection the model computed (hooked here, independently
of the capture); a layer recorded on eager attention still keeps the model's own tensor."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.hf.capture import capture_hf

from .tiny_models import build, tokens_of


def _own_outputs(model, inputs) -> list[np.ndarray]:
    """Each layer's o_proj output as the model computes it on its own forward (no attnviz recorder)."""
    seen = []
    hooks = [layer.self_attn.o_proj.register_forward_hook(lambda m, a, o: seen.append(o[0].detach().numpy().copy()))
             for layer in model.model.layers]
    try:
        with torch.no_grad():
            model(**inputs)
    finally:
        for h in hooks:
            h.remove()
    return seen


@pytest.mark.parametrize("name", ["llama", "qwen2"])
def test_an_on_demand_layer_keeps_no_output_and_recomputes_the_models_own(name):
    model, inputs = build(name)
    want = _own_outputs(model, inputs)
    trace = capture_hf(model, inputs, tokens_of(inputs, model), attention="on_demand")
    assert trace.n_layers == len(want) >= 2
    for i, own in enumerate(want):
        key = f"L{i}.out"
        assert key not in trace.arrays and key in trace
        got = trace[key]
        assert got.shape == own.shape
        np.testing.assert_allclose(got, own, rtol=1e-5, atol=1e-5 * float(np.abs(own).max()))
    # control: the other layer's output is not this one's
    assert np.abs(trace["L0.out"] - want[1]).max() > 1e-2 * float(np.abs(want[1]).max())


def test_an_eager_layer_still_keeps_the_models_own_output():
    model, inputs = build("llama")
    trace = capture_hf(model, inputs, tokens_of(inputs, model), attention="eager")
    assert "L0.out" in trace.arrays
