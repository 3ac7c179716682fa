"""Export… and Copy to clipboard from the app: the dialog and the actions behind it.

The dialog gathers ExportOptions and a style (slide theme, colour map, colour bar, font scale); the
figure is re-drawn off-screen by the same view class at the chosen size (``make_figure``), so the file
looks like the screen whatever size the window has. Views that are not in the figure registry (training
curves, sandbox) are painted as they are. ``figure_steps`` builds the figure a step at a time for the
app's export (:class:`attnviz.gui.figure_export.FigureExport`); ``export_current_view`` and
``copy_current_view`` run the same steps at once (scripts, tests).
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import (QCheckBox, QComboBox, QDialog, QDialogButtonBox, QDoubleSpinBox, QFileDialog,
                               QFormLayout, QHBoxLayout, QLineEdit, QPushButton, QSpinBox, QWidget)

from attnviz.figures.render import SLIDE_PRESETS, ExportOptions, copy_to_clipboard, export_widget

__all__ = ["ExportDialog", "export_current_view", "copy_current_view", "figure_steps", "release_figure"]

_CMAPS = ("viridis", "cividis", "magma", "inferno", "plasma")


class ExportDialog(QDialog):
    """File, format, size preset or custom size, DPI, PNG scale/transparency, theme, colour map, title."""

    def __init__(self, suggested_name: str = "figure.png", title: str = "", parent: QWidget | None = None,
                 cmap: str = "viridis"):
        super().__init__(parent)
        self.setWindowTitle("Export figure")
        form = QFormLayout(self)
        self.path = QLineEdit(str(Path.home() / suggested_name))
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        row = QHBoxLayout()
        row.addWidget(self.path, 1)
        row.addWidget(browse)
        form.addRow("File (.png .svg .pdf)", row)
        self.preset = QComboBox()
        self.preset.addItems([*SLIDE_PRESETS, "custom"])
        self.preset.currentTextChanged.connect(self._preset_changed)
        form.addRow("Slide size", self.preset)
        self.width, self.height = QSpinBox(), QSpinBox()
        for box in (self.width, self.height):
            box.setRange(16, 16384)
        size_row = QHBoxLayout()
        size_row.addWidget(self.width)
        size_row.addWidget(self.height)
        form.addRow("Width × height (px)", size_row)
        self.dpi = QSpinBox()
        self.dpi.setRange(36, 1200)
        self.dpi.setValue(150)
        form.addRow("DPI", self.dpi)
        self.scale = QDoubleSpinBox()
        self.scale.setRange(0.25, 8.0)
        self.scale.setValue(1.0)
        self.scale.setSingleStep(0.5)
        form.addRow("PNG supersampling", self.scale)
        self.transparent = QCheckBox("transparent background (PNG)")
        form.addRow("", self.transparent)
        self.theme = QComboBox()
        self.theme.addItems(["light", "presentation", "dark"])
        self.theme.setToolTip("light is best for slides, whatever the app's theme")
        form.addRow("Theme", self.theme)
        self.cmap = QComboBox()
        self.cmap.addItems(_CMAPS)
        self.cmap.setCurrentText(cmap if cmap in _CMAPS else "viridis")
        form.addRow("Colour map", self.cmap)
        self.colour_bar = QCheckBox("colour bar")
        self.colour_bar.setChecked(True)
        form.addRow("", self.colour_bar)
        self.highlight = QCheckBox("box the selected row / column")
        self.highlight.setChecked(True)  # the figure as on screen, unless the lecturer asks for a clean one
        self.highlight.setToolTip("untick for a figure without the clicked query row and key column highlighted")
        form.addRow("", self.highlight)
        self.font_scale = QDoubleSpinBox()
        self.font_scale.setRange(0.5, 4.0)
        self.font_scale.setValue(1.0)
        self.font_scale.setSingleStep(0.1)
        form.addRow("Font scale", self.font_scale)
        self.title_edit = QLineEdit(title)
        form.addRow("Title", self.title_edit)
        self.caption = QLineEdit()
        form.addRow("Caption", self.caption)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)
        self._preset_changed(self.preset.currentText())

    def _browse(self) -> None:
        name, _ = QFileDialog.getSaveFileName(self, "Export figure", self.path.text(),
                                              "PNG image (*.png);;SVG vector (*.svg);;PDF document (*.pdf)")
        if name:
            self.path.setText(name)

    def _preset_changed(self, name: str) -> None:
        custom = name == "custom"
        self.width.setEnabled(custom)
        self.height.setEnabled(custom)
        if not custom:
            w, h = SLIDE_PRESETS[name]
            self.width.setValue(w)
            self.height.setValue(h)

    def options(self) -> ExportOptions:
        opts = ExportOptions(width=self.width.value(), height=self.height.value(), dpi=self.dpi.value(),
                             scale=self.scale.value(), transparent=self.transparent.isChecked(),
                             title=self.title_edit.text(), caption=self.caption.text())
        opts.validate()
        return opts

    def style(self):
        from attnviz.figures.registry import export_style

        return export_style(self.theme.currentText(), self.cmap.currentText(), self.colour_bar.isChecked(),
                            self.font_scale.value())


def figure_steps(view, trace, state, style):
    """Re-create a registered view at export size one step at a time (a generator, see
    ``make_figure_steps``); returns (figure, selection). Other widgets are exported as they are."""
    from attnviz.figures.registry import FIGURES, make_figure_steps

    name = next((n for n, spec in FIGURES.items() if type(view).__name__ == spec.cls), None)
    if name is None or trace is None:
        return view, None
    scale_box = getattr(view, "scale_box", None)  # the colour scale the user picked in the view
    if scale_box is not None and style is not None:
        style = style.with_(scale=scale_box.mode)
    fig, selection = yield from make_figure_steps(name, trace, state, style)
    step = getattr(view, "step_name", None)
    try:
        if step is not None and hasattr(fig, "set_step") and step in fig.step_list:
            fig.set_step(fig.step_list.index(step))
    except BaseException:
        release_figure(fig, view)
        raise
    return fig, selection


def release_figure(fig, view) -> None:
    """Close a figure made for export (never the on-screen ``view`` itself), dropping its work on the lane (an
    export cancelled while a long input's heads were computed for it: the lane stops between blocks)."""
    if fig is not view:
        if hasattr(fig, "cancel_background"):
            fig.cancel_background()
        fig.close()
        fig.deleteLater()


def _figure_for(view, trace, state, style):
    """:func:`figure_steps` all at once."""
    steps = figure_steps(view, trace, state, style)
    while True:
        try:
            next(steps)
        except StopIteration as done:
            return done.value


def export_current_view(view, trace, state, path, opts: ExportOptions, style) -> Path:
    """Write ``view`` (re-drawn in ``style`` at ``opts`` size) to ``path``, synchronously (the app runs
    the same steps without freezing: :class:`attnviz.gui.figure_export.FigureExport`)."""
    fig, selection = _figure_for(view, trace, state, style)
    try:
        return export_widget(fig, path, opts)
    finally:
        release_figure(fig, view)
        del selection


def copy_current_view(view, trace, state, opts: ExportOptions | None = None, style=None):
    """Put the figure on the clipboard as an image (1920×1080 light slide unless told otherwise)."""
    from attnviz.figures.registry import export_style

    fig, selection = _figure_for(view, trace, state, style or export_style())
    try:
        return copy_to_clipboard(fig, opts or ExportOptions())
    finally:
        release_figure(fig, view)
        del selection
