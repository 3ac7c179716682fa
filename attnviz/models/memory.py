"""How much memory a model needs, from its config alone: before any tensor exists.

Each field of a config may be inside its own limit while all of them together ask for 68 GB (d_model
16384, 256 layers, 256 heads, mlp_ratio 64), and a sinusoidal table of 65536 × 16384 floats is 4 GB that
the constructor would compute. So the parameters, the fixed position tables and the activations of one
captured forward pass are counted here with plain integer arithmetic and compared with the memory the
machine has now, before the model (even its shape-only build) is made.

:func:`estimate_memory` is the reusable part (any caller with a parameter count and a shape can use
:func:`activation_bytes` too, e.g. the Hugging Face loader); :func:`check_config_memory` refuses in one
line. No torch: importing this costs nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from attnviz.errors import ModelLoadError

__all__ = ["MemoryEstimate", "count_parameters", "position_table_elements", "activation_bytes", "estimate_memory",
           "check_config_memory", "available_memory", "check_memory", "LOAD_CHECK_TOKENS", "FLOAT_BYTES",
           "on_demand_trace_bytes"]

FLOAT_BYTES = 4  # float32 weights and activations
LOAD_CHECK_TOKENS = 256  # the input length a model must at least be able to show to be worth loading
SHARE_OF_FREE = 0.8  # refuse above this share of the memory available now


def available_memory() -> int | None:
    """Bytes of memory free for new allocations (Linux MemAvailable), or None when unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(needed: int, what: str, available: int | None = None) -> None:
    """Refuse ``needed`` bytes when more than 80 % of the memory available now (unknown: allowed)."""
    free = available_memory() if available is None else available
    if free is not None and needed > SHARE_OF_FREE * free:
        raise ModelLoadError(f"{what} needs about {_gb(needed)} but only {_gb(free)} of memory is available")


def _gb(n: float) -> str:
    return f"{n / 2**30:,.2f} GB" if n < 2**50 else f"{n / 2**50:,.0f} PB"


def _linear(n_in: int, n_out: int, bias: bool = True) -> int:
    return n_in * n_out + (n_out if bias else 0)


def _block(cfg, cross: bool) -> int:
    d, dh = cfg.d_model, cfg.head_dim
    hq, hkv = cfg.n_heads * dh, cfg.kv_heads * dh
    b = cfg.attn_bias
    attn = _linear(d, hq, b) + 2 * _linear(d, hkv, b) + _linear(hq, d, b)
    hidden = int(d * cfg.mlp_ratio)
    mlp = _linear(d, hidden) + _linear(hidden, d)
    norms = 2 * d * (3 if cross else 2)
    return attn * (2 if cross else 1) + mlp + norms


def _stack(cfg, n: int, cross: bool = False) -> int:
    return n * _block(cfg, cross) + (2 * cfg.d_model if cfg.norm == "pre" else 0)


def count_parameters(cfg) -> int:
    """Exactly the parameters :func:`attnviz.models.registry.build_model` makes for ``cfg`` (no torch)."""
    d = cfg.d_model
    learned = cfg.pos == "learned"
    if cfg.kind == "vit":
        positions = cfg.n_patches + 1
        embed = cfg.in_chans * d * cfg.patch_size ** 2 + d + d + (positions * d if learned else 0)
        return embed + _stack(cfg, cfg.n_layers) + _linear(d, cfg.n_classes)
    table = cfg.max_len * d if learned else 0
    if cfg.kind == "encoder-decoder":
        return (cfg.vocab_size * d + table + _stack(cfg, cfg.n_layers) + cfg.tgt_vocab * d + table
                + _stack(cfg, cfg.dec_layers, cross=True) + _linear(d, cfg.tgt_vocab))
    out = cfg.vocab_size if (cfg.kind == "decoder" or cfg.head == "mlm") else cfg.n_classes
    return cfg.vocab_size * d + table + _stack(cfg, cfg.n_layers) + _linear(d, out)


