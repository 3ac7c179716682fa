"""Modern decoders through the generic capture: time and memory, as ratios measured in one run (``bench --only hf``).

1. capture over the plain eager forward: a 12-layer Llama-shaped decoder (d 768, 12 query heads, 4
   key/value heads, rotary), T = 512, random weights; the runs are interleaved round-robin. The capture
   projects only the last position onto the vocabulary, so the like-for-like row times the forward with
   ``logits_to_keep=1`` too.
2. memory: each figure is the peak resident memory of a child process that builds the model, runs one
   small warm-up capture (the app's first keystroke: it lets the output head be trimmed) and then the
   measured run, minus the child's memory before the model was built. "capture adds" is capture's
   peak minus the plain forward's, same model and input.
   The app's preview: the same capture with ``preview`` reporting the selected layer (its probabilities
   copied as the forward computes them, as the app's model job does); the time from the capture's start until layer
   ``PREVIEW_LAYER``'s were reported, over that whole run (start to complete trace), median over the
   repeats. The queued signal to the GUI thread and the drawing are not in it.
3. a Qwen2.5-0.5B-shaped decoder (24 layers, d 896, 14 / 2 heads, tied 151,936-token vocabulary: 0.49 B
   parameters) at T = 1,024: float16 arrays, one layer kept in full (the others' probabilities only);
   peak over the weights' own float32 size.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time

__all__ = ["measure_decoder_capture", "LLAMA_12L", "QWEN_05B", "PREVIEW_LAYER", "child_peak"]

PREVIEW_LAYER = 2  # a layer in the first half, as the goal is stated


def _preview_layer(n_layers: int) -> int:
    return min(PREVIEW_LAYER, max(0, n_layers // 2 - 1))  # in the first half of a smaller test model too

LLAMA_12L = dict(vocab_size=32000, hidden_size=768, intermediate_size=2048, num_hidden_layers=12,
                 num_attention_heads=12, num_key_value_heads=4, max_position_embeddings=2048)
QWEN_05B = dict(vocab_size=151936, hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                num_attention_heads=14, num_key_value_heads=2, max_position_embeddings=32768, tie_word_embeddings=True)


def _model(family: str, sizes: dict):
    import torch

    from attnviz.hf.loader import quiet_transformers, require_transformers

    tf = require_transformers("the Hugging Face decoder benchmark")
    torch.manual_seed(0)
    cls, cfg = (tf.Qwen2ForCausalLM, tf.Qwen2Config) if family == "qwen2" else (tf.LlamaForCausalLM, tf.LlamaConfig)
    with quiet_transformers(tf):
        model = cls(cfg(**sizes, attn_implementation="eager")).eval()
    return model


def _runs(model, T: int, layers):
    import torch

    from attnviz.hf.capture import capture_hf

    ids = torch.randint(0, model.config.vocab_size, (1, T), generator=torch.Generator().manual_seed(1))
    tokens = [str(i) for i in range(T)]

    def plain():
        with torch.no_grad():
            return model(input_ids=ids).logits[0, -1]

    def plain_last():  # like for like: the capture projects the last position only onto the vocabulary
        with torch.no_grad():
            return model(input_ids=ids, logits_to_keep=1).logits[0, -1]

    def capture():
        return capture_hf(model, {"input_ids": ids}, tokens, layers=layers)

    def preview():  # (seconds until PREVIEW_LAYER was reported, seconds of the whole capture)
        t0, fired, shown = time.perf_counter(), [], _preview_layer(model.config.num_hidden_layers)

        def on_preview(p):
            if p.layer == shown:
                fired.append(time.perf_counter() - t0)
        capture_hf(model, {"input_ids": ids}, tokens, layers=layers, preview=on_preview, preview_layers=[shown])
        return fired[0], time.perf_counter() - t0

    return plain, capture, plain_last, preview


def measure_decoder_capture(T: int = 512, repeat: int = 3, sizes: dict | None = None, big: dict | None = None,
                            big_T: int = 1024) -> dict:
    """The section's figures (see the module docstring); ``sizes``/``big`` override the two configs (tests)."""
    import torch

    sizes = {**LLAMA_12L, **(sizes or {})}
    model = _model("llama", sizes)
    plain, capture, plain_last, preview = _runs(model, T, None)
    capture()  # warm-up: the output head is verified on the first capture, trimmed afterwards
    wall = {"plain": [], "capture": [], "last": [], "preview": []}
    cpu = {"plain": [], "capture": [], "last": [], "preview": []}
    fractions = []
    for rep in range(repeat + 1):
        for name, fn in (("plain", plain), ("capture", capture), ("last", plain_last), ("preview", preview)):
            w0, c0 = time.perf_counter(), time.process_time()
            out = fn()
            if rep:
                wall[name].append(time.perf_counter() - w0)
                cpu[name].append(time.process_time() - c0)
                if name == "preview":
                    fractions.append(out[0] / out[1])
    w = {k: min(v) for k, v in wall.items()}
    c = {k: statistics.median(v) for k, v in cpu.items()}
    del model
    mem_plain = child_peak("llama", sizes, T, "plain")
    mem_capture = child_peak("llama", sizes, T, "capture")
    big_sizes = {**QWEN_05B, **(big or {})}
    big_run = child_peak("qwen2", big_sizes, big_T, "capture", layers=[big_sizes["num_hidden_layers"] // 2])
    return {
        "decoder": f"Llama-shaped {sizes['num_hidden_layers']}L d{sizes['hidden_size']} "
                   f"{sizes['num_attention_heads']}/{sizes['num_key_value_heads']} heads, T={T}, eager",
        "torch threads": torch.get_num_threads(),
        "plain eager forward ms (fastest wall)": w["plain"] * 1e3,
        "attnviz capture ms (every intermediate of every layer)": w["capture"] * 1e3,
        "capture / eager forward (wall)": w["capture"] / w["plain"],
        "capture / eager forward (CPU time)": c["capture"] / c["plain"],
        "eager forward, last position's logits only ms": w["last"] * 1e3,
        "capture / eager forward with last-position logits (wall, like for like)": w["capture"] / w["last"],
        "capture / eager forward with last-position logits (CPU time)": c["capture"] / c["last"],
        f"preview: layer {_preview_layer(sizes['num_hidden_layers'])} of {sizes['num_hidden_layers']} reported / "
        "whole capture (wall, median)":
            statistics.median(fractions),
        "preview: capture reporting that layer / capture (CPU time)": c["preview"] / c["capture"],
        "memory: plain forward peak MiB (above the process before the model)": mem_plain["peak"] / 2**20,
        "memory: capture peak MiB": mem_capture["peak"] / 2**20,
        "memory capture adds over the plain forward MiB": (mem_capture["peak"] - mem_plain["peak"]) / 2**20,
        "big decoder": f"Qwen2.5-0.5B-shaped, {big_run['params'] / 1e9:.2f} B parameters, T={big_T}, "
                       f"float16 arrays, layer {big_sizes['num_hidden_layers'] // 2} kept in full",
        "big: capture wall s": big_run["seconds"],
        "big: trace MiB": big_run["trace_bytes"] / 2**20,
        "big: peak / weights' size": big_run["peak"] / big_run["weight_bytes"],
        "goal": "capture / eager <= 1.05x; preview of a first-half layer <= 0.5; big: peak <= 2x the weights",
    }


def child_peak(family: str, sizes: dict, T: int, mode: str, layers=None) -> dict:
    """Run one measurement in a fresh Python process (peak RSS is per process); returns its figures."""
    args = json.dumps({"family": family, "sizes": sizes, "T": T, "mode": mode, "layers": layers})
    out = subprocess.run([sys.executable, "-m", "attnviz.bench.hf_decoder", args], capture_output=True, text=True,
                         check=True, timeout=1800)
    return json.loads(out.stdout.strip().splitlines()[-1])


def _rss_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def _hwm_reset() -> None:
    """Reset the kernel's peak-RSS mark (Linux: write 5 to clear_refs), so the peak is the measured run's."""
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
    except OSError:
        pass


def _hwm_bytes() -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def _child(spec: dict) -> dict:
    import torch

    torch.set_num_threads(max(1, torch.get_num_threads()))
    import transformers  # noqa: F401 - imported before the baseline, like the app's loaded libraries

    base = _rss_bytes()
    model = _model(spec["family"], spec["sizes"])
    params = sum(p.numel() for p in model.parameters())
    warm_capture = _runs(model, 8, spec["layers"])[1]
    warm_capture()  # the first keystroke: verifies the output head (trimmed from now on)
    plain, capture, _, _ = _runs(model, spec["T"], spec["layers"])
    _hwm_reset()
    t0 = time.perf_counter()
    result = capture() if spec["mode"] == "capture" else plain()
    seconds = time.perf_counter() - t0
    trace_bytes = result.nbytes if spec["mode"] == "capture" else 0
    return {"params": params, "weight_bytes": params * 4, "peak": _hwm_bytes() - base, "seconds": seconds,
            "trace_bytes": trace_bytes}


if __name__ == "__main__":
    print(json.dumps(_child(json.loads(sys.argv[1]))))
