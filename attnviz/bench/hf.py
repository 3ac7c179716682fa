"""Capture overhead of a BERT-base-sized Hugging Face model, measured in one run against two baselines.

1. the plain forward with transformers' SDPA attention (what users run),
2. transformers' own eager path with ``output_attentions=True`` (probabilities only),
3. :func:`attnviz.hf.capture.capture_hf` (every intermediate, to numpy, with the MLM prediction).

One model object (random weights, nothing read from disk or network) switches attention
implementation between the timings; the timings are interleaved so machine noise hits all alike.
"""

from __future__ import annotations

import statistics
import time

__all__ = ["measure_hf_overhead", "bare_forward", "linear_floor", "BERT_BASE"]

BERT_BASE = dict(vocab_size=30522, hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512)


def measure_hf_overhead(T: int = 128, repeat: int = 5, sizes: dict | None = None) -> dict:
    """Fastest wall times (ms), and wall and CPU-time ratios against the SDPA forward.

    Parameters
    ----------
    T : tokens in the input.
    repeat : timed runs per figure after one warm-up round; runs are interleaved round-robin.
    sizes : BertConfig overrides (tests use a tiny model); default BERT-base.
    """
    import torch

    from attnviz.hf.capture import capture_hf
    from attnviz.hf.loader import quiet_transformers, require_transformers

    tf = require_transformers("the Hugging Face benchmark")
    torch.manual_seed(0)
    with quiet_transformers(tf):
        model = tf.BertForMaskedLM(tf.BertConfig(**{**BERT_BASE, **(sizes or {})})).eval()
    ids = torch.randint(1000 if model.config.vocab_size > 1000 else 0, model.config.vocab_size, (1, T))
    tokens = [str(i) for i in range(T)]

    runs = {
        "sdpa": ("sdpa", lambda: _forward(model, ids, False)),
        "eager": ("eager", lambda: _forward(model, ids, True)),
        "capture": ("eager", lambda: capture_hf(model, {"input_ids": ids}, tokens)),
        # the app's capture leaves an MLM head's (T, V) vocabulary projection until a row is shown; the
        # SDPA forward computes it whole, so the like-for-like figure also computes it
        "capture_full": ("eager", lambda: capture_hf(model, {"input_ids": ids}, tokens).get("prediction")),
    }
    wall: dict[str, list[float]] = {name: [] for name in runs}
    cpu: dict[str, list[float]] = {name: [] for name in runs}
    for rep in range(repeat + 1):  # round-robin, so load from other processes hits every run alike
        for name, (impl, fn) in runs.items():
            model.set_attn_implementation(impl)
            w0, c0 = time.perf_counter(), time.process_time()
            fn()
            if rep:  # the first round warms up allocators and kernels
                wall[name].append(time.perf_counter() - w0)
                cpu[name].append(time.process_time() - c0)
    model.set_attn_implementation("eager")
    # the fastest wall time is the least disturbed by other processes; CPU time hardly depends on them
    w = {name: min(v) for name, v in wall.items()}
    c = {name: statistics.median(v) for name, v in cpu.items()}
    cfg = model.config
    return {
        "model": f"BERT {cfg.num_hidden_layers}L {cfg.num_attention_heads}H d{cfg.hidden_size} MLM, T={T}",
        "torch threads": torch.get_num_threads(),
        "transformers": tf.__version__,
        "SDPA forward ms (fastest wall)": w["sdpa"] * 1e3,
        "eager + output_attentions ms": w["eager"] * 1e3,
        "attnviz capture ms (MLM prediction deferred, as in the app)": w["capture"] * 1e3,
        "attnviz capture + whole MLM prediction ms": w["capture_full"] * 1e3,
        "eager output_attentions / SDPA (wall)": w["eager"] / w["sdpa"],
        "attnviz capture / SDPA (wall)": w["capture"] / w["sdpa"],
        "attnviz capture + whole prediction / SDPA (wall)": w["capture_full"] / w["sdpa"],
        "eager output_attentions / SDPA (CPU time)": c["eager"] / c["sdpa"],
        "attnviz capture / SDPA (CPU time)": c["capture"] / c["sdpa"],
        "attnviz capture + whole prediction / SDPA (CPU time)": c["capture_full"] / c["sdpa"],
        "goal": "capture / SDPA <= 1.15x, with every intermediate (like for like: + whole prediction)",
    }


