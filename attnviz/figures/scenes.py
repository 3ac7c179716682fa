"""Export a scene (one figure) or a lesson (a PDF deck, or a folder of figures with an index page).

The scene's model runs on its input with its what-if switches; its title goes above the figure and its
caption below, with the claim's numbers measured on the spot (see :mod:`attnviz.lessons.claims`).
"""

from __future__ import annotations

import html
import time
from dataclasses import replace
from pathlib import Path

from attnviz.errors import AttnvizError
from attnviz.figures.render import ExportOptions, export_pdf_pages, export_widget
from attnviz.text.formula_markup import formula_html, formula_plain

__all__ = ["build_scene_figure", "compute_scene_figure", "make_scene_view", "export_scene", "export_lesson_pdf", "export_lesson_pack", "scene_style",
           "CAPTION_N"]

CAPTION_N = 200  # held-out examples behind a caption's number (as `attnviz lesson check`); the word-order figure uses as many


def scene_style(scene, base=None):
    """The export style of a scene: its colour map and theme over ``base``'s font scale."""
    from attnviz.figures.registry import export_style

    theme = scene.theme if scene.theme in ("light", "dark", "presentation") else "light"
    font_scale = getattr(base, "font_scale", 1.0) if base is not None else 1.0
    return export_style(theme, scene.colormap or "viridis", True, font_scale)


def compute_scene_figure(scene, bench):
    """What the scene's figure shows, computed from its model (any thread, one at a time per ``bench``):
    ``(spec, trace, state, panels)``; ``panels`` for the figures that compare runs, else None."""
    from attnviz.figures.registry import figure_spec
    from attnviz.lessons.claims import scene_selection
    from attnviz.lessons.figure_data import MODEL_FIGURES

    spec = figure_spec(scene.view)
    trace = bench.trace(scene, grad=spec.needs_grad)
    if trace.kind not in spec.kinds:
        raise AttnvizError(f"the {scene.view!r} view does not apply to {trace.kind} models")
    state = scene_selection(scene, trace)
    panels = None
    if spec.name in MODEL_FIGURES:
        from attnviz.gui.views.lesson_views import figure_panels

        panels = figure_panels(spec.name, bench, scene, trace, state)
    if spec.name == "attention-cost":
        # measured here, on the caller's worker thread: the view then draws these points at once (the lesson
        # stage builds it on the GUI thread, which froze for the measurement's seconds); the caption's claim
        # waits for and reads the same points
        from attnviz.runtime.attention_cost import shared_attention_cost, trace_attention_shape

        shared_attention_cost(*trace_attention_shape(trace))
    return spec, trace, state, panels


def make_scene_view(spec, trace, state, panels, style, step=None):
    """The view of a computed scene figure (GUI thread); returns (view, selection)."""
    from attnviz.figures.registry import make_figure, view_class
    from attnviz.selection import Selection

    if panels is None:
        return make_figure(spec.name, trace, state, style, step)
    selection = Selection(state)
    view = view_class(spec)(selection=selection, style=style)
    view.set_trace(trace)
    view.set_panels(panels)
    return view, selection


def build_scene_figure(scene, bench=None, style=None, measure: bool = True, n: int = CAPTION_N):
    """Build the scene's view off-screen; returns (view, selection, caption, claim result or None).

    The caller closes the view (and keeps the selection alive as long as it).
    """
    from attnviz.lessons.claims import Workbench, evaluate_claim, format_caption

    bench = bench or Workbench()
    spec, trace, state, panels = compute_scene_figure(scene, bench)
    result = None
    if measure and scene.claim:
        result = evaluate_claim(scene, bench, trace=trace, n=n)
    caption = format_caption(scene.caption, result) if "{" in scene.caption else scene.caption
    view, selection = make_scene_view(spec, trace, state, panels, style or scene_style(scene), scene.step)
    return view, selection, caption, result


def _close(view) -> None:
    view.close()
    view.deleteLater()


def export_scene(scene, path, opts: ExportOptions | None = None, style=None, bench=None) -> Path:
    """Write the scene's figure (PNG/SVG/PDF by suffix) with its title and measured caption."""
    opts = opts or ExportOptions.preset("16:9")
    view, _selection, caption, _ = build_scene_figure(scene, bench, style)
    try:
        return export_widget(view, path, replace(opts, title=opts.title or scene.title,
                                                 caption=opts.caption or caption, fill=True))
    finally:
        _close(view)


def export_lesson_pdf(lesson, path, opts: ExportOptions | None = None, bench=None, log=None) -> Path:
    """One vector PDF page per scene of ``lesson``, in order."""
    from attnviz.lessons.claims import Workbench

    opts = opts or ExportOptions.preset("16:9")
    bench = bench or Workbench()

    def pages():
        for i, scene in enumerate(lesson.scenes, 1):
            t0 = time.perf_counter()
            view, _selection, caption, _ = build_scene_figure(scene, bench)
            try:
                yield view, replace(opts, title=scene.title, caption=caption, fill=True)
            finally:
                _close(view)
            if log:
                log(f"page {i}/{len(lesson.scenes)}: {scene.title} ({time.perf_counter() - t0:.1f} s)")

    return export_pdf_pages(path, pages())


def export_lesson_pack(lesson, directory, opts: ExportOptions | None = None, fmt: str = "png", bench=None) -> list[Path]:
    """Every scene of ``lesson`` as a figure in ``directory``, with index.md / index.html (title, caption)."""
    from attnviz.io.outputs import PACK_MARKER_TAG  # says what made the page (grants nothing: io.outputs)
    from attnviz.io.staging import staged_files
    from attnviz.lessons.claims import Workbench

    directory = Path(directory)
    opts = opts or ExportOptions.preset("16:9")
    bench = bench or Workbench()
    rows = []
    names = [f"{i:02d}-{scene.view}.{fmt}" for i, scene in enumerate(lesson.scenes, 1)]
    # all or nothing (attnviz.io.staging): every file checked before the first is written, made aside, then
    # moved into place; a scene that fails leaves the folder as it was
    try:
        with staged_files(directory, [*names, "index.md", "index.html"]) as stage:
            for name, scene in zip(names, lesson.scenes):
                view, _selection, caption, _ = build_scene_figure(scene, bench)
                try:
                    export_widget(view, stage(name), replace(opts, title=scene.title, caption=caption, fill=True))
                finally:
                    _close(view)
                rows.append((directory / name, scene.title, caption))
            # "W_O", "√d_k" with real subscripts, as the slides draw them (formula_html escapes the rest)
            md = [f"# {lesson.title}", ""] + [f"{i}. **{formula_html(t)}** — {formula_html(c)} ([{f.name}]({f.name}))"
                                              for i, (f, t, c) in enumerate(rows, 1)]
            body = "\n".join(f"<h2>{i}. {formula_html(t)}</h2><p>{formula_html(c)}</p><img src='{html.escape(f.name)}' "
                             f"width='800' alt='{html.escape(formula_plain(t))}'>" for i, (f, t, c) in enumerate(rows, 1))
            page = (f"<!doctype html><html><head><meta charset='utf-8'>"
                    f"{PACK_MARKER_TAG}<title>{html.escape(lesson.title)}</title></head>"
                    f"<body><h1>{html.escape(lesson.title)}</h1>{body}</body></html>")
            stage("index.md").write_text("\n".join(md) + "\n", encoding="utf-8")
            stage("index.html").write_text(page, encoding="utf-8")
    except OSError as exc:
        raise AttnvizError(f"cannot write the lesson pack to {directory}: {exc.strerror or exc}") from None
    return [f for f, _, _ in rows]
