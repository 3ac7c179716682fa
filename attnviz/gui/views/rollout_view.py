"""RolloutView: raw attention vs attention rollout vs gradient rollout, side by side.

Images: the plain input, then each map overlaid on it (patch grid from ``trace.grid``, opacity
slider, 50 % so the digit or shape stays visible under the map), two by two, in a row, or the input large beside
the three maps, whichever fills the room (rollout_arrangement.py). Each map can have its own colour bar; by
default all share one range and one bar, so the brightest colour means the same share in every map (the maps are
compared). "each map its own maximum" shows faint maps' patterns, and every bar says so.
Text: one highlighted token strip per map for the selected query (or CLS / the last token), on one shared scale by
default, over as many positions around the query as fit (rollout_strips.py; the title names them).
The colour-scale chooser switches between per-map, shared and fixed 0–1; the bars say which.
The controls recompute live, debounced; a long input's rollout row is streamed (analysis/rollout_row.py).
"""

from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt, QTimer
from PySide6.QtWidgets import QComboBox, QLabel, QSizePolicy, QSlider, QSpinBox

from attnviz.analysis.share_versus import rollout_verdict
from attnviz.gui.style import colour_lut
from attnviz.gui.views.base import BaseView, call_catching  # exceptions returned, as the lane does
from attnviz.gui.views.colour_scale import ScaleChooser, scale_top
from attnviz.gui.views.heatmap_data import quantize
from attnviz.gui.views.rollout_pointing import SHORT, RolloutPointing
from attnviz.gui.views.rollout_panels import (PanelGrid, fit_pictures, panel_cell, patch_caption, predicted_label,
                                              trained_line, two_lines)
from attnviz.gui.views.rollout_strips import RolloutStrips
from attnviz.analysis.rollout_maps import RolloutSettings, compute_rollout_maps, default_query, rollout_question
from attnviz.analysis.rollout_row import LONG_ROLLOUT_T
from attnviz.analysis.rollout_window import masked_after
from attnviz.analysis.trace_parts import resolve
from attnviz.gui.widgets.colour_bar import ColourBarItem
from attnviz.gui.widgets.flow_row import FlowRow
from attnviz.gui.widgets.heatmap import CellImageItem
from attnviz.gui.widgets.legible import is_exporting
from attnviz.gui.widgets.title import make_title, set_title
from attnviz.text.token_display import display_token

__all__ = ["RolloutView"]

NAMES = ("raw", "rollout", "grad")
DEBOUNCE_MS = 80


def _slider(lo: int, hi: int, value: int) -> QSlider:
    s = QSlider(Qt.Horizontal)
    s.setRange(lo, hi)
    s.setValue(value)
    s.setFixedWidth(110)
    return s


# the maps over the picture: at 75 % the overlay covered the digit or shape the map explains
OVERLAY_OPACITY = 50


