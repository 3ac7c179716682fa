"""The one rule for where a trace opens: which part, head and query every tab, command and export starts on.

The app (the attention views on a model's first trace, the walkthrough the first time it is on screen),
``attnviz steps``, ``attnviz export``, the lecture pack, the lesson's scenes and the notebook API all call
:func:`default_selection` (or :func:`walkthrough_default`, its walkthrough half), so they show the same numbers.

* **part** — cross-attention for an encoder–decoder (the alignment of a translation), else self-attention.
* **query** — never a row that produces nothing: an encoder–decoder's decoder position i writes token i + 1,
  so the last one (after [EOS]) wrote nothing, the one before it only [EOS], and the default is the one
  that wrote the last word; a vision
  classifier opens on [CLS] (token 0, the token its classifier reads); else the token where the task reads
  its answer (``meta["query_index"]``, "it" for coref), else "it", else the last token (what a decoder
  predicts from). The attention views select that query only when the task names one; otherwise no row is
  singled out (every row is shown alike).
* **head** — the attention views open on the model's own ``focus`` head when it names one (coref: chosen on
  validation data), else on its sharpest head (the largest mean top weight over the rows that wrote
  something: the clearest alignment of a translation, not the blurriest). The walkthrough keeps that head
  when its row at the query mixes (largest weight < ``MIX_TOP``), else it takes the head whose row mixes most
  visibly (the largest second-largest weight): a one-hot row makes z = v of one token, and the lecture's
  "z is a weighted mix of the values" never shows. When the walkthrough so opens on another head than the
  attention views, the app says so and each tab keeps its own (:class:`attnviz.selection.Selection`); a key,
  row or head clicked in another tab never changes the walkthrough's head, only a head chosen in it does.
Qt-free.
"""

from __future__ import annotations

import numpy as np

__all__ = ["walkthrough_default", "default_selection", "default_part", "default_query", "vision_has_cls",
           "open_walkthrough", "page_model", "emerged_head", "MIX_TOP", "SHARP_ROWS", "WALKTHROUGH_VIEWS", "PAGES"]

WALKTHROUGH_VIEWS = ("steps", "matrix-form", "matrix-z")  # the figures that open where the walkthrough does
PAGES = ("attention", "walkthrough")  # the two kinds of page a default is chosen for
MIX_TOP = 0.8  # a row whose largest weight is below this visibly mixes two or more values


def default_part(trace) -> str:
    """"cross" for a trace with cross-attention (what an encoder–decoder opens on), else "self"."""
    return "cross" if trace.has_cross else "self"


def vision_has_cls(trace, part: str = "self") -> bool:
    """True when ``trace`` is an image classifier's whose first token is [CLS] (one more token than patches)."""
    grid = trace.grid
    return grid is not None and part == "self" and len(trace.query_tokens(part)) > grid[0] * grid[1]


def default_query(trace, part: str = "self") -> int:
    """The query row the walkthrough opens on for ``part`` (see the module docstring); never a row that
    produced nothing, never past the end."""
    from attnviz.analysis.decoder_positions import last_word_row, produces_tokens

    n_q = len(trace.query_tokens(part))  # from the tokens: a probabilities-only trace has no x
    if part != "enc" and produces_tokens(trace):
        # decoder position i produces token i + 1: the last position (after [EOS]) produced nothing and
        # the one before it only the end marker, so open on the one that wrote the last word
        return min(last_word_row(trace), max(n_q - 2, 0))
    if part != "self":
        return n_q - 1
    if vision_has_cls(trace, part):
        return 0  # [CLS]: what the classifier reads, the token the Rollout view asks about
    if trace.description.query_index is not None:
        return min(trace.description.query_index, n_q - 1)
    tokens = [str(t).lower() for t in trace.tokens]
    return tokens.index("it") if "it" in tokens[:n_q] else n_q - 1


def _rows_at(trace, part: str, query: int) -> np.ndarray:
    """Every head's attention row at ``query``: (L, H, T_k), float64."""
    return np.stack([np.asarray(trace.probs(layer, part, rows=query)[:, 0], np.float64)
                     for layer in range(trace.layers_in(part))])


def _focus(trace, part: str, shape) -> tuple[int, int] | None:
    focus = trace.description.focus or {}
    if part != "self" or "layer" not in focus or "head" not in focus:
        return None
    at = (int(focus["layer"]), int(focus["head"]))
    return at if at[0] < shape[0] and at[1] < shape[1] else None


SHARP_ROWS = 64  # rows sampled per head to find the sharpest head (a long trace's rows are computed on demand)


def _sharpest(trace, part: str) -> tuple[int, int]:
    """The (layer, head) whose rows put the most weight on one key, on average over the rows that wrote
    something (an encoder–decoder's last decoder row wrote nothing)."""
    from attnviz.analysis.decoder_positions import produces_tokens

    n_q = len(trace.query_tokens(part))
    last = n_q - 1 if part != "enc" and produces_tokens(trace) and n_q > 1 else n_q
    rows = np.unique(np.linspace(0, last - 1, min(last, SHARP_ROWS)).astype(int))
    top = np.stack([trace.probs(layer, part, rows=rows).max(axis=-1).mean(axis=-1)  # (H,)
                    for layer in range(trace.layers_in(part))])  # (L, H)
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(top)), top.shape))


