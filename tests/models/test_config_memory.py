"""Issue 29, item 3: a config's memory is estimated from the config (parameters, position tables, activations)
and refused before any tensor is allocated — even when every field is inside its own limit."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import textwrap

import pytest

from tests._robust_models import SENTENCE, save_text_model
from attnviz.errors import ModelLoadError
from attnviz.models.config import ModelConfig
from attnviz.models.expected_shapes import expected_shapes
from attnviz.models.memory import (check_config_memory, count_parameters, estimate_memory,
                                   position_table_elements)

# each field inside validate.LIMITS, the whole far beyond any machine
HUGE = {"d_model": 16384, "n_layers": 256, "n_heads": 256, "mlp_ratio": 64.0}
SIN_16K = {"d_model": 16384, "max_len": 65536, "pos": "sinusoidal"}
SIN_4K = {"d_model": 4096, "max_len": 65536, "pos": "sinusoidal"}  # fits; used to peak at 2.35 GB before refusal
RSS_LIMIT_MB = 500


@pytest.mark.parametrize("kw", [
    dict(kind="encoder", vocab_size=50, n_layers=2, n_heads=4, d_model=32),
    dict(kind="encoder", vocab_size=50, n_layers=1, n_heads=4, n_kv_heads=2, d_model=32, mlp_ratio=2.5,
         norm="post", pos="sinusoidal", attn_bias=False, head="mlm"),
    dict(kind="decoder", vocab_size=40, n_layers=3, n_heads=4, n_kv_heads=1, d_model=32, d_head=16, pos="none",
         head="lm"),
    dict(kind="encoder-decoder", vocab_size=40, tgt_vocab_size=30, n_layers=2, n_dec_layers=3, n_heads=2,
         d_model=16, head="lm"),
    dict(kind="encoder-decoder", vocab_size=40, n_layers=1, n_heads=2, d_model=16, pos="sinusoidal", head="lm",
         norm="post"),
    dict(kind="vit", n_layers=2, n_heads=2, d_model=16, image_size=16, patch_size=4, n_classes=5),
    dict(kind="vit", n_layers=1, n_heads=2, d_model=16, image_size=16, patch_size=2, pos="sinusoidal",
         in_chans=1, mlp_ratio=1.0),
    dict(kind="encoder", vocab_size=30, n_layers=1, n_heads=2, d_model=16, head="token-classify", n_classes=7),
])
def test_the_parameter_count_is_exactly_what_the_model_builds(kw):
    cfg = ModelConfig(**kw)
    built = sum(math.prod(s) for s in expected_shapes(cfg).values())  # the real constructor, on meta
    assert count_parameters(cfg) == built


def test_the_estimate_counts_the_position_table_and_grows_with_the_input():
    cfg = ModelConfig(kind="encoder", vocab_size=10, n_layers=1, n_heads=1, d_model=16384, max_len=65536,
                      pos="sinusoidal", mlp_ratio=0.001)
    assert position_table_elements(cfg) == 65536 * 16384
    assert estimate_memory(cfg, tokens=8).tables == 4 * 2**30  # the 4 GB table the constructor computes
    small, long = estimate_memory(cfg, tokens=128), estimate_memory(cfg, tokens=4096)
    assert long.activations > 32 * small.activations  # attention is T²
    with pytest.raises(ModelLoadError, match="position tables 4.00 GB"):
        check_config_memory(cfg, available=4 * 2**30)
    check_config_memory(ModelConfig(kind="encoder", vocab_size=10), available=4 * 2**30)  # a small one passes


def _folder(tmp_path, edit: dict):
    src = save_text_model(tmp_path / "base")
    dst = tmp_path / "edited"
    shutil.copytree(src, dst)
    doc = json.loads((dst / "config.json").read_text())
    doc["model"].update(edit)
    (dst / "config.json").write_text(json.dumps(doc))
    return dst


_CHILD = textwrap.dedent("""
    import os, sys, time
    from attnviz.cli import main
    t0 = time.perf_counter()
    code = main(sys.argv[2:])
    seconds = time.perf_counter() - t0
    # VmHWM: this process's own peak; ru_maxrss would carry over the parent's peak across fork and exec
    with open("/proc/self/status") as fh:
        hwm = next(int(line.split()[1]) for line in fh if line.startswith("VmHWM:"))
    with open(sys.argv[1], "w") as fh:
        fh.write(f"{hwm} {seconds}")
    sys.stderr.flush()
    os._exit(code)
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="peak RSS read from /proc/self/status")
# SIN_16K needs ~36 GB: refused for memory on a smaller machine, else for its weights; never by allocating 4 GB
@pytest.mark.parametrize("edit, says", [(HUGE, ("of memory is available",)),
                                        (SIN_16K, ("of memory is available", "do not match its config.json")),
                                        (SIN_4K, ("do not match its config.json",))])
def test_a_config_too_big_as_a_whole_is_refused_before_anything_is_allocated(tmp_path, edit, says):
    folder = _folder(tmp_path, edit)
    report = tmp_path / "rss.txt"
    proc = subprocess.run([sys.executable, "-c", _CHILD, str(report), "trace", "--model", str(folder), "--text",
                           SENTENCE, "-o", str(tmp_path / "t.npz"), "--device", "cpu"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert proc.stderr.count("\n") == 1 and any(s in proc.stderr for s in says), proc.stderr
    rss_kb, seconds = report.read_text().split()
    print(f"{edit}: refused in {float(seconds):.2f} s (torch's import included), peak RSS {int(rss_kb) / 1024:.0f} MB")
    assert int(rss_kb) / 1024 < RSS_LIMIT_MB


def test_a_bpe_tokenizer_nested_too_deep_is_one_line():
    from attnviz.models.validate import validate_tokenizer_dict

    tok = {"kind": "bpe", "vocab": ["[PAD]", "[UNK]"], "bpe_json": "[" * 100_000}
    with pytest.raises(ModelLoadError, match="bpe_json is nested more than"):
        validate_tokenizer_dict(tok, 2)
