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

__all__ = ["WhatIf", "shown_head", "applied", "run_whatif", "decoder_reads", "prediction_row", "top_predictions", "compare_whatif",
           "at_position", "WhatIfComparison", "permute_tokens", "PermutationResult"]


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
        """A short caption: "no scaling · T = 2 · causal mask off · no positions · L0·H1 switched off (z = 0)", the
        words the app's What-if panel uses."""
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
            parts.append(", ".join(f"L{layer}·H{h}" for layer, h in sorted(self.ablate)) + " switched off (z = 0)")
        return " · ".join(parts) or "as trained"


def shown_head(whatif: WhatIf, layer: int, head: int) -> tuple[int, int]:
    """The head a comparison's maps show (the app's What if tab and its export alike): the selected one, or,
    when heads are ablated and the selected one is not, the first ablated head — the switch the student just
    flipped, not a head it leaves alone."""
    if whatif.ablate and (layer, head) not in whatif.ablate:
        return min(whatif.ablate)
    return layer, head


def switches_refused(model) -> str:
    """Why the switches cannot act on ``model`` ('' when they can): a Hugging Face model's attention modules
    are not ours (its loader gives it a ``cfg`` too, for the views; transformers models carry their own
    ``config``)."""
    if not hasattr(model, "cfg") or hasattr(model, "config"):
        return "the what-if switches work on attnviz's own models, not on Hugging Face models"
    return ""


@contextmanager
def applied(model, whatif: WhatIf):
    """Apply ``whatif`` to ``model`` for the duration of the block; restore every switch afterwards.

    Raises InputError (before changing anything) when an ablated (layer, head) does not exist.
    """
    import torch

    from attnviz.models.attention import Attention
    from attnviz.models.blocks import PositionalEncoding
    from attnviz.models.registry import attention_layers

    refused = switches_refused(model)
    if refused:
        raise InputError(refused)
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


def run_whatif(loaded, whatif: WhatIf, text: str | None = None, image=None, truncate: bool = False,
               target_text: str | None = None):
    """Trace ``loaded`` on the input with ``whatif`` applied (float32); ``meta["whatif"]`` describes it.
    ``target_text``: what an encoder–decoder's decoder reads instead of its own greedy output."""
    from attnviz.runtime import run_trace

    with applied(loaded.model, whatif):
        trace = run_trace(loaded, text=text, image=image, truncate=truncate, precision="float32", rollout=False,
                          target_text=target_text)
    trace.meta["whatif"] = whatif.describe()
    return trace


def decoder_reads(trace) -> str | None:
    """The output an encoder–decoder trace's decoder read (its own greedy output or the given target), as a
    target text; None for every other trace. The switched run reads the same, so that a decoder position
    holds the same prefix in both runs and one position can be compared."""
    if trace.kind != "encoder-decoder":
        return None
    d = trace.description
    return d.target_text if d.decoder_input == "target" and d.target_text else d.output_text


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


def prediction_row(trace, position: int | None = None) -> tuple[np.ndarray, str]:
    """The distribution a what-if compares at query ``position`` (the walkthrough's; None: the one default
    rule's, :func:`attnviz.analysis.walkthrough_default.default_query`), and a phrase naming where it is read.

    * an encoder–decoder: after decoder position ``position`` (what the Prediction panel shows for that
      query): "at 'na' (decoder position 7, which wrote 'vidas')";
    * per-token outputs (T, C): at ``position`` ("at 'it' (position 8)");
    * a decoder's next token (C,): after its last token, the only place it predicts; a query elsewhere is
      named as not an output;
    * a classifier (C,): the whole input's one answer, not a position's.
    """
    row, where, _ = _read(trace, position)
    return row, where


