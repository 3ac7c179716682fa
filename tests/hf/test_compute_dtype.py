"""The model's own precision end to end (issue 34, :mod:`attnviz.capture.compute_dtype`): a float16 or bfloat16
checkpoint of tiny random Llama, Qwen2 and GPT-2 models runs in its dtype, the trace keeps its arrays in it
(bfloat16 as float32: every value exact) and ``Trace.probs`` returns float16 blocks for float16 and float32 for
bfloat16.

References, independent of attnviz's capture: the model's own eager attention in the same dtype, and a float64
causal softmax of the q and k the model hands its attention function (recorded by an attention function of this
test's own that runs SDPA). Measured here (60 tokens, 2 layers, queries sharpened to scores of a few units):
a short input (eager) equals the eager attention exactly. A long one (on demand: float32 from the half q and k,
as torch's CPU SDPA kernel computes) is, for float16, the float64 reference rounded to float16 in ≥ 97 % of the
cells and one float16 unit from it in the rest; for bfloat16 within 6.6e-5 (relative) of it. Both come from the
kernel's log-sum-exp, which for half inputs is off by up to ~8e-5 (torch 2.13; 3e-7 for float32). Against the
model's eager attention in the same dtype the gap is at most 2.4e-4 (float16) / 2.0e-3 (bfloat16): the eager
kernel's own rounding of scores and weights, as large as a float32 run of the same weights shows (2.2e-4 to
2.5e-4 / 1.9e-3 to 2.2e-3); asserted: one unit of that dtype at 0.5-1. Controls: the float32 run's q and k miss
the reference bounds (≤ 92 % of cells equal; ≥ 3.3e-3 relative), and the eager probabilities of a bfloat16 model
are bfloat16 values (a float32 run's are not).
"""

from __future__ import annotations

import shutil

import numpy as np
import pytest
import torch

from attnviz.hf.capture import capture_hf
from attnviz.hf.loader import load_hf_model

from .factories import hf, make_model, save_quietly

FAMILIES = ("llama", "qwen2", "gpt2")
T = 60
# a long input's probabilities (float32 from the half q and k, as the SDPA kernel) against the model's own eager
# attention in the same dtype, whose scores and weights are rounded to that dtype: at most one unit of that dtype
# at 0.5-1 (the figures measured: the module's docstring)
EAGER_GAP_16, EAGER_GAP_BF16 = 2.0 ** -11, 2.0 ** -8


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """family → dtype → a checkpoint saved in that dtype (its config says so: "auto" loads it in it)."""
    root = tmp_path_factory.mktemp("compute_dtype")
    out = {}
    for family in FAMILIES:
        src = make_model(family, root / family, max_pos=512)
        for dtype in ("float16", "bfloat16"):
            dst = root / f"{family}_{dtype}"
            save_quietly(_sharpen(load_hf_model(src, device="cpu", dtype=dtype).model), dst)
            for f in src.iterdir():
                if not (dst / f.name).exists():
                    shutil.copy(f, dst / f.name)
            out.setdefault(family, {})[dtype] = dst
    return out


