"""Render a view off-screen into PNG, SVG or PDF — the same drawing code the screen uses.

Attention views draw their figure with ``render_figure(painter, rect, scale)`` (see
attnviz/gui/views/base.py); any other widget is resized and painted with ``QWidget.render``. Either way
it goes into a QImage (PNG), a QSvgGenerator (SVG: text and lines stay vector, heatmaps are embedded
images) or a QPdfWriter (PDF), opened by :mod:`attnviz.figures.targets`. A title and a caption band
can be added around it. Files are written to a temporary name and renamed into place, so a failed export
never leaves or replaces a file with a broken one.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QBuffer, QIODevice, QMarginsF, QPoint, QRectF, QSize, QSizeF
from PySide6.QtGui import QColor, QImage, QPageLayout, QPageSize, QPainter, QPdfWriter, QRegion
from PySide6.QtWidgets import QApplication, QWidget

from attnviz.figures.page_bands import CAPTION_MIN_PX, CAPTION_SIDE, band_height, caption_layout, paint_caption, paint_title  # noqa: F401 - caption_layout, CAPTION_*: the render module's names before the split
from attnviz.figures.targets import open_target as _open_target
from attnviz.figures.targets import screen_dpi
from attnviz.gui.widget_parts import vector_backgrounds
from attnviz.io import write_atomic
from attnviz.io.atomic import friendly_os_error
from attnviz.errors import AttnvizError

__all__ = ["ExportOptions", "SLIDE_PRESETS", "FORMATS", "export_widget", "render_image", "copy_to_clipboard",
           "layout_scale", "render_payload", "payload_steps", "write_payload", "export_format", "fit_widget",
           "restore_widget"]

FORMATS = ("png", "svg", "pdf")
SLIDE_PRESETS = {"16:9": (1920, 1080), "4:3": (1600, 1200), "square": (1200, 1200)}


@dataclass
class ExportOptions:
    """Figure size in pixels (points for SVG/PDF at ``dpi``), and the slide dressing."""

    width: int = 1920
    height: int = 1080
    dpi: int = 150  # PNG: pixels per inch stored in the file; PDF: page size = pixels / dpi inches
    scale: float = 1.0  # PNG supersampling (2.0 doubles the pixels, same layout)
    transparent: bool = False
    title: str = ""
    caption: str = ""
    font_scale: float = 1.0
    fill: bool = False  # grow a figure that leaves its band empty until it uses it (figures.fill; the deck)

    @classmethod
    def preset(cls, name: str, **kw) -> "ExportOptions":
        if name not in SLIDE_PRESETS:
            raise AttnvizError(f"unknown slide preset {name!r}: choose {', '.join(SLIDE_PRESETS)} or a WxH size")
        w, h = SLIDE_PRESETS[name]
        return cls(width=w, height=h, **kw)

    def validate(self) -> None:
        if not (16 <= self.width <= 16384 and 16 <= self.height <= 16384):
            raise AttnvizError(f"figure size {self.width}×{self.height} is out of range (16…16384 pixels)")
        if not (0.25 <= self.scale <= 8):
            raise AttnvizError("PNG scale must be between 0.25 and 8")


# the figure size the views are designed for (a dock on a laptop screen): larger exports scale it up
DESIGN_WIDTH, DESIGN_HEIGHT = 1000.0, 600.0


def layout_scale(width: float, height: float) -> float:
    """How much to enlarge a figure laid out at screen size to fill ``width`` × ``height`` (≥ 1)."""
    return max(1.0, min(width / DESIGN_WIDTH, height / DESIGN_HEIGHT))


def _body(opts: ExportOptions) -> QRectF:
    """Where the figure goes: the page less the title and caption bands."""
    top = band_height(opts.title, opts, 0.07)
    bottom = band_height(opts.caption, opts, 0.05)
    return QRectF(0, top, opts.width, max(16, opts.height - top - bottom))


def _managing_layout(widget: QWidget):
    """``(parent, its layout)`` when that layout sets ``widget``'s geometry (a page in the window's
    tabs), else None. The parent's wrapper is kept with the layout's: PySide6 invalidates a child's
    wrapper (the layout's) when its parent's wrapper is collected ("already deleted")."""
    parent = widget.parentWidget()
    layout = parent.layout() if parent is not None and not widget.isWindow() else None
    if layout is None or not layout.isEnabled() or layout.indexOf(widget) < 0:
        return None
    return parent, layout


def fit_widget(widget: QWidget, opts: ExportOptions) -> QSize | None:
    """Resize a widget without ``render_figure`` to the figure's size now; its previous size, or None
    if it did not change size. Its updates are off until the caller turns them on to paint it
    (``setUpdatesEnabled(True)``); put it back with :func:`restore_widget` once painted.

    The app then lets its layouts settle in an event-loop turn of their own before painting (which
    otherwise resizes the widget and runs the pending events itself, all in one freeze). A widget placed
    by its parent's layout (the Training page in the window's tabs) would be put back at its screen size
    by that layout as soon as its own layout asks for a new geometry: sometimes before it was painted,
    and the figure was then the page at screen size in the slide's top-left corner. That layout is
    switched off until :func:`restore_widget`.
    """
    if hasattr(widget, "render_figure"):
        return None
    size = _body(opts).size().toSize()
    if widget.size() == size:
        return None
    previous = widget.size()
    held = _managing_layout(widget)
    if held is not None:
        held[1].setEnabled(False)
        _held_layouts[widget] = held
    # not repainted on screen at slide size (most of the cost, and nobody sees it): only the export
    # paints it, once updates are back on (the caller's job, before painting)
    widget.setUpdatesEnabled(False)
    widget.resize(size)
    return previous


_held_layouts: dict = {}  # widget → (its parent, the parent's layout switched off by fit_widget)


def restore_widget(widget: QWidget, previous: QSize | None) -> None:
    """Undo :func:`fit_widget`: ``widget`` back at its ``previous`` size, its parent's layout back on."""
    held = _held_layouts.pop(widget, None)
    if previous is not None:
        widget.resize(previous)
    if held is not None:
        held[1].setEnabled(True)


