"""Every exportable figure by name: which view draws it and which models it applies to.

The CLI, the lecture pack and the app's Export… action all build figures here, so a figure exported
from the command line is drawn by exactly the widget the app shows.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass

from attnviz.errors import AttnvizError
from attnviz.selection import Selection, SelectionState

__all__ = ["FigureSpec", "FIGURES", "SIX_STEPS", "make_figure", "figure_spec", "export_style", "goto_step",
           "make_figure_steps"]

TEXT = ("encoder", "decoder", "encoder-decoder")
ALL = (*TEXT, "vit")


@dataclass(frozen=True)
class FigureSpec:
    name: str
    module: str
    cls: str
    kinds: tuple[str, ...] = ALL
    needs_grad: bool = False  # the view shows gradient rollout: capture with grad=True
    per_head: bool = True  # the figure depends on the selected head (--all-heads makes sense)
    help: str = ""
    # the selection fields the figure draws (a lecture pack names files and writes commands with these only)
    selects: tuple[str, ...] = ("layer", "head", "query", "part")


FIGURES: dict[str, FigureSpec] = {f.name: f for f in (
    FigureSpec("head-map", "attnviz.gui.views.head_map_view", "HeadMapView",
               help="T×T attention of one layer/head with token labels and colour bar"),
    FigureSpec("model", "attnviz.gui.views.model_view", "ModelView", per_head=False,
               selects=("layer", "head", "part"),  # every map, the selected one outlined
               help="all layers × heads as thumbnails"),
    # every head of the layer at once (its check boxes pick heads, not --head)
    FigureSpec("token-lines", "attnviz.gui.views.token_lines_view", "TokenLinesView", per_head=False,
               selects=("layer", "query", "part"),
               help="tokens joined by lines whose opacity is the attention weight"),
    FigureSpec("rollout", "attnviz.gui.views.rollout_view", "RolloutView", needs_grad=True, per_head=False,
               selects=("query",),
               help="raw attention vs rollout vs gradient rollout (overlay on images)"),
    FigureSpec("filters-pca", "attnviz.gui.views.filter_pca_view", "FilterPCAView", ("vit",), per_head=False, selects=(),
               help="first principal components of the patch-embedding filters"),
    FigureSpec("pos-similarity", "attnviz.gui.views.position_similarity_view", "PositionSimilarityView", per_head=False, selects=(),
               help="cosine similarity of positional embeddings"),
    FigureSpec("attention-distance", "attnviz.gui.views.attention_distance_view", "AttentionDistanceView", per_head=False,
               selects=("layer", "head"),  # every head, the selected one marked
               help="mean attention distance per head vs layer"),
    FigureSpec("token-pca", "attnviz.gui.views.token_embedding_view", "TokenEmbeddingView", TEXT, per_head=False,
               selects=("query",),
               help="PCA of the token embeddings, labelled"),
    FigureSpec("pos-encoding", "attnviz.gui.views.positional_encoding_view", "PositionalEncodingView", per_head=False,
               selects=("query",),
               help="the positional encoding as a heatmap"),
    FigureSpec("steps", "attnviz.gui.walkthrough", "WalkthroughWidget",
               help="self-attention step by step for one query (--step 1..6)"),
    FigureSpec("qk-embedding", "attnviz.gui.views.qk_embedding_view", "QKEmbeddingView",
               help="one head's queries and keys of 200 held-out inputs in one 2-D embedding (AttentionViz)"),
    FigureSpec("matrix-form", "attnviz.gui.walkthrough", "MatrixFormWidget",
               help="matrix form (Q=XW_Q, K, V, QKᵀ, scaled, masked, P, Z=PV, concat heads × W_O)"),
    FigureSpec("many-heads", "attnviz.gui.walkthrough.matrix_sections", "ManyHeadsFigure", per_head=False,
               help="many heads, one output: every head's Z, concatenated, times W_O = the layer's attention output"),
    FigureSpec("matrix-z", "attnviz.gui.walkthrough.matrix_sections", "MatrixZFigure",
               help="matrix form of one head's output: Z = P V and its part of the attention output"),
    FigureSpec("scale-reason", "attnviz.gui.views.scale_reason_view", "ScaleReasonView",
               help="why 1/√d_k: spread of q·k, softmax top weight and gradient against d_k, scaled and not"),
    FigureSpec("scale-training", "attnviz.gui.views.scale_training_view", "ScaleTrainingView", per_head=False,
               selects=(), help="the same model trained with and without 1/√d_k at d_k 256 (shipped runs, 3 seeds): "
                                "loss, accuracy and attention entropy over training"),
    FigureSpec("path-length", "attnviz.gui.views.path_length_view", "PathLengthView", per_head=False,
               selects=(), help="an RNN and a transformer trained on the same long-range task (shipped runs): "
                                "steps between two tokens, accuracy and input gradient against distance"),
    FigureSpec("masked-lm", "attnviz.gui.views.masked_lm_view", "MaskedLMView", ("encoder",), per_head=False,
               selects=(), help="every [MASK] of the input: the head that looks hardest from it, its weights over the "
                                "sentence, and the model's top five words there with their probabilities"),
    # lesson figures (attnviz.gui.views.lesson_views): the whole mask from a trace; the others re-run the model
    FigureSpec("causal-mask", "attnviz.gui.views.lesson_views", "CausalMaskView", TEXT,
               help="the whole T×T mask M with −∞, the masked scores and P"),
    FigureSpec("what-if", "attnviz.gui.views.lesson_views", "WhatIfView",
               help="attention and prediction as trained and with what-if switches, row entropy"),
    FigureSpec("permutation", "attnviz.gui.views.lesson_views", "PermutationView", ("encoder", "decoder"),
               help="P(RX) beside R·P·Rᵀ with their largest difference"),
    FigureSpec("word-order", "attnviz.gui.views.lesson_views", "WordOrderView", ("encoder",), per_head=False, selects=(),
               help="swapped-pair accuracy with and without positions, both models on the sentence"),
    FigureSpec("compare", "attnviz.gui.views.compare_view", "CompareView", selects=("layer", "head", "part"),
               help="one head of two traces (--compare OTHER) on one colour scale, and their difference"),
    FigureSpec("attention-cost", "attnviz.gui.views.attention_cost_view", "AttentionCostView", TEXT, per_head=False,
               selects=(), help="the T² slide: this model's attention time and memory against T, eager T×T vs "
                                "tiled (SDPA), measured on this machine"),
)}


def figure_spec(name: str) -> FigureSpec:
    if name not in FIGURES:
        raise AttnvizError(f"unknown view {name!r}: choose one of {', '.join(FIGURES)}")
    return FIGURES[name]


def view_class(spec: FigureSpec):
    try:
        return getattr(importlib.import_module(spec.module), spec.cls)
    except (ImportError, AttributeError):
        raise AttnvizError(f"the {spec.name!r} view is not available in this build") from None


def export_style(theme: str = "light", colormap: str = "viridis", colour_bar: bool = True, font_scale: float = 1.0):
    """The ViewStyle of an exported figure: light for slides by default, whatever the app's theme."""
    import pyqtgraph as pg

    from attnviz.gui.style import PRESETS

    base = PRESETS["default" if theme == "light" else theme]
    if colormap not in pg.colormap.listMaps():
        raise AttnvizError(f"unknown colour map {colormap!r} (try viridis, cividis, inferno, magma, plasma)")
    return base.with_(cmap=colormap, colour_bar=colour_bar, font_scale=base.font_scale * font_scale)


