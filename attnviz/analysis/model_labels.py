"""Names of a model's parts as the model really has them, for labels (Qt-free).

A Llama-family model normalises with RMSNorm (no mean subtraction, no bias), not LayerNorm, and its MLP
uses SiLU; a figure that writes "LN(R)" or a meta that says "gelu" for it teaches something false. The
trace's ``meta["config"]`` carries ``norm_type`` and the config's own ``activation`` name for a Hugging Face
model (:func:`attnviz.hf.describe.true_config`); a native attnviz model has LayerNorm and GELU or ReLU.
"""

from __future__ import annotations

from attnviz.capture.description import TraceDescription

__all__ = ["norm_label", "activation_label", "x_words", "kv_input", "NORM_LABELS"]

NORM_LABELS = {"layernorm": "LN", "rmsnorm": "RMSNorm"}  # what a formula writes for each kind of norm

_ACTIVATIONS = {"silu": "SiLU", "swish": "SiLU", "gelu": "GELU", "gelu_new": "GELU (tanh)",
                "gelu_pytorch_tanh": "GELU (tanh)", "gelu_fast": "GELU (tanh)", "relu": "ReLU",
                "quick_gelu": "QuickGELU", "gelu_python": "GELU", "tanh": "tanh", "geglu": "GeGLU",
                "relu2": "ReLU²"}


def _config(meta) -> dict:
    """The model's config from a trace's description (``trace.description``) or a meta dict."""
    if isinstance(meta, TraceDescription):
        return meta.config
    cfg = (meta or {}).get("config")
    return cfg if isinstance(cfg, dict) else {}


def norm_label(meta) -> str:
    """"RMSNorm" for a model that normalises with RMSNorm, else "LN" (LayerNorm); ``meta``: a trace's
    description or a meta dict."""
    return NORM_LABELS.get(str(_config(meta).get("norm_type", "layernorm")).lower(), "LN")


def activation_label(meta) -> str:
    """The MLP's activation as the model's config names it ("SiLU" for Llama, "GELU" for BERT)."""
    name = str(_config(meta).get("activation", "gelu"))
    return _ACTIVATIONS.get(name.lower(), name)


def x_words(meta) -> str:
    """What a block's X is, in words: the normalised stream in a pre-norm model, the stream itself in a
    post-norm one (BERT, BART: X is R; the norm comes after each addition)."""
    ln = norm_label(meta)
    desc = meta if isinstance(meta, TraceDescription) else None
    placement = desc.norm_placement if desc is not None else str(_config(meta).get("norm", "pre"))
    if placement == "post":
        return f"the residual stream itself, in a post-{ln} model (normalised after each addition)"
    return f"{ln} of the residual stream in a pre-{ln} model"


def kv_input(part: str) -> tuple[str, str]:
    """(the row a key and a value are projected from, what it is): cross-attention reads the encoder's output."""
    if part == "cross":
        return "e_j", "e_j: the encoder's output at source token j"
    return "x_j", ""