class RolloutView(RolloutPointing, BaseView):
    title = "Rollout"

    def _build(self) -> None:
        self.title_item = make_title()
        self.bar = ColourBarItem(self.style, "share of attention")  # the text strips' bar
        self.figure.addItem(self.title_item, row=0, col=0, colspan=2)
        self.figure.layout.setRowStretchFactor(1, 1)  # the maps (or strips) take the height
        self._build_image_panels()
        self._build_text_strips()
        self._body = None
        self.maps = self.res = None
        self._build_controls()
        self._timer = QTimer(self, singleShot=True, interval=DEBOUNCE_MS)
        self._timer.timeout.connect(self.recompute)
        self._maps_key = None

    def _build_image_panels(self) -> None:
        """The plain input, raw attention, rollout, gradient rollout (2×2 or a row); each map with a bar."""
        self.image_body = PanelGrid()
        self.panels, self.bars = {}, {}
        for name in ("input",) + NAMES:
            # a bound method, not a lambda holding self: Qt then drops the connection with the view
            cell, label, vb, picture = panel_cell(self._fit_image)
            if name == "input":
                self.input_panel = (label, vb, picture)
                # an invisible bar as wide as the maps' keeps the four images in two aligned columns
                self.spacer_bar = ColourBarItem(self.style, "share of attention")
                self.spacer_bar.setVisible(False)
                cell.addItem(self.spacer_bar, row=1, col=1)
            else:
                heat = CellImageItem()
                heat.on_hover = lambda r, c, n=name: self._hover_pixel(n, r, c)
                heat.on_click = lambda r, c: self._click_pixel(r, c)
                vb.addItem(heat)
                bar = ColourBarItem(self.style, "share of attention")
                cell.addItem(bar, row=1, col=1)
                self.panels[name] = (label, vb, picture, heat)
                self.bars[name] = bar
            self.image_body.add_cell(cell)

    def _build_text_strips(self) -> None:
        self.strip_set = RolloutStrips(self.style, SHORT, self._hover_token, self._click_token)
        self.text_body, self.strips = self.strip_set.body, self.strip_set.strips
        # the strips show as many positions as fit: measured again whenever the figure's size changes
        self._fit_timer = QTimer(self, singleShot=True, interval=0)
        self._fit_timer.timeout.connect(lambda: self._fit_strips(resized=True))
        self._room, self._fitted = None, None
        self.figure.geometryChanged.connect(self._fit_timer.start)
        # the image panels' arrangement follows the canvas too (an export arranges them in _after_relayout)
        self._arrange_timer = QTimer(self, singleShot=True, interval=0)
        self._arrange_timer.timeout.connect(self._arrange_on_screen)
        self._arranged = None  # the (size, scale mode) the panels were arranged for
        self.figure.geometryChanged.connect(self._arrange_timer.start)

    def _build_controls(self) -> None:
        c = self.controls
        self.fusion = QComboBox()
        self.fusion.addItems(["mean", "max", "min"])
        self.discard = _slider(0, 95, 0)
        self.residual = _slider(0, 100, 50)
        self.start_layer = QSpinBox()
        self.opacity = _slider(0, 100, OVERLAY_OPACITY)
        self.scale_box = ScaleChooser("per-map", "one scale for all three maps")
        self.scale_box.follow_style(self.style.scale)
        self.scale_box.changed.connect(lambda _: self.recompute())
        self.values_label = QLabel()
        row = FlowRow()  # wraps in a narrow dock instead of forcing it ~700 px wide
        for text, w in (("heads:", self.fusion), ("discard", self.discard), ("residual", self.residual),
                        ("start layer", self.start_layer), ("overlay", self.opacity), ("colours:", self.scale_box)):
            row.add_labelled(text, w)
        row.add(self.values_label)
        c.addWidget(row, 1)
        self.fusion.currentIndexChanged.connect(self.schedule)
        self.discard.valueChanged.connect(self.schedule)
        self.residual.valueChanged.connect(self.schedule)
        self.start_layer.valueChanged.connect(self.schedule)
        self.opacity.valueChanged.connect(self._apply_opacity)

    # -- settings --------------------------------------------------------------------------------
    @property
    def settings(self) -> RolloutSettings:
        return RolloutSettings(fusion=self.fusion.currentText(), residual=self.residual.value() / 100,
                               start_layer=self.start_layer.value(), discard=self.discard.value() / 100)

    def schedule(self, *args) -> None:
        """Recompute after the controls have been still for DEBOUNCE_MS."""
        s = self.settings
        self.values_label.setText(f"discard {s.discard:.2f} · residual {s.residual:.2f}")
        self._timer.start()

    # -- data flow -------------------------------------------------------------------------------
    def _trace_changed(self) -> None:
        if self.trace is None:
            self.maps = None
            set_title(self.title_item, self.empty_text, self.style)
            return
        self.res = resolve(self.trace, self.state)
        n = self.trace.layers_in(self.res.part)
        self.start_layer.blockSignals(True)
        self.start_layer.setRange(0, n - 1)
        self.start_layer.blockSignals(False)
        image = self.trace.grid is not None and "image" in self.trace and self.res.part == "self"
        body = self.image_body if image else self.text_body
        if body is not self._body:
            if self._body is not None:
                self.figure.removeItem(self._body)
                if self._body is self.text_body:
                    self.figure.removeItem(self.bar)
            self.figure.addItem(body, row=1, col=0)
            if body is self.text_body:  # images carry a bar per map
                self.figure.addItem(self.bar, row=1, col=1)
                self.figure.layout.setAlignment(self.bar, Qt.AlignmentFlag.AlignVCenter)  # beside the strips
                self._size_text_bar()
            self._body = body
            # one scale for the maps side by side (images and text): a map on its own maximum puts its
            # small shares in the top colour next to a map whose shares are several times larger
            self.scale_box.default = "shared"
            self.scale_box.follow_style(self.style.scale)
        self.opacity.setEnabled(image)
        if image:
            self._set_picture()
        self.recompute()

    def _selection_changed(self, state, changed) -> None:
        if self.trace is None:
            return
        old = self.res
        self.res = resolve(self.trace, state)
        if old is None or self.res.part != old.part:
            self._trace_changed()
        elif changed & {"query"} and self._body is self.text_body:
            self.recompute()

    def recompute(self) -> None:
        """Compute the three maps for the current settings (unless only the colours changed) and draw them.
        A long input's rollout row streams over every layer's rows (minutes at 8,192 tokens × 30 layers): on the
        views' lane, the title saying so; an export finishes it first (``ensure_current``)."""
        self._timer.stop()
        if self.trace is None:
            return
        trace, settings, query = self.trace, self.settings, self.res.query
        part = "self" if self.res.part == "cross" else self.res.part
        key = (trace, settings, query, part)
        if self.maps is not None and self._maps_key == key:
            return self._draw(part)
        work = lambda: compute_rollout_maps(trace, settings, query, part)  # noqa: E731
        tk = trace.probs_shape(0, part)[-1]
        if tk <= LONG_ROLLOUT_T or trace.grid is not None:
            return self._arrived(key, call_catching(work))
        q = default_query(trace, part) if query is None else int(query)
        set_title(self.title_item, f"computing the rollout row of {display_token(trace.query_tokens(part)[q])} [{q}]: "
                  f"every layer's rows, {trace.layers_in(part)} layers × {tk:,} keys, streamed in blocks …", self.style)
        self.run_in_background(work, lambda result: self._arrived(key, result))

    def _arrived(self, key, result) -> None:
        if isinstance(result, Exception):  # a one-line AttnvizError (a discard on a long input …)
            self.maps = None
            return set_title(self.title_item, f"rollout unavailable: {result}", self.style)
        self.maps, self._maps_key = result, key
        self._draw(key[3])

    def _draw(self, part: str) -> None:
        m = self.maps
        mode = self.scale_box.mode
        self.tops = {name: scale_top(mode, float(v.max()) if v is not None and v.size else 1.0, m.vmax)
                     for name, v in m.maps.items()}
        how = {"per-map": "each map on its own colour scale", "shared": "one colour scale for all three maps",
               "fixed": "colour scale fixed at 0–1"}[mode] + " · colour = share of attention"
        verdict = rollout_verdict(self.trace.description.metrics or {}) if m.image_mode else None
        # the strips' row says only "gradient rollout": gradients of what (an image's title says it in trained_line)
        grad = f"{m.notes['grad']}: gradients of {m.grad_of}" if not m.image_mode and m.grad_of else None
        question, left_out = rollout_question(self.trace, part, m.query, m.image_mode)
        trained = trained_line(self.trace) if m.image_mode else None
        self._title = (question, [trained, left_out, how, verdict, grad])
        if self._body is self.image_body:
            self._draw_images(mode)
            self._set_title()
        else:
            self._draw_strips(mode, part)

    def _set_title(self) -> None:
        """The question, then its smaller lines: the colour scale, a verdict, the strips' window (if any)."""
        question, lines = self._title
        if self._body is self.text_body:
            lines = lines + [self.strip_set.caption()]
        # the lines under the question at the base size: 0.95 drew them at 11.4 px, under what a back row reads
        small = f"<span style='font-size: {self.style.font_pt(1.0):.1f}pt'>"
        set_title(self.title_item, question + "".join(f"<br>{small}{line}</span>" for line in lines if line),
                  self.style)

    def _set_picture(self) -> None:
        img = np.asarray(self.trace["image"], dtype=np.float32)  # (S, S, C) in [0, 1]
        img = np.repeat(img, 3, axis=2) if img.shape[2] == 1 else img
        rgb = (np.clip(img, 0, 1) * 255).round().astype(np.uint8)
        self._image_size = rgb.shape[:2]
        self.image_body.set_image_size(self._image_size)
        self._caption_input()
        for _, vb, picture in [self.input_panel] + [p[:3] for p in self.panels.values()]:
            picture.setImage(rgb, autoLevels=False, levels=(0, 255))
            picture.setRect(QRectF(0, 0, rgb.shape[1], rgb.shape[0]))
        self._fit_image()

    def _caption_input(self) -> None:
        """The input's caption at the maps' captions' size in the current style (0.9 drew 10.8 px docked)."""
        set_title(self.input_panel[0], f"input: {patch_caption(self.trace, self._image_size)}", self.style, 1.0)

    def _fit_image(self, _vb: pg.ViewBox | None = None) -> None:
        size, maps = getattr(self, "_image_size", None), [p[1] for p in self.panels.values()]
        if self.image_body.arrangement == "beside":  # the input drawn larger than the maps beside it
            fit_pictures([self.input_panel[1]], size)
            fit_pictures(maps, size)
        else:
            fit_pictures([self.input_panel[1]] + maps, size)

    def _draw_images(self, mode: str) -> None:
        gh, gw = self.trace.grid
        S = self._image_size
        lut = colour_lut(self.style)
        self._caption_input()  # each redraw: set once per picture it kept its docked size in F5
        for name, (label, vb, picture, heat) in self.panels.items():
            values = self.maps.maps[name]
            note = self.maps.notes[name]
            said = predicted_label(self.trace) if name == "grad" and self.maps.grad_of else None
            caption = two_lines(note) + (f" · × gradients of {said}'s score" if said else "")  # of what
            set_title(label, caption if values is not None else "gradient rollout<br>no gradients captured",
                      self.style, 1.0)
            bar = self.bars[name]
            bar.set_levels(0.0, self.tops[name])
            # short: the bar is only as tall as its map (the title says "share of attention"); on one scale
            # the three bars were identical: one is drawn, beside a map at the figure's right edge (the last, or
            # rollout when the input stands beside the maps; beside the first, it stood between two maps in a slide's
            # row), and says it serves all three
            bar.set_label("share · " + {"per-map": "own scale", "shared": "all three maps",
                                        "fixed": "fixed 0–1, all three"}[mode])
            # a bar not drawn still takes its width (and the input's invisible one the same), so the four
            # pictures stay in two aligned columns: a narrower label had shifted a panel ~20 px
            bar.setVisible(mode == "per-map" or name == self.image_body.one_bar())
            if name == NAMES[-1]:
                self.spacer_bar.set_levels(0.0, self.tops[name])
                self.spacer_bar.set_label(bar.label)
            if values is None:
                heat.clear()
                heat.shape_rc = (0, 0)
                continue
            grid = values.reshape(gh, gw)  # patches in row-major order
            heat.setImage(quantize(grid, self.tops[name]), autoLevels=False, levels=(0, 255), lut=lut)
            heat.setRect(QRectF(0, 0, S[1], S[0]))
            heat.shape_rc = S
        # every bar (drawn or not) as wide as the widest: each picture sits against its bar, and per map the
        # tick numbers differ in width ("0.512", "0.09"), which moved the pictures out of their columns
        ColourBarItem.share_width([self.spacer_bar, *self.bars.values()])
        if self.image_body.seat_bars([self.spacer_bar, *self.bars.values()]):  # no gap where no bar is drawn
            self.image_body.settle(self.figure.layout.activate)
            self._fit_image()
        self._apply_opacity()
        self._arrange_timer.start()

    def _arrange_on_screen(self) -> None:
        """Arrange the image panels for the canvas once its size (or the scale mode: one bar or three) changed."""
        if self._body is not self.image_body or is_exporting():
            return
        key = (self.canvas.viewport().size(), self.scale_box.mode)
        if key != self._arranged:
            self._arranged = key
            self._arrange_images()

    def _arrange_images(self) -> None:
        """Two by two, a row, or the input beside the maps: what fills this room (rollout_arrangement.py)."""
        self.image_body.arrange([self.spacer_bar, *self.bars.values()], self.scale_box.mode == "per-map",
                                self.figure.layout.activate)
        self.image_body.settle(self.figure.layout.activate)
        self.image_body.hug_bars(list(self.bars.values()))
        self._fit_image()

    def _draw_strips(self, mode: str, part: str) -> None:
        tokens = self.trace.key_tokens(part)
        if mode == "per-map":  # one bar cannot give numbers for three ranges: it gives the fraction
            self.bar.set_levels(0.0, 1.0)
            self.bar.set_label("share of attention · ÷ the strip's maximum")
        else:
            self.bar.set_levels(0.0, self.tops["raw"])
            self.bar.set_label("share of attention · " + ("fixed scale 0–1" if mode == "fixed" else "shared scale"))
        m = self.maps
        self.strip_set.set_maps(tokens, m.maps, m.notes, self.tops, m.query, masked_after(self.trace, part, m.query))
        self._fit_strips()

    def _fit_strips(self, resized: bool = False) -> None:
        """As many positions around the query as the figure's given size (canvas or export page, not its laid-out
        size: that grows to what the strips ask) holds under the title. ``resized``: only if that size changed."""
        if self._body is not self.text_body or self.maps is None:
            return
        room = QRectF(self._room) if is_exporting() and self._room is not None else QRectF(self.canvas.viewport().rect())
        if resized and room.size() == self._fitted:
            return
        self._fitted = room.size()
        self.strip_set.fit_figure(self.figure, self.title_item, room, self._set_title, self.bar)

    def _relayout(self, geom: QRectF) -> None:
        self._room = QRectF(geom)  # the export's page: what the strips must fit (see _fit_strips)
        super()._relayout(geom)

    def _apply_opacity(self, *args) -> None:
        for _, _, _, heat in self.panels.values():
            heat.setOpacity(self.opacity.value() / 100)

    def _after_relayout(self) -> None:
        if self._body is self.image_body:
            self._arrange_images()
            self._arranged = None  # the screen arranges its own size again after the export
        # the strips wrap to their new width while the layout is applied, changing their heights:
        # apply it once more so the rows take those heights (an export after a screen layout
        # otherwise spread the strips over the old, taller rows)
        if self._body is self.text_body:
            self._fit_strips()
            for strip in self.strips.values():
                strip.updateGeometry()  # its new preferred height reaches the layouts
            self.text_body.layout.invalidate()
            self.figure.layout.invalidate()
            self.figure.layout.activate()
            self.text_body.layout.activate()

    def _size_text_bar(self) -> None:
        """The strips' bar beside the strips, not the whole height of a tall dock."""
        self.bar.setMaximumHeight(self.style.metrics().height() * 20)

    def _style_changed(self) -> None:
        self.scale_box.follow_style(self.style.scale)
        self._size_text_bar()
        for bar in [self.bar, self.spacer_bar, *self.bars.values()]:
            bar.set_style(self.style)
        self.strip_set.set_style(self.style)
        if self.trace is not None:
            self.recompute()
