"""Where the six-step walkthrough and the matrix form open: one head and one query for every caller.

The command line (``attnviz steps``, ``export --view steps/matrix-form/matrix-z``), the lecture pack and the
lesson's scenes all call :func:`walkthrough_default`, so they show the same numbers.

The query is the token where the task reads its answer ("it" for coref), else the last token (what a
decoder predicts from). The head is the model's ``focus`` when that head's row at the query mixes
(its largest weight < ``MIX_TOP``); otherwise the head whose row at the query mixes most visibly (the
largest second-largest weight), because a one-hot row makes z = v of one token and the lecture's
"z is a weighted mix of the values" never shows. Qt-free.
"""

from __future__ import annotations

import numpy as np

__all__ = ["walkthrough_default", "default_query", "MIX_TOP", "WALKTHROUGH_VIEWS"]

WALKTHROUGH_VIEWS = ("steps", "matrix-form", "matrix-z")  # the figures that open where the walkthrough does
MIX_TOP = 0.8  # a row whose largest weight is below this visibly mixes two or more values


def default_query(trace) -> int:
    """The task's answer token (``meta["query_index"]``), else "it", else the last token."""
    if trace.meta.get("query_index") is not None:
        return int(trace.meta["query_index"])
    tokens = [t.lower() for t in trace.tokens]
    return tokens.index("it") if "it" in tokens else len(tokens) - 1


def walkthrough_default(trace, part: str = "self") -> tuple[int, int, int]:
    """(layer, head, query) the walkthrough opens on for ``trace`` (see the module docstring)."""
    from attnviz.analysis.decoder_positions import produces_tokens
    from attnviz.errors import InputError

    problem = trace.selection_error(part)
    if problem:  # e.g. cross-attention asked of an encoder: the caller's one-line error, not a KeyError
        raise InputError(problem)
    n_q = len(trace.query_tokens(part))  # from the tokens: a probabilities-only trace has no x
    if part != "enc" and produces_tokens(trace):
        # decoder position i produces token i + 1: the last position (after [EOS]) produced nothing,
        # so open on the one that wrote the last token, as the prediction panel does
        query = max(n_q - 2, 0)
    else:
        query = min(default_query(trace), n_q - 1) if part == "self" else n_q - 1
    rows = np.stack([trace.probs(layer, part, rows=query)[:, 0].astype(np.float64)  # one row: never T×T
                     for layer in range(trace.layers_in(part))])  # (L, H, T_k)
    focus = trace.meta.get("focus") or {}
    if part == "self" and "layer" in focus and "head" in focus:
        at = (int(focus["layer"]), int(focus["head"]))
        if at[0] < rows.shape[0] and at[1] < rows.shape[1] and rows[at].max() < MIX_TOP:
            return at[0], at[1], query
    second = np.sort(rows, axis=-1)[..., -2] if rows.shape[-1] > 1 else np.zeros(rows.shape[:2])
    layer, head = (int(i) for i in np.unravel_index(int(np.argmax(second)), second.shape))
    return layer, head, query
