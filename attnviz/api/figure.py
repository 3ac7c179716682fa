"""A figure for notebooks: one of ``attnviz export``'s views, drawn by the same renderer into the same bytes.

``Figure._repr_png_`` (or ``_repr_svg_`` with ``display="svg"``: one image type per figure) writes the
figure with :func:`attnviz.export.batch.export_one` (the function ``attnviz export --view`` calls) into a
temporary file and hands over its bytes, so what Jupyter shows is the exported file, byte for byte: a
figure of ``size=(800, 450)`` is ``--size 800x450 --scale 2``, shown 800 px wide. Qt starts on its
off-screen platform when a figure is first drawn (not at import).
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from attnviz.errors import AttnvizError

__all__ = ["Figure", "FigureOptions", "figure_needs_grad", "VIEWS"]


def _figures():
    from attnviz.figures.registry import FIGURES

    return FIGURES


def figure_needs_grad(view: str) -> bool:
    spec = _figures().get(view)
    return bool(spec and spec.needs_grad)


class _Views:  # the view names, read when asked (the registry lives in the GUI package)
    def __iter__(self):
        return iter(_figures())

    def __repr__(self) -> str:
        return repr(tuple(_figures()))


VIEWS = _Views()


@dataclass
class FigureOptions:
    """``attnviz export``'s options, with its defaults (``--size``/``--preset``, ``--dpi`` …)."""

    size: tuple[int, int] | None = None
    preset: str = "16:9"
    dpi: int = 150
    scale: float = 1.0
    transparent: bool = False
    title: str = ""
    caption: str = ""
    font_scale: float = 1.0
    theme: str = "light"
    colormap: str = "viridis"
    colour_bar: bool = True
    color_scale: str = "auto"
    # how a notebook shows it (not export options): one image type per figure, "png" or "svg"; a PNG has
    # pixel_ratio device pixels per CSS pixel (2: sharp on HiDPI screens, downscaled cleanly on others)
    display: str = "png"
    pixel_ratio: float = 2.0

    def export_options(self):
        from attnviz.figures.render import ExportOptions

        opts = ExportOptions(*self.size) if self.size else ExportOptions.preset(self.preset)
        opts.dpi, opts.scale, opts.transparent = self.dpi, self.scale, self.transparent
        opts.title, opts.caption, opts.font_scale = self.title, self.caption, self.font_scale
        opts.validate()
        return opts

    def style(self):
        from attnviz.figures.registry import export_style

        style = export_style(self.theme, self.colormap, self.colour_bar, self.font_scale)
        return style.with_(scale=self.color_scale)


def _options(base: FigureOptions | None, changes: dict) -> FigureOptions:
    base = base or FigureOptions()
    if "colour_scale" in changes:  # both spellings, as the CLI's --color-scale / the app's colour
        changes["color_scale"] = changes.pop("colour_scale")
    if "color_bar" in changes:
        changes["colour_bar"] = changes.pop("color_bar")
    unknown = set(changes) - set(FigureOptions.__dataclass_fields__)
    if unknown:
        raise AttnvizError(f"unknown figure option {', '.join(sorted(unknown))}: choose from "
                           f"{', '.join(FigureOptions.__dataclass_fields__)}")
    return replace(base, **changes)


class Figure:
    """One view of a trace at a selection; shows itself in Jupyter; :meth:`save` writes PNG/SVG/PDF."""

    def __init__(self, trace, view: str, layer: int = 0, head: int = 0, query: int | None = None,
                 part: str = "self", step=None, **options):
        from attnviz.figures.registry import figure_spec
        from attnviz.selection import SelectionState

        spec = figure_spec(view)  # an unknown view: one line naming the known ones
        if trace.kind not in spec.kinds:
            raise AttnvizError(f"the {view!r} view does not apply to {trace.kind} models")
        trace.check_selection(part, layer, head, query)  # e.g. cross-attention of an encoder: one line
        if step is not None and view != "steps":
            raise AttnvizError(f"step applies to the 'steps' view, not {view!r}")
        self.trace, self.view, self.step = trace, view, step
        self.state = SelectionState(layer=layer, head=head, query=query, part=part)
        self.options = _options(None, dict(options))
        self.options.export_options()  # sizes and scales checked now, not when Jupyter draws it
        if self.options.display not in ("png", "svg"):
            raise AttnvizError(f"display shows a figure as png or svg, not {self.options.display!r}")
        if not 1 <= self.options.pixel_ratio <= 4:
            raise AttnvizError(f"pixel_ratio must be between 1 and 4, not {self.options.pixel_ratio}")
        self._cache: dict[tuple, bytes] = {}

    sources: dict = {}  # what the trace was made from (set by Traced.figure): never written over

    def save(self, path, force: bool = False, **options) -> Path:
        """Write the figure; the format is the suffix (.png, .svg, .pdf); ``options`` override this
        figure's export options for this file (``size=(1600, 1200)``, ``dpi=300``, ``transparent=True`` …).
        Written by the CLI's output rules: never over a file attnviz did not write or into a model folder
        unless ``force=True``, never over the model's own files."""
        from attnviz.export.batch import export_one
        from attnviz.export.headless import ensure_app

        opts = _options(self.options, dict(options))
        path = Path(path)
        if path.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise AttnvizError(f"cannot save a figure as {path.name}: use .png, .svg or .pdf "
                               "(the interactive page is Traced.html(...).save('figure.html'))")
        from attnviz.io.outputs import api_output

        with api_output(path, force, **self.sources):
            app = ensure_app()  # noqa: F841 (Qt alive while the view paints)
            return export_one(self.view, self.trace, self.state, path, opts.export_options(), opts.style(),
                              self.step)

    def to_bytes(self, fmt: str = "png") -> bytes:
        """The bytes :meth:`save` writes for ``fmt`` (png, svg, pdf)."""
        return self._bytes(fmt)

    def _bytes(self, fmt: str, **options) -> bytes:
        key = (fmt, tuple(sorted(options.items())))
        if key not in self._cache:
            with tempfile.TemporaryDirectory(prefix="attnviz-") as tmp:
                self._cache[key] = self.save(Path(tmp) / f"figure.{fmt}", **options).read_bytes()
        return self._cache[key]

    def display_png(self) -> tuple[bytes, dict]:
        """(PNG bytes, {"width": CSS px}) as a notebook shows it.

        With ``size=(w, h)`` the figure is laid out at w×h and drawn at ``pixel_ratio``× the pixels
        (``attnviz export --size WxH --scale 2``), shown w px wide; without, a 1920×1080 slide is
        shown 1920 / ``pixel_ratio`` px wide (it fits a notebook column).
        """
        opts = self.options
        if opts.size:
            png = self._bytes("png", scale=opts.scale * opts.pixel_ratio)
            return png, {"width": int(opts.size[0])}
        return self._bytes("png"), {"width": round(opts.export_options().width / opts.pixel_ratio)}

    def _repr_png_(self):
        # one image type per figure: Jupyter stores every type a _repr_ returns, and a PNG beside an SVG
        # doubled a notebook's size for nothing
        return self.display_png() if self.options.display == "png" else None

    def _repr_svg_(self) -> str | None:
        return self.to_bytes("svg").decode("utf-8") if self.options.display == "svg" else None

    def __repr__(self) -> str:
        s = self.state
        where = f"layer {s.layer}, head {s.head}" + (f", query {s.query}" if s.query is not None else "")
        return f"<attnviz.Figure {self.view!r} {where}, {s.part}>"
