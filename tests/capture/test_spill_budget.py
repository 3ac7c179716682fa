"""A long capture's in-memory budget (attnviz.capture.spill.capture_budget): what the resident goal leaves beside
the model's own forward at that length, never under the floor; a fixed SPILL_BUDGET (ATTNVIZ_SPILL_BUDGET) wins.

The capture asks it with its own length and width: with the goal just above the forward's estimate plus what a
tiny decoder keeps, nothing is written; with the goal lowered by what it keeps, the arrays go to disk (the
control: the same capture, one figure changed)."""

from __future__ import annotations

import torch

from attnviz.capture import spill
from attnviz.hf.capture import capture_hf
from attnviz.models import memory

T = 300  # above ON_DEMAND_T: the SDPA kernel, q, k and lse kept, a spill store made


def _model():
    import transformers as tf

    torch.manual_seed(0)
    cfg = tf.LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    return tf.LlamaForCausalLM(cfg).eval()


def _capture(model):
    ids = torch.randint(0, 97, (1, T), generator=torch.Generator().manual_seed(3))
    return capture_hf(model, {"input_ids": ids}, [str(i) for i in range(T)], attention="on_demand")


def test_the_budget_is_what_the_goal_leaves_beside_the_forward(monkeypatch):
    monkeypatch.setattr(spill, "SPILL_BUDGET", None)
    fwd = memory.forward_bytes(576, 1536 / 576, 4096)
    assert spill.capture_budget(fwd) == spill.RESIDENT_GOAL - fwd
    # a 30-layer d 576 decoder keeps 1,026 MiB at 4,096 tokens (docs/PERFORMANCE.md): all of it in memory
    assert spill.capture_budget(fwd) >= 1026 << 20
    # at 16,384 tokens the forward's own peak leaves little, at 32,768 nothing: the floor
    assert spill.capture_budget(memory.forward_bytes(576, 1536 / 576, 16384)) < 512 << 20
    assert spill.capture_budget(memory.forward_bytes(576, 1536 / 576, 32768)) == spill.SPILL_FLOOR
    # the resident bound holds with room: forward + budget under 2 GiB at every length
    for t in (512, 2048, 4096, 8192, 16384):
        fwd = memory.forward_bytes(576, 1536 / 576, t)
        assert fwd + spill.capture_budget(fwd) < 2 << 30 or spill.capture_budget(fwd) == spill.SPILL_FLOOR
    monkeypatch.setattr(spill, "SPILL_BUDGET", 12345)  # fixed by the environment: taken as it is
    assert spill.capture_budget(fwd) == 12345


def test_a_capture_spills_only_beyond_the_budget_it_asks_for(monkeypatch):
    model = _model()
    monkeypatch.setattr(spill, "SPILL_BUDGET", None)
    monkeypatch.setattr(spill, "SPILL_MIN_BYTES", 1)
    monkeypatch.setattr(spill, "SPILL_FLOOR", 0)
    fwd = memory.forward_bytes(32, 2.0, T)
    monkeypatch.setattr(spill, "RESIDENT_GOAL", fwd + (64 << 20))
    roomy = _capture(model)
    assert roomy.spill is None  # everything fits: nothing written
    monkeypatch.setattr(spill, "RESIDENT_GOAL", fwd)  # the goal leaves nothing: every array to disk
    tight = _capture(model)
    assert tight.spill is not None and tight.spill.files


