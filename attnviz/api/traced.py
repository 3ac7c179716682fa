"""One traced input for notebooks: its arrays by name (NumPy), its figures, its interactive page."""

from __future__ import annotations

from collections.abc import Mapping

import copy

import numpy as np

from attnviz.api.checks import check_choice, check_index

__all__ = ["Traced", "open_trace", "read_only"]


def read_only(array) -> np.ndarray:
    """A read-only view of ``array``: what the API hands out can never change the trace it came from
    (``p = t["L1.probs"]; p /= p.max(-1, keepdims=True)`` raises). The trace's own arrays are frozen
    too (:func:`_freeze`), so the view cannot be made writeable again (NumPy refuses ``writeable=True``
    on a view of a read-only base)."""
    view = np.asarray(array).view()
    view.flags.writeable = False
    return view


def _read(trace, name: str) -> np.ndarray:
    value = trace[name]  # a deferred array is stored in trace.arrays when first read: freeze it there too
    stored = trace.arrays.get(name)
    if isinstance(stored, np.ndarray):
        stored.flags.writeable = False
    return read_only(value)


def _freeze(trace) -> None:
    """Mark every array the trace holds read-only: nothing downstream of the capture writes into one."""
    for a in trace.arrays.values():
        if isinstance(a, np.ndarray):
            a.flags.writeable = False


class _Arrays(Mapping):
    """The trace's arrays by name (``L0.probs``, ``emb.pos`` …; see ``attnviz.capture.trace``), read-only.

    Derived and deferred arrays (``L0.logits`` of a long input, ``rollout``) are computed when read.
    """

    def __init__(self, trace):
        self._trace = trace

    def __getitem__(self, name: str) -> np.ndarray:
        return _read(self._trace, name)

    def __iter__(self):
        return iter(self._trace.keys())

    def __len__(self) -> int:
        return len(self._trace.keys())

    def __contains__(self, name) -> bool:
        return isinstance(name, str) and name in self._trace


