"""A long capture's arrays kept on disk (attnviz.capture.spill): tiny random decoders with the memory budget set
to 0 so that every array of at least a few bytes is written to the trace's temporary folder and memory-mapped.

Checked: the spilled arrays are memory maps and equal the in-memory capture's; probabilities of a spilled trace
equal the model's own eager softmax within 1e-6 (negative control: a spilled k of another layer does not);
the folder goes with the trace (garbage collection, close()); a saved spilled trace round-trips, its large
members mapped again on load."""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest
import torch

from attnviz.capture import spill
from attnviz.capture import trace_file as trace_module
from attnviz.capture.trace import Trace
from attnviz.hf.capture import capture_hf

T = 300  # above ON_DEMAND_T: the capture runs on the SDPA kernel and keeps q, k and lse


def _model(name: str = "llama"):
    import transformers as tf

    torch.manual_seed(0)
    if name == "gpt2":
        cfg = tf.GPT2Config(vocab_size=97, n_embd=32, n_layer=3, n_head=4, n_positions=512)
        return tf.GPT2LMHeadModel(cfg).eval()
    cfg = tf.LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=3,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    return tf.LlamaForCausalLM(cfg).eval()


def _capture(model, spilled: bool, monkeypatch) -> Trace:
    ids = torch.randint(0, 97, (1, T), generator=torch.Generator().manual_seed(3))
    with monkeypatch.context() as m:
        if spilled:
            m.setattr(spill, "SPILL_BUDGET", 0)
            m.setattr(spill, "SPILL_MIN_BYTES", 1)
        return capture_hf(model, {"input_ids": ids}, [str(i) for i in range(T)], attention="on_demand")


@pytest.fixture(scope="module", params=["llama", "gpt2"])
def model(request):
    return _model(request.param)


def _eager(model, n_layers: int) -> list[np.ndarray]:
    ids = torch.randint(0, 97, (1, T), generator=torch.Generator().manual_seed(3))
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            out = model(input_ids=ids, output_attentions=True)
    finally:
        model.set_attn_implementation(before)
    return [a[0].numpy() for a in out.attentions[:n_layers]]


def test_spilled_arrays_are_maps_equal_to_memory(model, monkeypatch):
    kept = _capture(model, False, monkeypatch)
    spilled = _capture(model, True, monkeypatch)
    assert kept.spill is None  # within the budget nothing is written
    assert spilled.spill is not None and spilled.spill.files
    layer_keys = [k for k in kept.arrays if k.startswith("L") and not k.rpartition(".")[2].startswith(("W_", "b_"))]
    assert sorted(kept.keys()) == sorted(spilled.keys())
    maps = 0
    for key in layer_keys:
        a, b = kept.arrays[key], spilled.arrays[key]
        maps += isinstance(b, np.memmap)
        assert a.shape == b.shape and a.dtype == b.dtype, key
        np.testing.assert_array_equal(a, b, err_msg=key)
    assert maps >= 3 * 5  # x, q, k, v, z … of every layer are maps of files in the folder
    assert all(not spilled.arrays[k].flags.writeable for k in layer_keys if isinstance(spilled.arrays[k], np.memmap))


def test_spilled_probs_equal_eager_softmax(model, monkeypatch):
    spilled = _capture(model, True, monkeypatch)
    assert isinstance(spilled.arrays["L1.q"], np.memmap) and isinstance(spilled.arrays["L1.k"], np.memmap)
    eager = _eager(model, spilled.n_layers)
    for layer, want in enumerate(eager):
        got = spilled.probs(layer)
        assert got.shape == want.shape
        assert np.abs(got - want).max() <= 1e-6, layer
        rows = spilled.probs(layer, heads=[1, 3], rows=slice(100, 140), cols=[0, 5, 299])
        assert np.abs(rows - want[[1, 3]][:, 100:140][:, :, [0, 5, 299]]).max() <= 1e-6
    # negative control: layer 1 recomputed with layer 0's spilled keys is not the model's layer 1
    wrong = Trace(tokens=spilled.tokens, meta=spilled.meta,
                  arrays={**spilled.arrays, "L1.k": spilled.arrays["L0.k"]})
    from attnviz.capture.on_demand import attach

    attach(wrong.arrays, wrong.meta, wrong.deferred)
    assert np.abs(wrong.probs(1) - eager[1]).max() > 1e-3