def _sharpen(model):
    """Queries 6× larger (scores of a few units, as trained models have): then rounding q to float16 moves a
    weight by several float16 units, which the controls need to be visible."""
    with torch.no_grad():
        for name, p in model.named_parameters():
            if name.endswith("q_proj.weight"):
                p.mul_(6)
            elif name.endswith("c_attn.weight"):  # GPT-2: [q | k | v] columns
                p[:, : p.shape[1] // 3].mul_(6)
    return model


def _ids():
    return torch.randint(3, 150, (1, T), generator=torch.Generator().manual_seed(1))


def _recorded_qk(model, ids):
    """[(q, k, scaling)] per layer as the model hands them to its attention function (its own projections,
    rotary and dtype), run through SDPA; then the model's attention is put back."""
    tf = hf()
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    seen = []

    def record(module, query, key, value, attention_mask, scaling=None, dropout=0.0, **kwargs):
        seen.append((query[0].detach().clone(), key[0].detach().clone(), scaling))
        return sdpa_attention_forward(module, query, key, value, attention_mask, scaling=scaling, dropout=dropout,
                                      **kwargs)

    tf.AttentionInterface.register("test_compute_dtype_record", record)
    before = model.config._attn_implementation
    model.set_attn_implementation("test_compute_dtype_record")
    try:
        with torch.no_grad():
            model(input_ids=ids)
    finally:
        model.set_attn_implementation(before)
    return seen


def _softmax64(q, k, scaling):
    """(H, T, T) float64 causal softmax of q (H, T, d) against k (H_kv, T, d) as the tensors hold them."""
    q, k = q.double().numpy(), k.double().numpy()
    k = np.repeat(k, q.shape[0] // k.shape[0], axis=0)  # query head h reads key head h // group
    d = q.shape[-1]
    s = q @ k.transpose(0, 2, 1) * (d ** -0.5 if scaling is None else float(scaling))
    s[:, np.triu(np.ones((T, T), bool), 1)] = -np.inf
    s -= s.max(-1, keepdims=True)
    p = np.exp(s)
    return p / p.sum(-1, keepdims=True)


def _eager(model, ids):
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        with torch.no_grad():
            return [a[0].float().numpy() for a in model(input_ids=ids, output_attentions=True).attentions]
    finally:
        model.set_attn_implementation(before)


def _rel(a, b, live):
    """Largest relative difference of ``a`` from ``b`` over the cells ``live``."""
    return float((np.abs(a.astype(np.float64) - b)[:, live] / b[:, live]).max())


def _ulps16(a, b):
    """Distance in float16 units between float16 ``a`` and float64 ``b`` rounded to float16."""
    ia = a.astype(np.float16).view(np.int16).astype(np.int64)
    ib = b.astype(np.float16).view(np.int16).astype(np.int64)
    return np.abs(ia - ib)


@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_probabilities_come_in_the_model_precision(folders, family, dtype):
    loaded = load_hf_model(folders[family][dtype], device="cpu")  # "auto": the checkpoint's own
    model, ids = loaded.model, _ids()
    assert loaded.dtype == dtype
    tokens = [str(i) for i in range(T)]
    eager = capture_hf(model, {"input_ids": ids}, tokens, attention="eager")
    lazy = capture_hf(model, {"input_ids": ids}, tokens, attention="on_demand")
    want = np.float16 if dtype == "float16" else np.float32
    for trace in (eager, lazy):
        assert trace.meta["compute_dtype"] == dtype and trace.probs_dtype == want
        assert trace.meta["precision"] == ("float16" if dtype == "float16" else "float32")
        assert trace["L0.q"].dtype == want and trace["L0.k"].dtype == want  # stored as computed
        assert all(trace.probs(i).dtype == want for i in range(trace.n_layers))
        assert trace.probs(1, heads=[0, 2], rows=slice(5, 9), cols=[0, 3]).dtype == want  # blocks too
        assert trace["L1.probs"].dtype == want  # the whole array read by its name too
    if dtype == "bfloat16":  # bfloat16 kept as float32: the low 16 bits of every value are 0 (exact upcast)
        assert not np.any(np.ascontiguousarray(lazy["L0.q"]).view(np.uint32) & 0xFFFF)
    own = _eager(model, ids)
    refs = [_softmax64(q, k, sc) for q, k, sc in _recorded_qk(model, ids)]
    with torch.no_grad():
        f32 = load_hf_model(folders[family][dtype], device="cpu", dtype="float32").model
        refs32 = [_softmax64(q, k, sc) for q, k, sc in _recorded_qk(f32, ids)]  # same weights, float32 q and k
    for i in range(eager.n_layers):
        np.testing.assert_array_equal(eager.probs(i), own[i][0] if own[i].ndim == 4 else own[i])  # exactly eager's
        got, live = lazy.probs(i), np.tril(np.ones((T, T), bool))  # the causal cells
        gap = float(np.abs(got.astype(np.float64) - own[i]).max())
        assert gap <= (EAGER_GAP_16 if dtype == "float16" else EAGER_GAP_BF16), gap
        if dtype == "float16":  # the float64 reference rounded once to float16, up to one unit (the kernel's lse)
            units, units32 = _ulps16(got, refs[i])[:, live], _ulps16(got, refs32[i])[:, live]
            assert int(units.max()) <= 1 and float((units == 0).mean()) >= 0.95
            assert float((units32 == 0).mean()) < 0.95  # control: float32 q and k are another computation
        else:  # float32, within the kernel's log-sum-exp error of the float64 reference
            assert _rel(got, refs[i], live) <= 1e-4
            assert _rel(got, refs32[i], live) > 1e-4  # control
    if dtype == "bfloat16":  # the eager attention's own bfloat16 values, kept exactly in float32
        assert not np.any(eager.probs(0).view(np.uint32) & 0xFFFF)
        f32_own = _eager(f32, ids)[0]
        assert np.any(np.ascontiguousarray(f32_own).view(np.uint32) & 0xFFFF)  # control: float32 values are not


def test_the_input_memory_check_counts_the_bytes_the_trace_keeps(folders, monkeypatch):
    """Before a long input runs, its estimate counts 2 bytes a kept number for a float16 model and 4 for
    float32 (bfloat16 too: kept as float32): with memory for the float16 trace only, the float16 model runs
    and the same checkpoint in float32 is refused (control)."""
    from attnviz.capture import spill
    from attnviz.errors import InputError
    from attnviz.models import memory
    from attnviz.runtime import run_trace

    half = load_hf_model(folders["llama"]["float16"], device="cpu")
    text = " ".join(["the cat sat on the mat"] * 60)
    n = len(half.tokenizer.encode(text).ids) if hasattr(half.tokenizer, "encode") else 0
    assert n > memory.LOAD_CHECK_TOKENS  # else the check is not asked

    def need(element_bytes):
        cfg = half.config  # the budget the input check uses (what the resident goal leaves beside the forward)
        budget = spill.capture_budget(memory.forward_bytes(cfg.d_model, cfg.mlp_ratio, n, element_bytes))
        return memory.estimate_memory(cfg, n, copies=0, on_demand=True, spill_budget=budget,
                                      element_bytes=element_bytes)

    e16, e32 = need(2), need(4)
    assert e16.activations * 2 == pytest.approx(e32.activations, rel=1e-6)  # half the bytes, same numbers
    free = (e16.total + e32.total) / 2 / memory.SHARE_OF_FREE
    monkeypatch.setattr(memory, "available_memory", lambda: free)
    trace = run_trace(half, text=text, rollout=False)
    assert trace.meta["compute_dtype"] == "float16" and trace.probs(0, rows=[0]).dtype == np.float16
    for dtype in ("float32", "bfloat16"):  # controls: 4 bytes a kept number
        with pytest.raises(InputError, match="needs about"):
            run_trace(load_hf_model(folders["llama"]["float16"], device="cpu", dtype=dtype), text=text,
                      rollout=False)


def test_where_the_dtype_is_said_bfloat16_says_its_arrays_are_float32(folders, monkeypatch, qtbot):
    """The CLI's line and the model panel add one line for a bfloat16 model; a float16 one has none (control)."""
    from attnviz.cli import main
    from attnviz.gui.panels.model_panel import ModelPanel

    lines = []
    monkeypatch.setattr("builtins.print", lambda *a, **k: lines.append(" ".join(map(str, a))))
    panel = ModelPanel()
    qtbot.addWidget(panel)
    for dtype in ("bfloat16", "float16"):
        folder = folders["llama"][dtype]
        out = folder.parent / f"t_{dtype}.npz"
        assert main(["trace", "--model", str(folder), "--text", "the cat sat", "-o", str(out)]) == 0
        panel.show_loaded(load_hf_model(folder, device="cpu"))
        said = "arrays kept in float32 (NumPy has no bfloat16"
        assert (said in lines[-1]) == (dtype == "bfloat16"), lines[-1]
        assert (said in panel.details.text()) == (dtype == "bfloat16")
        assert f"run in {dtype}" in lines[-1]


@pytest.mark.parametrize("asked, runs", [("auto", "float32"), ("float32", "float32"), ("float16", "float16"),
                                         ("bfloat16", "bfloat16")])
def test_cli_dtype_end_to_end(folders, asked, runs, capsys):
    """``--dtype`` on a float32 checkpoint: the trace file says the dtype the model ran in and its probabilities
    come back in that precision after reopening; "auto" keeps the checkpoint's float32 (the control)."""
    from attnviz.capture.trace import Trace
    from attnviz.cli import main

    folder = folders["qwen2"]["float16"].parent / "qwen2"  # the float32 checkpoint
    out = folder.parent / f"cli_{asked}.npz"
    assert main(["trace", "--model", str(folder), "--dtype", asked, "--text", "the cat sat on the mat",
                 "-o", str(out)]) == 0
    assert f"run in {runs}" in capsys.readouterr().out
    trace = Trace.load(out)
    assert trace.meta["compute_dtype"] == runs
    assert trace.probs(0).dtype == (np.float16 if runs == "float16" else np.float32)
    assert trace["L0.q"].dtype == (np.float16 if runs == "float16" else np.float32)


def test_cli_unknown_dtype_is_one_line(folders, capsys):
    from attnviz.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["trace", "--model", str(folders["llama"]["float16"]), "--dtype", "float8", "--text", "a", "-o", "x.npz"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "float8" in err[-1] and "invalid choice" in err[-1]


def test_python_load_dtype_end_to_end(folders):
    """``attnviz.load(folder, dtype=...)``: the Traced's probabilities in that precision; the float32 checkpoint
    loaded with "auto" stays float32 (control)."""
    import attnviz

    folder = folders["gpt2"]["float16"].parent / "gpt2"  # the float32 checkpoint
    for asked, want in (("float16", np.float16), ("bfloat16", np.float32), ("auto", np.float32)):
        t = attnviz.load(str(folder), dtype=asked).trace("the cat sat on the mat")
        assert t.probs(0).dtype == want and t.probs(1, heads=0, rows=[1]).dtype == want
        assert t.trace.meta["compute_dtype"] == ("float32" if asked == "auto" else asked)
