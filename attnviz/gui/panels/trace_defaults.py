"""What a lecture starts from when a trace arrives: which attention and which query token (no Qt)."""

from __future__ import annotations

__all__ = ["trace_defaults", "input_id"]


def input_id(trace) -> str | None:
    """:func:`attnviz.selection.input_fingerprint` of ``trace``'s input: its tokens, an encoder–decoder's
    source too, an image's pixels (None without a trace)."""
    if trace is None:
        return None
    import numpy as np

    from attnviz.selection import input_fingerprint

    tokens = list(trace.tokens) + (["\x1e", *trace.key_tokens("cross")] if trace.has_cross else [])
    image = np.ascontiguousarray(trace["image"]).tobytes() if "image" in trace else b""
    return input_fingerprint(tokens, image)


def trace_defaults(previous, trace, query: int | None, new_model: bool, kept: dict | None = None) -> dict:
    """Selection changes for ``trace`` (one update, so one redraw), given the ``previous`` trace.

    * a new model's first trace: the one default rule's part, head and query
      (:func:`attnviz.analysis.walkthrough_default.default_selection`: cross-attention when there is one,
      the model's focus head else its sharpest, its task's query token or none), never the previous model's
      query or key; where this model was left earlier (``kept``: layer, head, part) when that still exists,
      and its query when the input is the one it was clicked in (else none: nothing stale);
    * the token where the task reads its answer (``meta["query_index"]``: "it" for coref, the
      it → animal lesson), unless the user picked another one; typing keeps following it as it moves.
    """
    from attnviz.analysis.walkthrough_default import default_selection
    from attnviz.errors import AttnvizError

    changes = {}
    index = trace.description.query_index
    if new_model:
        try:
            changes = default_selection(trace, "attention")
        except AttnvizError:  # a trace the rule cannot read (no probabilities): the part and task query only
            changes = {"part": "cross" if trace.has_cross else "self", "key": None,
                       "query": int(index) if index is not None else None}
        if kept and not trace.selection_error(kept["part"], kept["layer"], kept["head"]):
            changes.update(layer=kept["layer"], head=kept["head"], part=kept["part"])
            if kept["part"] != "self":  # the task's query is a row of self-attention
                changes["query"] = None
            if kept.get("input") is not None and kept["input"] == input_id(trace):
                changes["query"] = kept["query"]  # the same input: the row the lecturer left it on
        return changes
    if index is not None:
        followed = previous.description.query_index if previous is not None else None
        if query is None or query == followed:
            changes["query"] = int(index)
    return changes