def position_table_elements(cfg) -> int:
    """Floats of the fixed (sinusoidal) position tables the constructor computes (buffers, not parameters)."""
    if cfg.pos != "sinusoidal":
        return 0
    if cfg.kind == "vit":
        return (cfg.n_patches + 1) * cfg.d_model
    return cfg.max_len * cfg.d_model * (2 if cfg.kind == "encoder-decoder" else 1)


def layer_elements(d_model: int, mlp_ratio: float, tokens: int) -> float:
    """Numbers one layer of a captured forward holds at ``tokens`` positions, besides any T×T map: q, k, v, the
    attention output, the residual streams and norms (~10·T·D) and the MLP's hidden units (2·T·D·mlp_ratio)."""
    return (10 + 2 * mlp_ratio) * tokens * d_model


def forward_bytes(d_model: int, mlp_ratio: float, tokens: int, element_bytes: int = FLOAT_BYTES) -> int:
    """About the peak a model's own forward on the fastest kernel holds over its weights: two layers' numbers
    (the one computing and the stream it hands on). Measured on a 30-layer d 576 decoder, float32: 327 MiB at
    4,096 tokens (this gives 276), ~1,320 at 16,384 (1,103)."""
    return int(2 * layer_elements(d_model, mlp_ratio, tokens) * element_bytes)


def on_demand_trace_bytes(cfg, tokens: int, element_bytes: int = FLOAT_BYTES) -> int:
    """About the bytes an on-demand capture's trace keeps besides views of the weights (``cfg`` an attnviz
    ModelConfig): per layer q and z (H·d_head each), k (H_kv·d_head), the residual stream (D) and each row's
    log-sum-exp (float32); the embeddings and the first layer's input (3·D) and the rotary tables once. A
    30-layer d 576, 9/3-head decoder at 4,096 tokens: 934 MiB (its trace keeps 925 beyond the weight views).
    Arrays of another dtype than float32 keep also q and k before rotation, v and each layer's input (their
    rules are exact in float32 only: ``attnviz.hf.layer_arrays``): the same decoder's float16 trace at 8,192
    tokens keeps 1,690 MiB (this gives 1,659)."""
    t, dh = int(tokens), cfg.head_dim
    per_token = (2 * cfg.n_heads + cfg.kv_heads) * dh + cfg.d_model
    if element_bytes != 4:
        per_token += (cfg.n_heads + 2 * cfg.kv_heads) * dh + cfg.d_model
    per_layer = t * per_token * element_bytes + t * cfg.n_heads * 4
    return int(cfg.n_layers * per_layer + 3 * t * cfg.d_model * element_bytes + 2 * t * dh * 4)


def activation_bytes(n_layers: int, n_heads: int, d_model: int, mlp_ratio: float, tokens: int, batch: int = 1,
                     grad: bool = False, out_features: int = 0, on_demand: bool = False,
                     spill_budget: int | None = None, element_bytes: int = FLOAT_BYTES) -> int:
    """One captured forward pass at ``tokens`` positions: what every layer keeps for the Trace.

    Per layer and input: q, k, v, the attention output, the residual streams and norms (~10·T·D), the MLP's
    hidden units (2·T·D·mlp_ratio) and the logits, mask, probabilities and one working copy (4·H·T²);
    gradients (``grad``) double it. ``out_features``: the output head's width (T·V logits). ``on_demand``:
    the capture runs on the SDPA kernel and keeps q, k and each row's log-sum-exp instead of T×T maps
    (Hugging Face models from ``attnviz.capture.on_demand.ON_DEMAND_T`` tokens): no T² term.
    ``spill_budget``: bytes of layer arrays such a capture keeps in memory before it writes them to disk
    (``attnviz.capture.spill``): then only that and the layers being computed are resident.
    ``element_bytes``: bytes of one kept number (2 for a float16 model's arrays:
    ``attnviz.capture.compute_dtype.array_bytes``; default float32).
    """
    t = tokens
    per_layer = layer_elements(d_model, mlp_ratio, t) + (0 if on_demand else 4 * n_heads * t * t)
    layers = n_layers * per_layer
    if on_demand and spill_budget is not None:  # (no T² term then: 2 · per_layer is forward_bytes)
        layers = min(layers, spill_budget / element_bytes + 2 * per_layer)
    # such a capture asks a language model for the last position's logits (an MLM's rows are computed when shown)
    out_rows = 1 if on_demand and spill_budget is not None else t
    total = batch * (layers + out_rows * out_features)
    return int(element_bytes * total * (2 if grad else 1))