def default_selection(trace, page: str = "attention", part: str | None = None) -> dict:
    """Where ``page`` ("attention" or "walkthrough") opens on ``trace``: a dict of part, layer, head, query
    and key (None), ready for ``Selection.update`` / ``SelectionState(**...)``.

    ``part`` (default :func:`default_part`) must exist in the trace, else
    :class:`attnviz.errors.InputError` with one line. The attention page's query is the task's (None
    when the task names none); the walkthrough's is always a row (:func:`default_query`).
    """
    from attnviz.errors import InputError

    if page not in PAGES:
        raise InputError(f"unknown page {page!r} (one of {', '.join(PAGES)})")
    part = part or default_part(trace)
    problem = trace.selection_error(part)
    if problem:  # e.g. cross-attention asked of an encoder: the caller's one-line error, not a KeyError
        raise InputError(problem)
    query = default_query(trace, part)
    rows = _rows_at(trace, part, query)
    focus = _focus(trace, part, rows.shape) or _sharpest(trace, part)
    if page == "attention" or rows[focus].max() < MIX_TOP:
        layer, head = focus
    else:
        second = np.sort(rows, axis=-1)[..., -2] if rows.shape[-1] > 1 else np.zeros(rows.shape[:2])
        layer, head = (int(i) for i in np.unravel_index(int(np.argmax(second)), second.shape))
    if page == "attention":
        index = trace.description.query_index
        query = query if part == "self" and index is not None else None
    return {"part": part, "layer": layer, "head": head, "query": query, "key": None}


def walkthrough_default(trace, part: str = "self") -> tuple[int, int, int]:
    """(layer, head, query) the walkthrough opens on for ``trace`` and ``part`` (see the module docstring)."""
    d = default_selection(trace, "walkthrough", part)
    return d["layer"], d["head"], d["query"]


def _at(d) -> str:
    get = d.get if isinstance(d, dict) else (lambda k: getattr(d, k))
    return f"layer {get('layer')} · head {get('head')}"


def page_model(trace) -> str:
    """The name a page's own choice is kept under for ``trace``'s model (its folder, else its name)."""
    return str(trace.description.model_path or trace.description.model_name or "")


def open_walkthrough(selection, trace) -> str | None:
    """The walkthrough comes on screen: move the shared ``selection`` to the walkthrough's own head as a
    *detour* (:meth:`attnviz.selection.Selection.start_detour`: leaving the walkthrough gives the other tabs
    their head back). Its own head is the one the user chose in it for this model
    (:meth:`~attnviz.selection.Selection.page_choice`), else the rule's (:func:`default_selection`): a key,
    row or head clicked in another tab never changes it (a clicked key put the walkthrough on the head map's
    head, issue 36). A row the user clicked is kept when it is a row of that part; else the rule's row.
    Returns the sentence that tells the user, or None."""
    from attnviz.errors import AttnvizError

    s = selection.state
    chosen = selection.page_choice("walkthrough", page_model(trace))
    if chosen is not None and (s.layer, s.head, s.part) == (chosen["layer"], chosen["head"], chosen["part"]):
        return None  # already on the user's own head: the walkthrough shows it (clamped there if out of range)
    try:
        if chosen is not None and not trace.selection_error(chosen["part"], chosen["layer"], chosen["head"]):
            there = dict(chosen, query=default_query(trace, chosen["part"]))
        else:
            chosen = None
            there = default_selection(trace, "walkthrough")
        here = default_selection(trace, "attention")
    except AttnvizError:  # a trace the rule cannot read: the walkthrough says why itself
        return None
    rule_row = there["query"]
    if s.part == there["part"] and s.query is not None and s.query not in (here["query"], rule_row):
        there["query"] = s.query  # the row the user clicked: the walkthrough computes that one
    before = selection.start_detour(**{k: there[k] for k in ("layer", "head", "query", "part")})
    if before is None or (there["layer"], there["head"], there["part"]) == (before.layer, before.head, before.part):
        return None  # nothing moved, or only the row (the attention views single none out)
    if chosen is not None:
        return (f"The walkthrough opens on {_at(there)}, the head you chose in it; "
                f"the Attention tab keeps {_at(before)} and shows it again when you switch back.")
    from attnviz.analysis.decoder_positions import row_labels
    from attnviz.text.token_display import display_token

    # the row as the walkthrough's picker and `steps` name it ("→ vidas" for the decoder position that
    # wrote "vidas", "cat" for a BPE "Ġcat"), not the raw token the position read
    token = display_token(row_labels(trace, there["part"])[rule_row])
    return (f"The walkthrough opens on {_at(there)}, where the row of {token!r} mixes several values; "
            f"the Attention tab keeps {_at(before)} and shows it again when you switch back.")


def emerged_head(snaps, probe: int = 0, part: str = "self") -> tuple[int, int]:
    """Where the training replay opens: the (layer, head) whose attention on probe ``probe`` sharpened most
    from the first snapshot to the last (the increase of its rows' mean top weight) — where the story of
    training shows, not layer 0 · head 0 by position. ``snaps``: :class:`attnviz.training.snapshots.Snapshots`."""
    first, last = 0, len(snaps.steps) - 1
    gain = np.stack([np.asarray(snaps.probs(last, probe, layer, part), np.float64).max(-1).mean(-1)
                     - np.asarray(snaps.probs(first, probe, layer, part), np.float64).max(-1).mean(-1)
                     for layer in range(snaps.n_layers(part))])  # (L, H)
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(gain)), gain.shape))