def make_figure(name: str, trace, state: SelectionState, style=None, step: int | None = None):
    """Build the view for ``name`` off-screen, showing ``trace`` at ``state``; returns (view, selection).

    The caller keeps the selection alive as long as the view (views hold it weakly).
    """
    steps = make_figure_steps(name, trace, state, style, step)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def make_figure_steps(name: str, trace, state: SelectionState, style=None, step: int | None = None):
    """:func:`make_figure` as a generator that yields once the view is built; returns (view, selection).

    The app's export runs one step per event-loop turn, so building a figure and drawing it never
    freeze the window for their sum. Giving the trace and painting must share a turn: a layout
    request handled in between moves the layers×heads grid a few pixels, and the file would no
    longer be the one the command line writes. Closing the generator early closes the view."""
    spec = figure_spec(name)
    if trace.kind not in spec.kinds:
        raise AttnvizError(f"the {name!r} view does not apply to {trace.kind} models")
    _check_state(trace, state)
    cls = view_class(spec)
    selection = Selection(state)
    view = cls(selection=selection, style=style) if style is not None else cls(selection=selection)
    try:
        yield
        view.set_trace(trace)
        view.ensure_current()  # views built off-screen postpone or background some work
        if step is not None:
            goto_step(view, name, step)
    except BaseException:
        view.close()
        view.deleteLater()
        raise
    return view, selection


# The lectures' six steps; the walkthrough adds a "mask" step between 3 and 4 for masked (causal) rows.
SIX_STEPS = ("project", "score", "scale", "softmax", "weight", "sum")


def goto_step(view, name: str, step) -> None:
    """Show walkthrough step ``step`` (1-6 or a step's name) in ``view``; AttnvizError when it has none."""
    if not hasattr(view, "set_step"):
        raise AttnvizError(f"--step applies to the 'steps' view, not {name!r}")
    key = SIX_STEPS[int(step) - 1] if str(step).isdigit() and 1 <= int(step) <= 6 else str(step)
    if key not in view.step_list:
        raise AttnvizError(f"step {step!r} is not shown for this input (steps: 1-6 or {', '.join(view.step_list)})")
    view.set_step(view.step_list.index(key))


def _check_state(trace, s: SelectionState) -> None:
    trace.check_selection(s.part, s.layer, s.head, s.query)