def _render_into(painter: QPainter, widget: QWidget, body: QRectF, opts: ExportOptions) -> None:
    """An attention view's figure in ``body``: at the page's layout scale, or grown to fill it (``opts.fill``)."""
    scale = layout_scale(body.width(), body.height())
    if not opts.fill:
        widget.render_figure(painter, body, scale)
        return
    from attnviz.figures.fill import filled_placement

    scale, offset = filled_placement(widget, body, scale)
    painter.save()
    painter.setClipRect(body)
    painter.fillRect(body, QColor(widget.style.background))  # a shifted figure leaves no strip of another colour
    painter.translate(offset)
    widget.render_figure(painter, body, scale)
    painter.restore()


def _paint(painter: QPainter, widget: QWidget, opts: ExportOptions) -> None:
    """Draw title, the widget and caption into a painter whose logical size is width × height."""
    font = paint_title(painter, opts)
    top = band_height(opts.title, opts, 0.07)
    body = _body(opts)
    painter.save()
    # PDF: heatmaps are small images drawn large; Qt encodes them as JPEG unless told otherwise, and a
    # JPEG of a 10 × 10 map tints every cell with its neighbours' colours (masked grey turned pastel)
    painter.setRenderHint(QPainter.RenderHint.LosslessImageRendering, True)
    if hasattr(widget, "render_figure"):
        # attention views draw just the figure (no controls or status line), re-flowed to the size;
        # laid out as on a screen and scaled up, so a slide's labels are as large relative to the
        # figure as in the app (at 1920×1080 and scale 1 they were a fiftieth of the height)
        _render_into(painter, widget, body, opts)
    else:
        previous = fit_widget(widget, opts)
        if previous is not None:
            QApplication.processEvents()  # let layouts settle at the new size
            widget.setUpdatesEnabled(True)
        painter.translate(0, top)
        # QWidget.render, not QGraphicsView.render (pyqtgraph views override it with another signature)
        with vector_backgrounds(widget, painter):  # as part_steps paints it (the app's export)
            QWidget.render(widget, painter, QPoint(0, 0), QRegion(), QWidget.RenderFlag.DrawChildren)
        restore_widget(widget, previous)  # a page of the window: back to the size it has on screen
    painter.restore()
    paint_caption(painter, opts, font)


def payload_steps(widget: QWidget, fmt: str, opts: ExportOptions):
    """:func:`render_payload` as a generator that yields between parts of a plain widget (a page of
    the window, already at the figure's size: :func:`fit_widget`), returning the payload.

    Each ``next`` paints for a few tens of milliseconds (:func:`~attnviz.gui.widget_parts.part_steps`)
    with the painter left open in between, so the app's event loop runs between them. A view with
    ``render_figure`` is painted in one go (it is one figure, already quick). GUI thread only; the
    same pixels as :func:`render_payload`.
    """
    from attnviz.gui.widget_parts import part_steps

    opts.validate()
    if hasattr(widget, "render_figure"):
        return render_payload(widget, fmt, opts)
    painter, finish = _open_target(fmt, opts)
    try:
        font = paint_title(painter, opts)
        painter.save()
        painter.translate(0, band_height(opts.title, opts, 0.07))
        yield from part_steps(painter, widget)
        painter.restore()
        paint_caption(painter, opts, font)
    finally:
        payload = finish()  # the painter is ended even when the export is cancelled between parts
    return payload