@dataclass(frozen=True)
class MemoryEstimate:
    """Bytes a model needs: its parameters (loaded: the module and the file read in), tables, activations."""

    n_params: int
    params: int
    tables: int
    activations: int
    tokens: int
    weight_bytes: int = 0  # the parameters' own size (float32 unless given), counted in ``params`` per copy


    @property
    def total(self) -> int:
        return self.params + self.tables + self.activations

    def describe(self) -> str:
        size = self.weight_bytes or FLOAT_BYTES * self.n_params  # never "0.00 GB" for a model already loaded
        held = "" if self.params else ", already in memory"
        return (f"{self.n_params:,} parameters ({_gb(size)}{held}), position tables {_gb(self.tables)}, "
                f"activations at {self.tokens:,} tokens {_gb(self.activations)}")


def _tokens(cfg) -> int:
    return cfg.n_patches + 1 if cfg.kind == "vit" else cfg.max_len


def estimate_memory(cfg, tokens: int | None = None, batch: int = 1, grad: bool = False,
                    copies: int = 2, on_demand: bool = False, weight_bytes: int | None = None,
                    spill_budget: int | None = None, element_bytes: int = FLOAT_BYTES) -> MemoryEstimate:
    """The memory of ``cfg``'s model running one input of ``tokens`` positions (default: its full length).

    ``copies``: how many times the parameters are held (2 while loading: the module and the weights file
    read in; 1 once loaded; 0: already loaded, not part of the new need). ``on_demand``: see
    :func:`activation_bytes`. ``weight_bytes``: the real bytes of the parameters when known (a float16
    checkpoint holds 2 per parameter; default float32). ``element_bytes``: of one number the capture keeps
    (:func:`activation_bytes`).
    """
    t = _tokens(cfg) if tokens is None else max(1, min(int(tokens), _tokens(cfg)))
    n_params = count_parameters(cfg)
    layers = cfg.n_layers + (2 * cfg.dec_layers if cfg.kind == "encoder-decoder" else 0)  # + cross-attention
    out = {"vit": cfg.n_classes, "encoder-decoder": cfg.tgt_vocab, "decoder": cfg.vocab_size}.get(
        cfg.kind, cfg.vocab_size if cfg.head == "mlm" else 0)
    acts = activation_bytes(layers, cfg.n_heads, cfg.d_model, cfg.mlp_ratio, t, batch, grad, out, on_demand,
                            spill_budget, element_bytes)
    size = FLOAT_BYTES * n_params if weight_bytes is None else int(weight_bytes)
    return MemoryEstimate(n_params, copies * size, FLOAT_BYTES * position_table_elements(cfg), acts, t, size)


def check_config_memory(cfg, tokens: int | None = None, what: str = "this model", available: int | None = None,
                        grad: bool = False, copies: int = 2, on_demand: bool = False,
                        weight_bytes: int | None = None, spill_budget: int | None = None,
                        element_bytes: int = FLOAT_BYTES) -> MemoryEstimate:
    """Refuse (ModelLoadError, one line) a config whose model cannot fit in the memory available now.

    Default ``tokens``: a short input (``LOAD_CHECK_TOKENS``, or the model's full length when shorter): a
    model is worth loading when it can show one; longer inputs are checked when they come
    (:func:`estimate_memory` with their length).
    """
    t = min(_tokens(cfg), LOAD_CHECK_TOKENS) if tokens is None else tokens
    est = estimate_memory(cfg, t, grad=grad, copies=copies, on_demand=on_demand, weight_bytes=weight_bytes,
                          spill_budget=spill_budget, element_bytes=element_bytes)
    free = available_memory() if available is None else available
    if free is not None and est.total > SHARE_OF_FREE * free:
        raise ModelLoadError(f"{what} needs about {_gb(est.total)} ({est.describe()}) but only {_gb(free)} of "
                             "memory is available")
    return est