def test_a_process_holding_more_besides_its_weights_keeps_fewer_arrays(monkeypatch):
    """The app holds ~0.7 GB besides the weights (Qt, its views): the budget leaves room for it, so the process's
    whole resident goal holds (the app peaked at 2.67 GB on a 0.44 GB model at 8,192 tokens with the budget a
    command-line run gets). Control: that budget with the app's 0.7 GB beside it is over the product's 2 GB."""
    monkeypatch.setattr(spill, "SPILL_BUDGET", None)
    app = 700 * 10**6
    for t in (4096, 8192, 16384):
        fwd = memory.forward_bytes(576, 1536 / 576, t)
        budget = spill.capture_budget(fwd, held_bytes=app)
        assert budget <= spill.capture_budget(fwd)
        assert fwd + budget + app <= spill.PROCESS_GOAL or budget == spill.SPILL_FLOOR
    fwd = memory.forward_bytes(576, 1536 / 576, 8192)
    assert fwd + spill.capture_budget(fwd) + app > 2 * 10**9  # control: the command-line budget in the app
    assert spill.capture_budget(fwd, held_bytes=0) == spill.capture_budget(fwd)  # nothing held: as before


def test_the_capture_tells_the_budget_what_the_process_holds(monkeypatch):
    import attnviz.hf.capture as hc

    asked = []
    real = hc.capture_budget
    monkeypatch.setattr(hc, "capture_budget", lambda fwd, held_bytes=None, whole_bytes=None:
                        asked.append(held_bytes) or real(fwd, held_bytes, whole_bytes))
    _capture(_model()).close()
    assert asked and asked[0] is not None and asked[0] > 0  # this test process holds Python, torch, NumPy


def test_a_trace_that_fits_whole_under_the_bound_is_kept_whole(monkeypatch):
    """A 4,096-token capture of a SmolLM2-shaped decoder in a command-line process (~400 MiB held besides the
    weights) fits under the bound whole (forward + trace + held < 2 GB): its budget takes it all, so nothing is
    written (writing cost time at 4,096 tokens and the trims' faults more). The room PROCESS_GOAL keeps for the
    growth between trims would have sent ~150 MiB to disk. Controls: the app's ~1.1 GB held, or a trace expected
    to be larger than the room, get the budget with that room left (and spill)."""
    import dataclasses

    from attnviz.models.config import ModelConfig

    monkeypatch.setattr(spill, "SPILL_BUDGET", None)
    cfg = ModelConfig(kind="decoder", n_layers=30, n_heads=9, n_kv_heads=3, d_model=576, mlp_ratio=1536 / 576,
                      pos="rotary", head="lm", vocab_size=49152)
    fwd = memory.forward_bytes(576, 1536 / 576, 4096)
    whole = memory.on_demand_trace_bytes(cfg, 4096)
    assert 900 << 20 <= whole <= 1000 << 20  # the trace keeps 925 MiB beyond the weight views (bench long)
    cli = 400 << 20
    assert spill.capture_budget(fwd, held_bytes=cli, whole_bytes=whole) >= whole
    assert fwd + whole + cli <= spill.PROCESS_BOUND  # and the bound holds
    assert spill.capture_budget(fwd, held_bytes=cli) < whole  # control: without the estimate, the room is kept
    app = 1100 << 20
    assert spill.capture_budget(fwd, held_bytes=app, whole_bytes=whole) < whole  # control: the app spills
    bigger = memory.on_demand_trace_bytes(dataclasses.replace(cfg, n_layers=40), 4096)
    assert spill.capture_budget(fwd, held_bytes=cli, whole_bytes=bigger) < bigger  # control: larger than the room


def test_the_estimate_of_a_whole_trace_is_what_a_capture_keeps():
    """on_demand_trace_bytes against a real capture's bytes beyond the views of the weights (tiny decoder; the
    output head's prediction and the small per-layer facts make the rest)."""
    import numpy as np

    from attnviz.hf.describe import describe_model

    model = _model()
    trace = _capture(model)
    params = [p.detach().numpy() for p in model.parameters()]
    arrays = {id(a): a for a in trace.arrays.values()}.values()
    views = sum(a.nbytes for a in arrays if any(np.may_share_memory(a, p) for p in params))
    kept = trace.nbytes - views
    cfg = describe_model(model.config, "LlamaForCausalLM")
    estimate = memory.on_demand_trace_bytes(cfg, T)
    if trace.spill is not None:
        trace.close()
    assert 0.9 * kept <= estimate <= 1.2 * kept, (estimate, kept)
