"""``attnviz.compare(t1, t2)``: the same head of two traces on one colour scale, and their difference.

Two inputs on one model, or one input on two models of the same shape (a base and a fine-tuned model).
The pair is drawn by the registered "compare" figure (:mod:`attnviz.gui.views.compare_view`) through the
same renderer as every other view, so the notebook figure is the file ``attnviz export --compare`` writes.
"""

from __future__ import annotations

__all__ = ["compare"]


def _trace_of(t, which: str):
    from attnviz.api.traced import Traced
    from attnviz.capture.trace import Trace
    from attnviz.errors import AttnvizError

    if isinstance(t, Traced):
        return t.trace
    if isinstance(t, Trace):
        return t
    raise AttnvizError(f"compare takes two traces (model.trace(...) or attnviz.from_attentions(...)); the {which} "
                       f"is a {type(t).__name__}")


def compare(first, second, layer: int | None = None, head: int | None = None, part: str = "self",
            labels: tuple[str, str] | None = None, **options):
    """One head of two traces side by side, on one colour scale, with their difference (second − first).

    Parameters
    ----------
    first, second : :class:`~attnviz.api.Traced` (or Traces) with the same layers, heads and token count.
    layer, head : default the first trace's focus head, else 0; part : "self", "cross" or "enc".
    labels : what the two maps are called (default: model name and input text).
    options : export options, as :meth:`Traced.figure` takes them (``size=(w, h)``, ``dpi`` …).

    Returns
    -------
    :class:`~attnviz.api.Figure` of the "compare" view (shows itself in Jupyter; ``.save("cmp.png")``).

    Examples
    --------
    >>> import numpy as np, attnviz
    >>> a = attnviz.from_attentions(np.full((1, 2, 3, 3), 1 / 3), ["x", "y", "z"], name="uniform")
    >>> b = attnviz.from_attentions(np.tile(np.eye(3), (1, 2, 1, 1)), ["x", "y", "z"], causal=False, name="diagonal")
    >>> attnviz.compare(a, b, layer=0, head=1)
    <attnviz.Figure 'compare' layer 0, head 1, self>
    >>> attnviz.compare(a, attnviz.from_attentions(np.full((1, 2, 2, 2), 0.5), ["x", "y"]))
    Traceback (most recent call last):
    ...
    attnviz.errors.InputError: cannot compare: layer 0 (self) is 2×3×3 in one trace and 2×2×2 in the other (heads × queries × keys): compare needs the same heads and token count
    """
    from attnviz.analysis.trace_compare import pair_traces
    from attnviz.api.checks import check_choice
    from attnviz.api.traced import Traced

    check_choice("part", part, ("self", "cross", "enc"))
    if labels is not None and (len(labels) != 2 or not all(isinstance(x, str) for x in labels)):
        from attnviz.errors import AttnvizError

        raise AttnvizError("labels must be two str, one per trace")
    pair = pair_traces(_trace_of(first, "first"), _trace_of(second, "second"), labels)
    return Traced(pair).figure("compare", layer=layer, head=head, part=part, **options)