class Traced:
    """An input run through a model: ``tokens``, ``meta``, ``arrays`` by name, and its figures.

    ``trace`` is the runtime's :class:`~attnviz.capture.trace.Trace`, the object the app and the CLI
    draw from; ``model`` the :class:`~attnviz.api.Model` that made it (None for a trace read from a file).
    """

    def __init__(self, trace, model=None, inputs: dict | None = None):
        _freeze(trace)
        self.trace = trace
        self.model = model
        self._inputs = inputs or {}
        self._grad_trace = None

    # -- numbers -------------------------------------------------------------------------------
    @property
    def tokens(self) -> list[str]:
        return list(self.trace.tokens)

    @property
    def meta(self) -> dict:
        """The trace's facts (a copy: editing it changes no figure)."""
        return copy.deepcopy(self.trace.meta)

    @property
    def arrays(self) -> Mapping:
        """Every array by name, as NumPy (``t.arrays["L0.probs"]`` is (heads, T, T))."""
        return _Arrays(self.trace)

    @property
    def names(self) -> list[str]:
        return list(self.trace.keys())

    def __getitem__(self, name: str) -> np.ndarray:
        """One array by name, read-only (``t["L0.probs"]``: (heads, T, T)); one line for an unknown name."""
        from attnviz.errors import AttnvizError

        if not isinstance(name, str) or name not in self.trace:
            raise AttnvizError(f"no array {name!r} in this trace: see .names")
        return _read(self.trace, name)

    def __contains__(self, name) -> bool:
        return name in self.arrays

    def probs(self, layer: int, part: str = "self", heads=None, rows=None, cols=None) -> np.ndarray:
        """Attention weights (heads, queries, keys) of one layer (an absent part says so), in the model's
        precision: float16 for a float16 model, else float32 (:mod:`attnviz.capture.compute_dtype`).

        ``heads``, ``rows`` and ``cols`` pick a block (None, an int, a slice or a list of indices): at long
        lengths ask for the block you need, the whole (H, T, T) is built only when none is given.
        """
        layer = check_index("layer", layer, optional=False)
        check_choice("part", part, ("self", "cross", "enc"))
        self.trace.check_selection(part, layer, 0)
        return read_only(self.trace.probs(layer, part, heads=heads, rows=rows, cols=cols))

    def save(self, path, force: bool = False) -> None:
        """Write the trace as ``.npz`` (the format ``attnviz trace`` writes and the app opens), by the CLI's
        output rules: never over the model's files or input image, never into a model folder, never over a
        file attnviz did not write (``force=True`` lifts the last two)."""
        from attnviz.io.outputs import api_output

        with api_output(path, force, **self._sources()):
            self.trace.save(path)

    def _sources(self) -> dict:
        """What this trace was made from (its model's folder, its image file): never written over."""
        image = self._inputs.get("image")
        folder = getattr(getattr(self.model, "loaded", None), "path", None)
        return {"inputs": (image,), "folders": (folder,)}

    # -- figures -------------------------------------------------------------------------------
    def _focus(self, layer, head, view: str = "head-map", part: str | None = None,
               query: int | None = None) -> tuple[int, int, str, int | None]:
        """(layer, head, part, query) of a figure: what the caller named, the rest by the one default rule as
        `attnviz export` and the app open (the part: cross-attention for an encoder–decoder; the model's focus
        head, else its sharpest; the walkthrough's head and row for its figures)."""
        from attnviz.analysis.walkthrough_default import WALKTHROUGH_VIEWS, default_selection

        layer, head = check_index("layer", layer), check_index("head", head)
        if part is not None:
            check_choice("part", part, ("self", "cross", "enc"))
        d = default_selection(self.trace, "walkthrough" if view in WALKTHROUGH_VIEWS else "attention", part)
        if layer is None and head is None and query is None:
            query = d["query"]  # the row that goes with the default head (export does the same)
        return (d["layer"] if layer is None else int(layer), d["head"] if head is None else int(head), d["part"],
                query)

    def _trace_for(self, view: str):
        """The trace a view draws: the rollout view needs gradients; captured once, when asked for."""
        from attnviz.api.figure import figure_needs_grad

        if not figure_needs_grad(view) or "L0.grad" in self.trace.arrays or self.model is None:
            return self.trace
        if self._grad_trace is None:
            from attnviz.runtime import run_trace

            i = self._inputs
            self._grad_trace = run_trace(self.model.loaded, text=i.get("text"), image=i.get("image"), grad=True,
                                         truncate=i.get("truncate", False), precision=i.get("precision", "auto"))
        return self._grad_trace

    def _refuse_without(self, view: str) -> None:
        """Probabilities given by the caller (``from_attentions``) draw only the views they are enough for."""
        from attnviz.api.from_attentions import PROBS_VIEWS, needs_of
        from attnviz.errors import AttnvizError

        described = self.trace.description
        if view == "compare" and described.compare is None:
            raise AttnvizError("the 'compare' view draws two traces: attnviz.compare(t1, t2)")
        if described.source in ("attentions", "transformerlens") and view not in (*PROBS_VIEWS, "compare"):
            raise AttnvizError(f"the {view!r} view needs {needs_of(view)}: these are attention probabilities only "
                               f"(they draw {', '.join(PROBS_VIEWS)}); attnviz.load(model).trace(text) has it all")

    def figure(self, view: str = "head-map", layer: int | None = None, head: int | None = None,
               query: int | None = None, part: str | None = None, step=None, **options):
        """One of ``attnviz export``'s views as a :class:`~attnviz.api.Figure` (checked now: a view or
        part this model lacks raises :class:`attnviz.errors.AttnvizError` with one line).

        Parameters
        ----------
        view : head-map, model, token-lines, rollout, steps, matrix-form … (all: :func:`attnviz.views`).
        layer, head : default the one default rule's (``attnviz.analysis.walkthrough_default``): the
            model's focus head, else its sharpest; the walkthrough's for steps/matrix-form/matrix-z.
        query : a query position, or None (with layer and head unset: the rule's row, as export opens);
        part : "self", "cross" or "enc", default the rule's (cross for an encoder–decoder); step : for "steps".
        options : export options, as ``attnviz export`` takes them: ``size=(w, h)`` or ``preset``, ``dpi``,
            ``scale``, ``transparent``, ``title``, ``caption``, ``font_scale``, ``theme``, ``colormap``,
            ``colour_bar``, ``color_scale``.
        """
        from attnviz.api.figure import Figure

        self._refuse_without(view)
        query = check_index("query", query)
        layer, head, part, query = self._focus(layer, head, view, part, query)
        fig = Figure(self._trace_for(view), view, layer, head, query, part, step, **options)
        fig.sources = self._sources()  # its save() never writes over what the trace was made from
        return fig

    def html(self, view: str = "head-map", layer: int | None = None, head: int | None = None,
             part: str | None = None, **options):
        """The interactive page (head map, all heads, token lines) as a :class:`~attnviz.api.HtmlFigure`.

        options : ``colormap``, ``theme``, ``precision`` ("auto", "fp16", "uint8"), ``max_bytes``.
        """
        from attnviz.api.html_figure import HtmlFigure

        layer, head, part, _ = self._focus(layer, head, view, part)
        page = HtmlFigure(self.trace, view, layer, head, part, **options)
        page.sources = self._sources()
        return page

    def __repr__(self) -> str:
        t = self.trace
        return (f"<attnviz.Traced {t.description.model_name or 'model'!r}: {len(t.tokens)} tokens, "
                f"{t.n_layers} layers × {t.n_heads} heads, {len(t.keys())} arrays>")


def open_trace(path) -> Traced:
    """A trace written by ``attnviz trace`` (or :meth:`Traced.save`) as a :class:`Traced` (no model)."""
    from attnviz.capture.trace import Trace

    return Traced(Trace.load(path))