def _forward(model, ids, attentions: bool):
    import torch

    with torch.no_grad():
        return model(input_ids=ids, output_attentions=attentions)


def write_bert_base_folder(path, T: int = 128, sizes: dict | None = None) -> str:
    """Write a random-weights BERT-base model folder (config, safetensors, WordPiece vocabulary) to ``path``.

    Nothing is downloaded: the vocabulary is made of words ``w0``, ``w1``, … so that the returned
    text is exactly ``T`` tokens with [CLS] and [SEP] (the app's keystroke benchmark types into it).
    The weights take 0.44 GB on disk.

    Returns
    -------
    The input text of ``T`` tokens.
    """
    import os

    import torch

    from attnviz.hf.loader import quiet_transformers, require_transformers

    tf = require_transformers("the Hugging Face keystroke benchmark")
    cfg = {**BERT_BASE, **(sizes or {})}
    os.makedirs(path, exist_ok=True)
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = specials + [f"w{i}" for i in range(cfg["vocab_size"] - len(specials))]
    torch.manual_seed(0)
    with quiet_transformers(tf):
        model = tf.BertForMaskedLM(tf.BertConfig(**cfg)).eval()
        model.save_pretrained(str(path))
        tf.BertTokenizer(vocab={t: i for i, t in enumerate(vocab)}).save_pretrained(str(path))
    return " ".join(f"w{i}" for i in range(T - 2))


def bare_forward(loaded, text: str) -> tuple[float, float]:
    """Wall and CPU ms (all threads) of the plainest forward a user could run on ``text``: the Hugging
    Face model's encoder alone (``base_model``: no output head, no hooks, nothing copied out) on
    transformers' SDPA attention under ``torch.inference_mode``, with the threads set now.

    The keystroke benchmark runs it on the app's model lane, so that keystroke − forward is what
    attnviz adds around the model (capture, checks, delivery, drawing).
    """
    import torch

    from attnviz.hf.private_names import attn_implementation
    from attnviz.runtime.pipeline import prepare_text

    inputs = prepare_text(loaded, text, truncate=True).inputs
    model = loaded.model
    before = attn_implementation(model.config)
    model.set_attn_implementation("sdpa")
    try:
        with torch.inference_mode():
            w0, c0 = time.perf_counter(), time.process_time()
            model.base_model(**inputs)
            return (time.perf_counter() - w0) * 1e3, (time.process_time() - c0) * 1e3
    finally:
        model.set_attn_implementation(before)


def linear_floor(loaded, text: str) -> tuple[float, float]:
    """Wall and CPU ms of the encoder's linear layers alone on ``text``'s tokens: every ``nn.Linear`` of
    ``base_model`` applied once to a (tokens × in_features) input, back to back, with the threads set now.

    No forward can be faster than its matrix products: the figure says how much of the keystroke goal is
    left for everything else on this machine (BERT-base at T = 128: 72 products, ~22 GFLOP).
    """
    import torch

    from attnviz.runtime.pipeline import prepare_text

    tokens = int(prepare_text(loaded, text, truncate=True).inputs["input_ids"].shape[-1])
    layers = [m for m in loaded.model.base_model.modules() if isinstance(m, torch.nn.Linear)]
    with torch.inference_mode():
        inputs = {m.in_features: torch.randn(1, tokens, m.in_features) for m in layers}
        for m in layers[:4]:  # warm the allocator and the BLAS
            m(inputs[m.in_features])
        w0, c0 = time.perf_counter(), time.process_time()
        for m in layers:
            m(inputs[m.in_features])
        return (time.perf_counter() - w0) * 1e3, (time.process_time() - c0) * 1e3