def test_folder_removed_with_the_trace(monkeypatch):
    model = _model()
    first = _capture(model, True, monkeypatch)
    folder = first.spill.folder
    q = first.arrays["L0.q"]
    assert os.path.isdir(folder) and os.listdir(folder)
    del first
    gc.collect()
    assert not os.path.exists(folder)
    assert np.isfinite(q).all()  # an array read before stays readable (the file lives while it is mapped)
    second = _capture(model, True, monkeypatch)
    folder = second.spill.folder
    second.close()
    assert not os.path.exists(folder) and second.spill.closed
    # negative control: a trace still alive keeps its folder
    third = _capture(model, True, monkeypatch)
    gc.collect()
    assert os.path.isdir(third.spill.folder) and os.listdir(third.spill.folder)


def test_saved_spilled_trace_round_trips(model, monkeypatch, tmp_path):
    spilled = _capture(model, True, monkeypatch)
    path = tmp_path / "long.npz"
    spilled.save(path)
    monkeypatch.setattr(trace_module, "LOAD_SPILL_BYTES", 4096)  # this trace's larger members mapped on load
    loaded = Trace.load(path)
    assert loaded.spill is not None and isinstance(loaded.arrays["L2.q"], np.memmap)
    assert set(spilled.keys()) == set(loaded.keys())  # (derived scores and outputs are never written)
    for key in spilled.arrays:
        np.testing.assert_array_equal(np.asarray(loaded[key]), np.asarray(spilled[key]), err_msg=key)
    np.testing.assert_array_equal(loaded.probs(2, rows=slice(200, 210)), spilled.probs(2, rows=slice(200, 210)))
    folder = loaded.spill.folder
    del loaded
    gc.collect()
    assert not os.path.exists(folder)
    monkeypatch.setattr(trace_module, "LOAD_SPILL_BYTES", 1 << 40)  # negative control: nothing mapped
    small = Trace.load(path)
    assert small.spill is None and not isinstance(small.arrays["L2.q"], np.memmap)


def test_long_capture_prediction_is_the_last_positions(model, monkeypatch):
    # the long capture asks the model for the last position's logits only: still the model's own next-token
    # distribution (negative control: the second-to-last position's is not it)
    spilled = _capture(model, True, monkeypatch)
    ids = torch.randint(0, 97, (1, T), generator=torch.Generator().manual_seed(3))
    with torch.no_grad():
        logits = model(input_ids=ids).logits[0]
    want = torch.softmax(logits.float(), -1).numpy()
    got = np.asarray(spilled["prediction"])
    assert got.shape == want[-1].shape
    assert np.abs(got - want[-1]).max() <= 1e-6
    assert np.abs(got - want[-2]).max() > 1e-4


@pytest.mark.parametrize("spilled, estimate, growth, trims", [
    (True, None, 0, 0), (True, None, 1 << 30, 2), (False, 1 << 41, 1 << 30, 2), (False, 1 << 39, 1 << 30, 0),
    (False, 1, 1 << 30, 2), (False, 1 << 41, 0, 0)])
def test_memory_is_handed_back_only_when_it_has_grown(monkeypatch, spilled, estimate, growth, trims):
    """A layer-by-layer capture trims the allocator only after the resident size has grown by the step since its
    first layer (a trim after every layer made each next layer fault its pages in again; one at the first layer
    handed back the previous capture's memory, faulted in again at once); a process that grows by a GiB a layer is
    trimmed after every later layer (2 of 3: the control), one that does not grow never. Also while nothing is
    spilled yet, when the whole trace is not expected to fit the budget (the app's 8,192-token capture keeps its
    first ~15 layers in memory: untrimmed, it grew by 1.9 GB). A trace expected to fit whole is not trimmed (at
    4,096 tokens each trim's holes were faulted in again: 6-33 thousand faults a capture), however it grows,
    unless it keeps more than expected (an estimate of 1 byte: trimmed as before; a float16 trace at 8,192
    tokens kept 1,690 MiB against an estimate of 934 and, untrimmed, peaked at weights + 2,173 MiB)."""
    import attnviz.hf.capture as hc
    import attnviz.hf.layer_convert as lc

    calls, rss = [], [0]

    def grow():
        rss[0] += growth
        return rss[0]
    monkeypatch.setattr(lc, "_TRIM", lambda pad: calls.append(pad))
    monkeypatch.setattr(lc, "resident_bytes", grow)
    if spilled:
        trace = _capture(_model(), True, monkeypatch)
    else:
        monkeypatch.setattr(spill, "SPILL_BUDGET", 1 << 40)
        # what the whole trace is expected to keep: within the budget, beyond it (it then spills late, if at
        # all), or short of what it keeps
        monkeypatch.setattr(hc, "on_demand_trace_bytes", lambda cfg, t, e: estimate)
        trace = _capture(_model(), False, monkeypatch)
        assert trace.spill is None or not trace.spill.files  # nothing was written: every array stayed in memory
    if trace.spill is not None:
        trace.close()
    assert len(calls) == trims
