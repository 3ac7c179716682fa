"""Issue 14, item 9 and the notices: NaN/Inf in a trace, characters read as [UNK] or left out, help text."""

from __future__ import annotations

import argparse

import numpy as np
import pytest
import torch

from tests._robust_models import SENTENCE, run_cli, save_text_model
from attnviz.capture.finite import add_nonfinite_notice, nonfinite_arrays
from attnviz.text.tokenizer import Tokenizer


def test_nan_weights_give_a_trace_notice_in_the_cli(tmp_path, capsys):
    from safetensors.torch import load_file, save_file

    path = save_text_model(tmp_path / "m")
    state = load_file(path / "model.safetensors")
    state["stack.blocks.1.attn.q_proj.weight"][0, 0] = float("nan")
    save_file(state, str(path / "model.safetensors"))
    out = tmp_path / "t.npz"
    code, _, err = run_cli(capsys, "trace", "--model", path, "--text", SENTENCE, "-o", out, "--device", "cpu")
    assert code == 0 and out.exists()
    assert err.count("\n") == 1 and "NaN or infinite values in L1.q" in err


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_nonfinite_finder_skips_masks_and_counts_values(dtype):
    arrays = {"L0.mask": np.array([0.0, -np.inf], dtype), "L0.probs": np.array([[np.nan, 0.5], [np.inf, 1.0]], dtype),
              "tokens": np.array(["a", "b"]), "L1.probs": np.ones(3, dtype), "L1.resid": np.full(4, 65504, dtype)}
    assert nonfinite_arrays(arrays) == {"L0.probs": 2}
    meta = {"notice": "the text was truncated"}
    add_nonfinite_notice(meta, arrays)
    assert meta["nonfinite"] == ["L0.probs"]
    assert meta["notice"].startswith("the text was truncated; NaN or infinite values in L0.probs (2 of 4)")


def test_overflowing_attention_is_reported():
    from attnviz.capture import capture
    from attnviz.models import ModelConfig, build_model

    cfg = ModelConfig(kind="encoder", vocab_size=10, n_layers=1, n_heads=1, d_model=8, max_len=8)
    model = build_model(cfg).eval()
    with torch.no_grad():
        model.stack.blocks[0].attn.q_proj.bias.fill_(1e20)  # q and k finite, q·k beyond float32
        model.stack.blocks[0].attn.k_proj.bias.fill_(1e20)
    trace = capture(model, {"ids": torch.tensor([[1, 2, 3]])}, ["a", "b", "c"])
    # the scores are recomputed from q and k, not stored (issue 34): the first stored array hit is the weights
    assert np.isfinite(trace["L0.q"]).all() and "L0.probs" in trace.meta["nonfinite"]
    with np.errstate(over="ignore", invalid="ignore"):
        assert not np.isfinite(trace["L0.logits"]).all()  # recomputed, they overflow as the model's did
    assert "NaN or infinite values" in trace.meta["notice"]


@pytest.mark.parametrize("kind", ["char", "word", "bpe"])
def test_tokenizers_report_unknown_characters(kind):
    tok = Tokenizer.build(kind, ["the cat sat on the mat"] * 3, vocab_size=40)
    enc = tok.encode("the cat 😀 sat\x07")
    assert "😀" in enc.unknown and "\x07" in enc.unknown
    assert "read as [UNK]" in enc.notice and "'\\x07'" in enc.notice  # control characters shown escaped
    assert tok.encode("the cat sat").notice is None


def test_unknown_characters_reach_the_cli_notice(tmp_path, capsys):
    path = save_text_model(tmp_path / "m")
    code, _, err = run_cli(capsys, "trace", "--model", path, "--text", "the cat 😀 sat", "-o", tmp_path / "t.npz",
                           "--device", "cpu")
    assert code == 0 and "read as [UNK]" in err and "😀" in err and err.count("\n") == 1


def test_translate_says_what_it_left_out(tmp_path, capsys):
    code, _, err = run_cli(capsys, "trace", "--model", "translate", "--text", "the big dog sees a cat! 😀 \x07",
                           "-o", tmp_path / "t.npz", "--device", "cpu")
    assert code == 0 and err.count("\n") == 1
    assert "left out (not words of this grammar)" in err and "'😀'" in err and "'\\x07'" in err


def test_every_command_and_option_has_help_and_examples():
    from attnviz.cli import build_parser

    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert set(sub.choices) >= {"gui", "trace", "steps", "train", "eval", "export", "bench"}
    for name, p in sub.choices.items():
        assert p.description, f"{name} has no description"
        assert p.epilog and p.epilog.startswith("examples:") and "attnviz" in p.epilog, name
        for action in p._actions:
            if isinstance(action, argparse._HelpAction):
                continue
            assert action.help, f"attnviz {name} {action.option_strings} has no help text"
        text = p.format_help()
        assert "examples:" in text


def test_traces_of_other_adapters_get_the_same_nan_notice(tmp_path, monkeypatch):
    """The Hugging Face adapter checks what its own capture (hooks) returns, like capture() does."""
    from attnviz.capture import capture
    from attnviz.hf import capture as hf_capture
    from attnviz.models.checkpoint import load_checkpoint
    from attnviz.runtime import prepare_text
    from attnviz.runtime.huggingface import HuggingFaceAdapter

    loaded = load_checkpoint(save_text_model(tmp_path / "m"), device="cpu")

    def adapter_capture(*args, layers=None, preview=None, preview_layers=None, attention=None, **kwargs):
        # a foreign capture whose output holds a NaN (capture_hf's own options mean nothing to capture())
        trace = capture(*args, **kwargs)
        trace.arrays["L0.probs"] = trace.arrays["L0.probs"].copy()
        trace.arrays["L0.probs"][0, 0, 0] = np.nan
        return trace

    monkeypatch.setattr(hf_capture, "capture_hf", adapter_capture)
    prep = prepare_text(loaded, SENTENCE)
    trace = HuggingFaceAdapter().capture(loaded, prep, dict(prep.meta))
    assert trace.meta["nonfinite"] == ["L0.probs"] and "NaN or infinite values in L0.probs" in trace.meta["notice"]
