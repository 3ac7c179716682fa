"""Encoder–decoders through the capture: time over the plain eager forward, as a ratio measured in one run
(``bench --only hf``).

A T5-small-shaped model (6 + 6 layers, d 512, 8 heads of 64, relative position bias, 32,128-token vocabulary),
random weights built from its config (nothing read from disk or network), a 128-token source and a 64-token
decoder input. The plain forward is the same model on transformers' eager attention, same inputs, no cache;
the capture is :func:`attnviz.hf.encdec_capture.capture_encdec` (encoder self, decoder self and cross attention
of every layer, to numpy). The runs are interleaved round-robin so machine noise hits both alike.
"""

from __future__ import annotations

import statistics
import time

__all__ = ["measure_encdec_capture", "T5_SMALL"]

T5_SMALL = dict(vocab_size=32128, d_model=512, d_kv=64, d_ff=2048, num_layers=6, num_decoder_layers=6, num_heads=8,
                relative_attention_num_buckets=32, decoder_start_token_id=0, pad_token_id=0, eos_token_id=1)


def measure_encdec_capture(T_src: int = 128, T_dec: int = 64, repeat: int = 3, sizes: dict | None = None) -> dict:
    """Fastest wall times (ms) and wall / CPU-time ratios of capture over the plain eager forward."""
    import torch

    from attnviz.hf.encdec_capture import capture_encdec
    from attnviz.hf.encdec_model import describe_encdec
    from attnviz.hf.loader import quiet_transformers, require_transformers

    tf = require_transformers("the encoder–decoder benchmark")
    sizes = {**T5_SMALL, **(sizes or {})}
    torch.manual_seed(0)
    with quiet_transformers(tf):
        config = tf.T5Config(**sizes, attn_implementation="eager")
        model = tf.T5ForConditionalGeneration(config).eval()
    model.config.architectures = ["T5ForConditionalGeneration"]
    model.cfg = describe_encdec(model.config, "T5ForConditionalGeneration", model=model)
    g = torch.Generator().manual_seed(1)
    inputs = {"input_ids": torch.randint(2, sizes["vocab_size"], (1, T_src), generator=g),
              "decoder_input_ids": torch.randint(2, sizes["vocab_size"], (1, T_dec), generator=g)}
    tokens = [str(i) for i in range(T_dec)]

    def plain():
        with torch.no_grad():
            return model(**inputs, use_cache=False).logits

    def capture():
        return capture_encdec(model, inputs, tokens)

    wall = {"plain": [], "capture": []}
    cpu = {"plain": [], "capture": []}
    for rep in range(repeat + 1):  # the first round warms up allocators and kernels
        for name, fn in (("plain", plain), ("capture", capture)):
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            if rep:
                wall[name].append(time.perf_counter() - w0)
                cpu[name].append(time.process_time() - c0)
    w = {k: min(v) for k, v in wall.items()}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    return {
        "encoder–decoder": f"T5-small-shaped {sizes['num_layers']}+{sizes['num_decoder_layers']}L "
                           f"d{sizes['d_model']} {sizes['num_heads']} heads, source T={T_src}, decoder T={T_dec}, eager",
        "encdec: plain eager forward ms (fastest wall)": w["plain"] * 1e3,
        "encdec: attnviz capture ms (encoder self, decoder self, cross; every layer)": w["capture"] * 1e3,
        "encdec: capture / eager forward (wall)": w["capture"] / w["plain"],
        "encdec: capture / eager forward (CPU time)": c["capture"] / c["plain"],
    }
