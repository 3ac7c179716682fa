"""The three maps the rollout view compares, computed from a Trace with the analysis functions (no Qt).

For a query row q: raw attention (last layer, heads averaged), attention rollout (Abnar & Zuidema)
and gradient rollout (Chefer et al.). Each row is turned into "shares": for images the CLS row over
the patches (the CLS column dropped) renormalised to sum 1; for text the whole row, renormalised.
Shares are comparable, so one colour scale serves all three.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from attnviz.analysis import compute_grad_rollout, compute_rollout
from attnviz.analysis.rollout_row import LONG_ROLLOUT_T, rollout_row
from attnviz.errors import AttnvizError
from attnviz.text.token_display import display_token

__all__ = ["RolloutSettings", "RolloutMaps", "compute_rollout_maps", "default_query", "rollout_question"]


@dataclass(frozen=True)
class RolloutSettings:
    fusion: str = "mean"
    residual: float = 0.5
    start_layer: int = 0
    discard: float = 0.0


@dataclass
class RolloutMaps:
    """``maps`` name → 1-D shares over keys (patches for images) or None with ``notes[name]`` saying why."""

    query: int
    maps: dict[str, np.ndarray | None]
    notes: dict[str, str]
    image_mode: bool
    grad_of: str = ""  # what the gradients are of ("the predicted class's score"), when there are gradients

    @property
    def vmax(self) -> float:
        found = [float(m.max()) for m in self.maps.values() if m is not None and m.size]
        return max(found) if found else 1.0


def default_query(trace, part: str = "self") -> int:
    """The row the rollout asks about when none is selected: [CLS] for an image or a classifier that reads
    token 0, else the one default rule's
    query (:func:`attnviz.analysis.walkthrough_default.default_query`: the task's query, never an
    encoder–decoder's row that wrote nothing), so the Rollout tab, its export and the pack ask the same."""
    from attnviz.analysis.walkthrough_default import default_query as one_rule

    if trace.grid is not None and part == "self":
        return 0
    config = trace.description.config
    if (part == "self" and config.get("head") == "classify" and config.get("pool", "cls") == "cls"
            and trace.description.query_index is None):
        return 0  # the classifier reads its answer from token 0: where that token's information comes from
    return one_rule(trace, part)


def rollout_question(trace, part: str, query: int, image_mode: bool) -> tuple[str, str | None]:
    """The figure's question and a line on what it leaves out, naming the row as the other views do and what is rolled out: an
    encoder–decoder's decoder position reads one token and writes the next, and its rollout follows the
    decoder's self-attention only (cross-attention is not square, so the flow to the source is not in it)."""
    from attnviz.analysis.decoder_positions import produced_tokens, produces_tokens

    if image_mode:
        return "Where does [CLS] get its information?", None
    token = display_token(trace.query_tokens(part)[query])
    if part == "self" and produces_tokens(trace):
        wrote = produced_tokens(trace)[query]
        writes = f", writes {display_token(wrote)}" if wrote is not None else ", writes nothing"
        return (f"Where does decoder position {query} (reads {token}{writes}) get its information?",
                "decoder self-attention only: the flow through cross-attention to the source is not rolled out")
    return f"Where does {token} [{query}] get its information?", None


def _grad_row(trace) -> int | None:
    """The row whose output the recorded gradients are of: None for a classifier (its score reads the
    whole sequence through its pooled token), else the last position (backward_to_target differentiates
    the prediction after it)."""
    if trace.description.config.get("head") == "classify":
        return None
    return len(trace.query_tokens("self")) - 1


def _shares(row: np.ndarray, n_prefix: int) -> np.ndarray:
    """The row's weights on the image patches (the first ``n_prefix`` tokens — CLS, DeiT's
    distillation token — have no place on the image), normalised to sum to 1."""
    row = np.clip(np.asarray(row, dtype=np.float64), 0.0, None)
    row = row[n_prefix:]
    total = row.sum()
    return row / total if total > 0 else row


def compute_rollout_maps(trace, settings: RolloutSettings, query: int | None = None,
                         part: str = "self") -> RolloutMaps:
    """Raw, rollout and gradient-rollout shares of row ``query`` (default :func:`default_query`).

    part : "self" or "enc" (cross-attention is not square: no rollout).
    """
    image_mode = trace.grid is not None and part == "self"
    n_prefix = len(trace.tokens) - trace.grid[0] * trace.grid[1] if image_mode else 0
    q = 0 if image_mode else (default_query(trace, part) if query is None else int(query))
    n = trace.layers_in(part)
    start = min(max(settings.start_layer, 0), n - 1)
    last = trace.probs(n - 1, part, rows=q)[:, 0].astype(np.float64)  # (H, T): the one row drawn
    maps: dict[str, np.ndarray | None] = {"raw": _shares(last.mean(axis=0), n_prefix)}
    notes = {"raw": f"raw attention (layer {n - 1}, heads averaged)"}
    _, tq, _ = trace.probs_shape(n - 1, part)
    if tq > LONG_ROLLOUT_T:  # a long input: the query's row alone, streamed over row blocks of every layer
        row = rollout_row(trace, q, fusion=settings.fusion, residual=settings.residual, start_layer=start,
                          part=part, discard=settings.discard)
    else:
        row = compute_rollout(trace, fusion=settings.fusion, residual=settings.residual, start_layer=start,
                              discard=settings.discard, part=part)[q]
    maps["rollout"] = _shares(row, n_prefix)
    notes["rollout"] = f"rollout ({settings.fusion}, residual {settings.residual:.2f}, from layer {start})"
    target = None if image_mode else _grad_row(trace)
    try:
        R = compute_grad_rollout(trace, start_layer=start, part=part)
        grad_of = "the predicted class's score" if target is None else \
            "the top next token's logit after the last position"  # finish.backward_to_target's target
        if target is not None and q != target:
            # the gradients explain one position's prediction: row q's relevance under them would be drawn
            # under a title about q while saying nothing about what q predicts
            tok = display_token(trace.query_tokens(part)[target])
            maps["grad"] = None
            notes["grad"] = (f"gradient rollout explains the prediction after the last position, {tok} [{target}] "
                             f"(the gradients are of that logit): select that row to see it")
            return RolloutMaps(query=q, maps=maps, notes=notes, image_mode=image_mode, grad_of="")
        # R = I + attention terms: the identity is each token's own input, not attention
        maps["grad"] = _shares((R - np.eye(R.shape[0]))[q], n_prefix)
        notes["grad"] = f"gradient rollout (from layer {start})"
    except AttnvizError:
        grad_of = ""
        maps["grad"] = None
        notes["grad"] = ("gradient rollout needs gradients, which are recorded for classifiers "
                         "(command line: attnviz trace --grad)")
    return RolloutMaps(query=q, maps=maps, notes=notes, image_mode=image_mode, grad_of=grad_of)