def _read(trace, position: int | None) -> tuple[np.ndarray, str, int | None]:
    """:func:`prediction_row` and the position it read (None: a classifier's whole-input answer)."""
    from attnviz.analysis.decoder_positions import END, position_distribution
    from attnviz.analysis.walkthrough_default import default_query

    tokens = [str(t) for t in trace.tokens]
    n = len(tokens)
    valid = position is not None and 0 <= int(position) < n
    if trace.kind == "encoder-decoder" and "next_probs" in trace:
        pos = int(position) if valid else default_query(trace, "cross")
        row, pos = position_distribution(trace, pos)
        wrote = f"which wrote {tokens[pos + 1]!r}" if pos + 1 < n else f"{END}: nothing was written after it"
        return row, f"at {tokens[pos]!r} (decoder position {pos}, {wrote})", pos
    pred = np.asarray(trace["prediction"], dtype=np.float64)
    if pred.ndim == 2:  # one distribution per token (a masked LM)
        pos = int(position) if valid and int(position) < pred.shape[0] else default_query(trace)
        pos = min(pos, pred.shape[0] - 1)
        return pred[pos], f"at {tokens[pos]!r} (position {pos})", pos
    if trace.kind == "decoder":
        last = n - 1
        # the trace keeps the next-token prediction of the last position only: a query elsewhere is named
        # so that the verdict is not read as that query's prediction
        q = int(position) if valid else last
        elsewhere = f": the prediction is read there only, not at the query {tokens[q]!r}, position {q}" \
            if q != last else ""
        return pred, f"after the last token {tokens[last]!r} (position {last}{elsewhere})", last
    # a classifier (text or vision): one answer for the whole input; its query is a row of attention only
    return pred, "for the whole input (a classifier's one answer, not a position's)", None


def top_predictions(trace, loaded, k: int = 5, position: int | None = None) -> list[tuple[str, float]]:
    """The ``k`` most probable outputs (label, probability) of a trace at ``position``, best first."""
    row, _ = prediction_row(trace, position)
    return _top(row, loaded, k)


def _top(row: np.ndarray, loaded, k: int) -> list[tuple[str, float]]:
    labels = _labels(loaded, row.shape[0])
    order = np.argsort(-row, kind="stable")[:k]
    return [(labels[i], float(row[i])) for i in order]


@dataclass
class WhatIfComparison:
    """The model as trained and with the switches, on the same input."""

    whatif: WhatIf
    before: object  # Trace
    after: object  # Trace
    where: str  # which output is compared, named: "at 'na' (decoder position 7, which wrote 'vidas')"
    top_before: list[tuple[str, float]]
    top_after: list[tuple[str, float]]
    changed: float  # total variation distance between the two output distributions, 0..1
    argmax_changed: bool
    entropy_before: np.ndarray  # (L, H) mean attention entropy in nats
    entropy_after: np.ndarray
    position: int | None = None  # the query position asked for (None: the default rule's)
    read_at: int | None = None  # the position the outputs were read at (None: a classifier's whole input)


def compare_whatif(loaded, whatif: WhatIf, text: str | None = None, image=None, k: int = 5,
                   before=None, position: int | None = None) -> WhatIfComparison:
    """Run the model as trained (unless ``before`` is given) and with ``whatif``; compare the outputs at
    query ``position`` (see :func:`prediction_row`; None: the default rule's query).

    An encoder–decoder's switched decoder reads the output the trained one wrote (not a re-generated one
    of another length), so a decoder position means the same prefix in both runs.
    """
    from attnviz.analysis.distance import attention_entropy

    before = before if before is not None else run_whatif(loaded, WhatIf(), text, image)
    try:
        after = run_whatif(loaded, whatif, text, image, target_text=decoder_reads(before))
    except InputError:  # a greedy output cut at the length limit, with no room for [EOS]: it re-generates
        after = run_whatif(loaded, whatif, text, image)
    base = WhatIfComparison(whatif=whatif, before=before, after=after, where="", top_before=[], top_after=[],
                            changed=0.0, argmax_changed=False,
                            entropy_before=attention_entropy(before), entropy_after=attention_entropy(after))
    return at_position(base, loaded, position, k)


def at_position(c: WhatIfComparison, loaded, position: int | None, k: int = 5) -> WhatIfComparison:
    """``c`` read at another query ``position``: the same two runs, no model call (a query picked in the
    walkthrough re-reads the comparison at once)."""
    p, where, read_at = _read(c.before, position)
    q, _, _ = _read(c.after, position)
    return replace(c, where=where, position=position, read_at=read_at, top_before=_top(p, loaded, k), top_after=_top(q, loaded, k),
                   changed=float(0.5 * np.abs(p - q).sum()) if p.shape == q.shape else 1.0,
                   argmax_changed=int(np.argmax(p)) != int(np.argmax(q)))


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
