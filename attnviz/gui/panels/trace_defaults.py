"""What a lecture starts from when a trace arrives: which attention and which query token (no Qt)."""

from __future__ import annotations

__all__ = ["trace_defaults"]


def trace_defaults(previous, trace, query: int | None, new_model: bool) -> dict:
    """Selection changes for ``trace`` (one update, so one redraw), given the ``previous`` trace.

    * a new model's first trace: cross-attention when there is one (the alignment of a translation),
      else self-attention;
    * the token where the task reads its answer (``meta["query_index"]``: "it" for coref, the
      it → animal lesson), unless the user picked another one; typing keeps following it as it moves;
    * the head the model names as its ``focus`` (coref: chosen on validation data), on a new model.
    """
    changes = {}
    if new_model:
        changes["part"] = "cross" if trace.has_cross else "self"
        focus = trace.meta.get("focus") or {}
        if "layer" in focus and "head" in focus:
            changes.update(layer=int(focus["layer"]), head=int(focus["head"]))
    index = trace.meta.get("query_index")
    if index is not None:
        followed = previous.meta.get("query_index") if previous is not None else None
        if query is None or query == followed:
            changes["query"] = int(index)
    return changes
