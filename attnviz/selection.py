"""What every view is looking at: one small evented object, Qt-free (napari's evented-model pattern).

Views read it and subscribe; clicking a thumbnail or a token sets it, and every view follows.

It also remembers, per model, where that model was left (``keep``/``kept``: layer, head and part, and the
clicked query with a fingerprint of the input it was clicked in, so it comes back only with that same input; a
clicked key belongs to one input of one model and is never carried into another), the head a page's user
chose in it (``choose_on_page``/``page_choice``: the walkthrough opens there, not where a click in another
tab left the shared selection), and a *detour*: a page that opens elsewhere than the shared selection (the
walkthrough on a head whose row mixes) starts one, and leaving that page ends it where the other tabs were
(``start_detour``/``end_detour``: their head unless the user chose one on the page, their row and key unless
the user clicked others). No widgets: the window state builds on it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, fields, replace
from typing import Callable, Iterable

__all__ = ["Selection", "SelectionState", "KEPT_FIELDS", "TOKEN_FIELDS", "HIGHLIGHT_ONLY_VIEWS", "without_highlight",
           "input_fingerprint"]

KEPT_FIELDS = ("layer", "head", "part")  # what is remembered of a model (a query/key belongs to one input)
TOKEN_FIELDS = ("query", "key")  # a detour gives these back apart from the head: a row clicked on the page stays
# figures in which the selected query is only a highlight (a boxed row, bold token, the lines of one
# token); elsewhere (rollout, the walkthrough's figures) the query is what the figure is about
HIGHLIGHT_ONLY_VIEWS = ("head-map", "model", "token-lines", "attention-distance", "pos-similarity",
                        "pos-encoding", "token-pca")


def input_fingerprint(tokens: Iterable[str], data: bytes = b"") -> str:
    """A short name for one input (its tokens, and ``data``: an image's pixels, whose patch names are the same
    for every image): a kept query is restored only into the input it was clicked in."""
    h = hashlib.sha1("\x1f".join(str(t) for t in tokens).encode("utf-8", "surrogatepass"))
    h.update(data)
    return h.hexdigest()[:16]


@dataclass(frozen=True)
class SelectionState:
    layer: int = 0
    head: int = 0
    query: int | None = None  # selected query token (row), None for "all"
    key: int | None = None  # selected key token (column)
    part: str = "self"  # "self", "cross" (decoder → encoder) or "enc" (encoder of an encoder–decoder)


def without_highlight(state: SelectionState, view: str) -> SelectionState:
    """``state`` for an export without the clicked row/column highlight (``export --no-highlight``, the
    Export dialog's box): the key always goes; the query too where it is only a highlight
    (:data:`HIGHLIGHT_ONLY_VIEWS`)."""
    return replace(state, key=None, query=None if view in HIGHLIGHT_ONLY_VIEWS else state.query)


@dataclass
class Selection:
    """Holds a SelectionState; ``update(...)`` changes fields and calls every listener once."""

    state: SelectionState = field(default_factory=SelectionState)
    _listeners: list[Callable[[SelectionState, set[str]], None]] = field(default_factory=list, repr=False)
    _kept: dict = field(default_factory=dict, repr=False)  # model → {layer, head, part} where it was left
    _detour: tuple | None = field(default=None, repr=False)  # (state to return to, state the detour set)
    _chosen: dict = field(default_factory=dict, repr=False)  # (page, model) → {layer, head, part} chosen there

    def __getattr__(self, name):
        if name in {f.name for f in fields(SelectionState)}:
            return getattr(self.state, name)
        raise AttributeError(name)

    def connect(self, callback: Callable[[SelectionState, set[str]], None]) -> None:
        """``callback(state, changed_field_names)`` after every effective change."""
        self._listeners.append(callback)

    def disconnect(self, callback) -> None:
        if callback in self._listeners:
            self._listeners.remove(callback)

    def update(self, **changes) -> None:
        new = replace(self.state, **changes)
        changed = {k for k in changes if getattr(new, k) != getattr(self.state, k)}
        if not changed:
            return
        self.state = new
        for cb in list(self._listeners):
            cb(new, changed)

    def clamp(self, n_layers: int, n_heads: int, n_queries: int) -> None:
        """Keep the selection valid after a new trace arrives (fewer layers, shorter text...)."""
        s = self.state
        q = s.query if s.query is None or s.query < n_queries else None
        self.update(layer=min(s.layer, n_layers - 1), head=min(s.head, n_heads - 1), query=q,
                    key=None if s.key is not None and s.key >= n_queries else s.key)

    # -- per model ---------------------------------------------------------------------------------
    def keep(self, model: str, input_id: str | None = None) -> None:
        """Remember where ``model`` is left (its layer, head and part; during a detour, where the other
        tabs are); with ``input_id`` (:func:`input_fingerprint` of the input on screen), its query too."""
        if model:
            at = self._detour[0] if self._detour is not None else self.state
            kept = {k: getattr(at, k) for k in KEPT_FIELDS}
            if input_id and at.query is not None:
                kept.update(query=at.query, input=str(input_id))
            self._kept[str(model)] = kept

    def leave_model(self, model: str, input_id: str | None = None) -> None:
        """Another model is coming: keep where ``model`` was left (its query with ``input_id``), end any
        detour, and drop the clicked query and key (positions of this model's input, meaningless in the next
        one's)."""
        self.keep(model, input_id)
        self._detour = None
        self.update(query=None, key=None)

    def kept(self, model: str) -> dict | None:
        """{layer, head, part} where ``model`` was left (and its query and input, when kept), or None."""
        got = self._kept.get(str(model)) if model else None
        return dict(got) if got is not None else None

    def kept_states(self) -> dict:
        """Every model's kept selection, as plain data (what the app stores between sessions)."""
        return {m: dict(v) for m, v in self._kept.items()}

    def restore_kept(self, data) -> None:
        """Take stored kept selections back (untrusted: anything malformed is skipped)."""
        if not isinstance(data, dict):
            return
        for model, v in list(data.items())[:200]:
            if (isinstance(model, str) and isinstance(v, dict) and v.get("part") in ("self", "cross", "enc")
                    and all(isinstance(v.get(k), int) and 0 <= v[k] < 4096 for k in ("layer", "head"))):
                self._kept[model] = {k: v[k] for k in KEPT_FIELDS}
                q, input_id = v.get("query"), v.get("input")
                if isinstance(q, int) and 0 <= q < 1 << 20 and isinstance(input_id, str) and 0 < len(input_id) <= 64:
                    self._kept[model].update(query=q, input=input_id)

    # -- detours -----------------------------------------------------------------------------------
    def start_detour(self, **changes) -> SelectionState | None:
        """Apply ``changes`` for one page and remember where the others were; returns that state (None
        when nothing changed). A detour already under way keeps its return point."""
        before = self._detour[0] if self._detour is not None else self.state
        target = replace(self.state, **changes)
        if target == before:
            self._detour = None
            self.update(**changes)
            return None
        self._detour = (before, target)  # before the listeners run: a view drawn now can say where it is
        self.update(**changes)
        return before

    def end_detour(self) -> bool:
        """Leave the detour page: back on the head (layer, head, part) the other tabs showed unless the user
        chose another on the page, and on their row and key unless the user clicked others (a row clicked in
        the walkthrough is the user's, and it alone never moved the head map's head). True when the other
        tabs' head came back."""
        detour, self._detour = self._detour, None
        if detour is None:
            return False
        back, set_ = detour
        now = self.state
        changes = {}
        head_back = all(getattr(now, k) == getattr(set_, k) for k in KEPT_FIELDS)
        if head_back:
            changes.update({k: getattr(back, k) for k in KEPT_FIELDS})
        # the rows of another part are other positions: a row clicked there cannot stay on this part's
        if all(getattr(now, k) == getattr(set_, k) for k in TOKEN_FIELDS) or (head_back and back.part != now.part):
            changes.update({k: getattr(back, k) for k in TOKEN_FIELDS})
        moved = any(getattr(now, k) != changes[k] for k in KEPT_FIELDS if k in changes)
        self.update(**changes)
        return moved

    # -- a page's own choice -----------------------------------------------------------------------
    def choose_on_page(self, page: str, model: str) -> None:
        """The user chose the head on ``page`` (a spin box of the walkthrough): that page opens there for
        ``model`` from now on, whatever is clicked in other tabs meanwhile."""
        if model:
            self._chosen[(page, str(model))] = {k: getattr(self.state, k) for k in KEPT_FIELDS}

    def page_choice(self, page: str, model: str) -> dict | None:
        """{layer, head, part} the user chose on ``page`` for ``model`` (:meth:`choose_on_page`), or None."""
        got = self._chosen.get((page, str(model))) if model else None
        return dict(got) if got is not None else None

    @property
    def in_detour(self) -> bool:
        return self._detour is not None

    @property
    def detour_origin(self) -> SelectionState | None:
        """Where the other tabs are while a detour is under way and its head untouched (None otherwise)."""
        d = self._detour
        return d[0] if d is not None and all(getattr(self.state, k) == getattr(d[1], k) for k in KEPT_FIELDS) else None