def _painted(fmt: str, widget: QWidget, opts: ExportOptions):
    painter, finish = _open_target(fmt, opts)
    try:
        _paint(painter, widget, opts)
    finally:
        payload = finish()
    return payload


def render_image(widget: QWidget, opts: ExportOptions) -> QImage:
    """The figure as a QImage (what PNG export and Copy to clipboard produce)."""
    opts.validate()
    return _painted("png", widget, opts)


def render_payload(widget: QWidget, fmt: str, opts: ExportOptions):
    """Paint ``widget`` for a ``fmt`` file, in memory: a QImage for PNG, the file's bytes for SVG and PDF.

    GUI thread only (it paints widgets and scenes). Encoding the PNG and writing the file are left to
    :func:`write_payload`, which may run on a worker: that is where most of an export's time goes.
    """
    opts.validate()
    return _painted(fmt, widget, opts)


def _write_payload(tmp: str, payload) -> None:
    if isinstance(payload, QImage):
        # encoded in memory, written by Python: a full disk is an OSError (ENOSPC), not "libpng: Write Error"
        buf = QBuffer()
        buf.open(QIODevice.OpenModeFlag.WriteOnly)
        if not payload.save(buf, "PNG"):
            raise AttnvizError("could not encode the PNG")
        payload = bytes(buf.data())
    Path(tmp).write_bytes(payload)


def write_payload(path, payload) -> Path:
    """Encode and write what :func:`render_payload` made to ``path`` atomically (any thread: no widgets)."""
    path = Path(path)
    try:
        write_atomic(path, lambda tmp: _write_payload(tmp, payload))
    except OSError as exc:
        raise AttnvizError(f"cannot write {path}: {friendly_os_error(exc)}") from None
    return path


def export_format(path, opts: ExportOptions | None = None) -> str:
    """The format of ``path`` (png, svg or pdf) once the target and ``opts`` are checked (AttnvizError)."""
    if opts is not None:
        opts.validate()
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise AttnvizError(f"cannot export to {path.name}: use a .png, .svg or .pdf file name")
    if not path.parent.exists():
        raise AttnvizError(f"cannot write {path}: directory {path.parent} does not exist")
    return fmt


def export_pdf_pages(path, pages) -> Path:
    """One vector PDF page per ``(widget, opts)`` that ``pages`` yields (a lesson deck), written atomically.

    ``pages`` may be a generator: each widget is painted before the next is asked for, so it can be
    closed in between. Every page takes the size of its own options.
    """
    path = Path(path)
    if not path.parent.exists():
        raise AttnvizError(f"cannot write {path}: directory {path.parent} does not exist")

    def write(tmp: str) -> None:
        writer = QPdfWriter(tmp)
        dpi = round(screen_dpi())
        writer.setResolution(dpi)
        writer.setCreator("attnviz")
        painter = QPainter()
        try:
            for i, (widget, opts) in enumerate(pages):
                opts.validate()
                size_pt = QSizeF(opts.width * 72.0 / opts.dpi, opts.height * 72.0 / opts.dpi)
                writer.setPageLayout(QPageLayout(QPageSize(size_pt, QPageSize.Point), QPageLayout.Portrait,
                                                 QMarginsF(0, 0, 0, 0)))
                if i == 0:
                    writer.setTitle(opts.title or "attnviz lesson")
                    if not painter.begin(writer):
                        raise AttnvizError("could not start the PDF writer")
                elif not writer.newPage():
                    raise AttnvizError("could not start a new PDF page")
                painter.save()
                painter.scale(dpi / opts.dpi, dpi / opts.dpi)
                _paint(painter, widget, opts)
                painter.restore()
        finally:
            if painter.isActive():
                painter.end()

    try:
        write_atomic(path, write)
    except OSError as exc:
        raise AttnvizError(f"cannot write {path}: {friendly_os_error(exc)}") from None
    return path


def export_widget(widget: QWidget, path, opts: ExportOptions | None = None) -> Path:
    """Write ``widget`` as a figure; the format comes from the file suffix (.png, .svg, .pdf).

    Synchronous (the command line, lecture packs); the app paints with :func:`render_payload` and
    leaves :func:`write_payload` to a worker, so the same pixels and bytes reach the file either way.
    """
    opts = opts or ExportOptions()
    fmt = export_format(path, opts)
    return write_payload(path, render_payload(widget, fmt, opts))


def copy_to_clipboard(widget: QWidget, opts: ExportOptions | None = None) -> QImage:
    img = render_image(widget, opts or ExportOptions())
    QApplication.clipboard().setImage(img)
    return img
