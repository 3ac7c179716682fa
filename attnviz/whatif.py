"""What-if switches on a loaded model: change the scale, the mask, the positions or the heads, re-run, compare.

The lectures ask "what if…": no 1/√d_k (softmax saturates, seeds 000 and 003), no causal mask, no
positional encoding (self-attention becomes permutation equivariant: A(RX) = R A(X) Rᵀ), a head removed.
:func:`applied` sets the inspection attributes the model already has (``Attention.scale``,
``Attention.causal``, ``Attention.head_gate``, ``PositionalEncoding.enabled``) and puts every one of them
back when the block ends, also when it raises. No weight is ever touched. Qt-free: the GUI calls these
functions from a worker, one job at a time (a torch module is not re-entrant and the switches are
attributes of the shared model).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field, replace

import numpy as np

from attnviz.errors import InputError

__all__ = ["WhatIf", "applied", "run_whatif", "prediction_row", "top_predictions", "compare_whatif", "WhatIfComparison",
           "permute_tokens", "PermutationResult"]


# the app's slider spans 0.1 … 10; a shared scene may ask for more, never for a factor the logits overflow at
TEMPERATURE_RANGE = (1e-3, 1e3)


@dataclass(frozen=True)
class WhatIf:
    """One combination of switches; the default changes nothing.

    scale : "model" (the trained factor, 1/√d_k unless the config says otherwise) or "none" (1.0).
    temperature : the scaled logits are divided by it (effective scale = base / temperature); < 1 sharpens.
    causal : None keeps each model's own mask; True/False switches it for the main stack's self-attention.
    positional : False switches every positional encoding off.
    ablate : (layer, head) pairs of the main stack's self-attention whose output z is zeroed.
    """

    scale: str = "model"
    temperature: float = 1.0
    causal: bool | None = None
    positional: bool = True
    ablate: frozenset = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if self.scale not in ("model", "none"):
            raise InputError(f"scale {self.scale!r} must be 'model' or 'none'")
        t = self.temperature
        if isinstance(t, bool) or not isinstance(t, (int, float, np.floating, np.integer)) or \
                not (np.isfinite(t) and TEMPERATURE_RANGE[0] <= t <= TEMPERATURE_RANGE[1]):
            # 1e-308 would scale the logits past float range: ∞ − ∞ = NaN, an all-dark map "→ nan"
            raise InputError(f"temperature must be a number in {TEMPERATURE_RANGE[0]:g}..{TEMPERATURE_RANGE[1]:g}, "
                             f"not {str(t)[:40]}")
        object.__setattr__(self, "ablate", frozenset((int(layer), int(h)) for layer, h in self.ablate))

    @property
    def is_default(self) -> bool:
        return self == WhatIf()

    def with_(self, **changes) -> "WhatIf":
        return replace(self, **changes)

    def describe(self) -> str:
        """A short caption: "no scaling · T = 2 · causal mask off · no positions · ablated L0H1"."""
        parts = []
        if self.scale == "none":
            parts.append("no scaling")
        if self.temperature != 1.0:
            parts.append(f"T = {self.temperature:.3g}")
        if self.causal is not None:
            parts.append("causal mask " + ("on" if self.causal else "off"))
        if not self.positional:
            parts.append("no positions")
        if self.ablate:
            parts.append("ablated " + ", ".join(f"L{layer}H{h}" for layer, h in sorted(self.ablate)))
        return " · ".join(parts) or "as trained"


@contextmanager
def applied(model, whatif: WhatIf):
    """Apply ``whatif`` to ``model`` for the duration of the block; restore every switch afterwards.

    Raises InputError (before changing anything) when an ablated (layer, head) does not exist.
    """
    import torch

    from attnviz.models.attention import Attention
    from attnviz.models.blocks import PositionalEncoding
    from attnviz.models.registry import attention_layers

    # a Hugging Face model: its attention modules are not ours (its loader gives it a ``cfg`` too, for the
    # views; transformers models carry their own ``config``)
    if not hasattr(model, "cfg") or hasattr(model, "config"):
        raise InputError("the what-if switches work on attnviz's own models, not on Hugging Face models")
    main = [block.attn for block in attention_layers(model)["main"]]
    for layer, head in whatif.ablate:
        if not 0 <= layer < len(main) or not 0 <= head < main[0].n_heads:
            raise InputError(f"cannot ablate layer {layer} head {head}: the model has {len(main)} layers "
                             f"of {main[0].n_heads} heads")
    attns = [m for m in model.modules() if isinstance(m, Attention)]
    encodings = [m for m in model.modules() if isinstance(m, PositionalEncoding)]
    saved_attn = [(m, m.scale, m.causal, m.head_gate) for m in attns]
    saved_pos = [(m, m.enabled) for m in encodings]
    try:
        for m in attns:
            base = 1.0 if whatif.scale == "none" else m.scale
            m.scale = base / whatif.temperature
        if whatif.causal is not None:
            for m in main:
                m.causal = whatif.causal
        for layer, m in enumerate(main):
            heads = [h for (li, h) in whatif.ablate if li == layer]
            if heads:
                gate = torch.ones(m.n_heads, device=m.q_proj.weight.device)
                gate[heads] = 0.0
                m.head_gate = gate if m.head_gate is None else m.head_gate * gate
        for m in encodings:
            m.enabled = m.enabled and whatif.positional
        yield model
    finally:
        for m, scale, causal, gate in saved_attn:
            m.scale, m.causal, m.head_gate = scale, causal, gate
        for m, enabled in saved_pos:
            m.enabled = enabled


def run_whatif(loaded, whatif: WhatIf, text: str | None = None, image=None, truncate: bool = False):
    """Trace ``loaded`` on the input with ``whatif`` applied (float32); ``meta["whatif"]`` describes it."""
    from attnviz.runtime import run_trace

    with applied(loaded.model, whatif):
        trace = run_trace(loaded, text=text, image=image, truncate=truncate, precision="float32", rollout=False)
    trace.meta["whatif"] = whatif.describe()
    return trace


def _labels(loaded, n: int) -> list[str]:
    cfg = loaded.config
    if cfg.head in ("lm", "mlm"):
        tok = loaded.tgt_tokenizer if cfg.kind == "encoder-decoder" and loaded.tgt_tokenizer else loaded.tokenizer
        if tok is not None and len(tok.vocab) == n:
            return list(tok.vocab)
    labels = loaded.info.get("labels")
    if labels and len(labels) == n:
        return [str(x) for x in labels]
    return [str(i) for i in range(n)]


def prediction_row(trace) -> tuple[np.ndarray, str]:
    """The distribution a what-if compares, and where it is read.

    Sequence outputs (C,) as they are; per-token outputs (T, C) at the first [MASK] token, else the last.
    An encoder–decoder's at the decoder position that wrote its last token (the one the Prediction panel
    shows), named: the position after [EOS] wrote nothing, and its distribution predicts nothing shown.
    """
    from attnviz.analysis.decoder_positions import position_distribution

    steps = position_distribution(trace, None) if trace.kind == "encoder-decoder" else None
    if steps is not None:
        row, pos = steps
        tokens = list(trace.tokens)
        wrote = f", which wrote {tokens[pos + 1]!r}" if pos + 1 < len(tokens) else ""
        return row, f"at decoder position {pos} {tokens[pos]!r}{wrote}"
    pred = np.asarray(trace["prediction"], dtype=np.float64)
    if pred.ndim == 1:
        return pred, "at the output"
    tokens = list(trace.tokens)
    pos = tokens.index("[MASK]") if "[MASK]" in tokens else len(tokens) - 1
    return pred[pos], f"at token {pos} {tokens[pos]!r}"


def top_predictions(trace, loaded, k: int = 5) -> list[tuple[str, float]]:
    """The ``k`` most probable outputs (label, probability) of a trace, best first."""
    row, _ = prediction_row(trace)
    labels = _labels(loaded, row.shape[0])
    order = np.argsort(-row, kind="stable")[:k]
    return [(labels[i], float(row[i])) for i in order]


@dataclass
class WhatIfComparison:
    """The model as trained and with the switches, on the same input."""

    whatif: WhatIf
    before: object  # Trace
    after: object  # Trace
    where: str  # which output is compared
    top_before: list[tuple[str, float]]
    top_after: list[tuple[str, float]]
    changed: float  # total variation distance between the two output distributions, 0..1
    argmax_changed: bool
    entropy_before: np.ndarray  # (L, H) mean attention entropy in nats
    entropy_after: np.ndarray


def compare_whatif(loaded, whatif: WhatIf, text: str | None = None, image=None, k: int = 5,
                   before=None) -> WhatIfComparison:
    """Run the model as trained (unless ``before`` is given) and with ``whatif``; compare outputs.

    For an encoder–decoder the decoder re-generates its output under the switches, so the two traces may
    differ in length; the comparison reads the last position of each.
    """
    from attnviz.analysis.distance import attention_entropy

    before = before if before is not None else run_whatif(loaded, WhatIf(), text, image)
    after = run_whatif(loaded, whatif, text, image)
    p, where = prediction_row(before)
    q, _ = prediction_row(after)
    return WhatIfComparison(
        whatif=whatif, before=before, after=after, where=where,
        top_before=top_predictions(before, loaded, k), top_after=top_predictions(after, loaded, k),
        changed=float(0.5 * np.abs(p - q).sum()) if p.shape == q.shape else 1.0,
        argmax_changed=int(np.argmax(p)) != int(np.argmax(q)),
        entropy_before=attention_entropy(before), entropy_after=attention_entropy(after),
    )


@dataclass
class PermutationResult:
    """Attention of a permuted input next to R·P·Rᵀ, the original attention permuted the same way."""

    whatif: WhatIf
    perm: np.ndarray  # (T,) the permuted input is tokens[perm]
    tokens: list[str]
    permuted_tokens: list[str]
    trace: object  # Trace of the permuted input, with the switches applied
    probs_orig: list[np.ndarray]  # per layer (H, T, T)
    probs_perm: list[np.ndarray]
    probs_expected: list[np.ndarray]  # R P Rᵀ
    max_error: float  # max |P(RX) − R P(X) Rᵀ| over layers and heads

    @property
    def equivariant(self) -> bool:
        return self.max_error <= 1e-5


def permute_tokens(loaded, text: str, perm=None, whatif: WhatIf | None = None, seed: int = 0) -> PermutationResult:
    """Shuffle the tokens of ``text`` and test A(RX) = R A(X) Rᵀ with the switches applied.

    Parameters
    ----------
    perm : a permutation of 0…T-1 (default: a random non-identity one from ``seed``).
    whatif : default positional encoding off (where the identity holds for an encoder); pass
        ``WhatIf()`` to see it fail with positions on. A causal decoder needs ``causal=False`` too.
    """
    from attnviz.runtime.permutation import check_permutation
    from attnviz.capture.record import capture
    from attnviz.runtime import prepare_text

    whatif = WhatIf(positional=False) if whatif is None else whatif
    if loaded.config.kind not in ("encoder", "decoder"):
        raise InputError("permuting tokens needs a text encoder or decoder")
    prep = prepare_text(loaded, text)
    if set(prep.inputs) != {"ids"}:
        raise InputError("this model reads more than the token ids (e.g. a chosen position): cannot permute it")
    ids = prep.inputs["ids"]
    T = ids.shape[1]
    if perm is None:
        rng = np.random.default_rng(seed)
        perm = np.arange(T)
        while T > 1 and np.array_equal(perm, np.arange(T)):
            perm = rng.permutation(T)
    perm = np.asarray(perm, dtype=np.int64)
    with applied(loaded.model, whatif):
        check = check_permutation(loaded.model, ids, perm)  # validates perm
        permuted = [prep.tokens[i] for i in perm]
        trace = capture(loaded.model, {"ids": ids[:, perm]}, permuted,
                        meta={"task": loaded.task, "model_name": loaded.name, "whatif": whatif.describe()},
                        precision="float32")
    return PermutationResult(
        whatif=whatif, perm=perm, tokens=list(prep.tokens), permuted_tokens=permuted, trace=trace,
        probs_orig=check["probs_orig"], probs_perm=check["probs_perm"], probs_expected=check["probs_expected"],
        max_error=check["max_error_equivariant"],
    )
