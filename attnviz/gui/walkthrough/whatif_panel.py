"""What-if switches on the loaded model, re-run live: the prediction before and after, attention, entropy.

Scale (1/√d_k, none, a temperature), the causal mask, positional encoding, ablated heads, and "permute
tokens" (A(RX) = R A(X) Rᵀ holds without positions). Every run goes through ``run_async`` — the main
window's model lane — so the GUI thread never waits for the model and never races another run.
"""

from __future__ import annotations

import functools
import math

import shiboken6

from PySide6.QtCore import QEvent, Qt, QTimer
from PySide6.QtWidgets import QCheckBox, QLabel

from attnviz.gui.style import ViewStyle
from attnviz.gui.walkthrough.walkthrough_view import WalkthroughView
from attnviz.gui.walkthrough.whatif_layout import page_arrangement, presenting
from attnviz.gui.walkthrough.whatif_switches import (NARROW_PX, SwitchGroups, SwitchesPlacement, arrange_heads, build_switches,
                                                     layers_per_row)
from attnviz.selection import Selection
from attnviz.whatif import WhatIf, at_position, compare_whatif, permute_tokens, switches_refused

__all__ = ["WhatIfPanel", "MAP_MIN_PX"]

MAP_MIN_PX = 260  # the least cell area of each attention map on screen: ≥ 12 px a token up to ~20 tokens


class WhatIfPanel(WalkthroughView):
    """Switches on the left, the comparison on the right. ``set_model`` and ``set_input`` feed it."""

    title = "What if"

    def __init__(self, run_async=None, selection: Selection | None = None, style: ViewStyle | None = None,
                 parent=None, debounce_ms: int = 300):
        self._init_args = (run_async, debounce_ms)
        super().__init__(selection, style, parent)

    def _setup(self) -> None:
        run_async, debounce_ms = self._init_args
        if run_async is None:  # standalone: a lane of our own still keeps runs off the GUI thread, in order
            from attnviz.gui.walkthrough.runners import lane_runner
            from attnviz.gui.workers import Lane

            self._own_lane = Lane(self)
            run_async = lane_runner(self._own_lane)
        self.run_async = run_async
        self.loaded = None
        self.text: str | None = None
        self.image = None
        self.comparison = None  # the last WhatIfComparison
        self.permutation = None  # the last PermutationResult (cleared when a switch changes)
        self.message = ""
        self.running = False
        self._gen = 0  # compare runs: a result of an older request is dropped
        self._perm_gen = 0  # permutation runs, counted apart so a re-run does not drop them
        self._before = None  # (key, Trace) of the model as trained, reused while the input stays
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(debounce_ms)
        self._timer.timeout.connect(self.rerun)

    # -- widgets --------------------------------------------------------------------------------------
    def _build(self) -> None:
        self._setup()
        groups = build_switches(self)
        self._switches = SwitchesPlacement(groups, self.heads_caption, self.heads_row)
        self.scale_box.currentIndexChanged.connect(self._changed)
        self.temp_slider.valueChanged.connect(self._changed)
        self.causal_box.toggled.connect(self._changed)
        self.pos_box.toggled.connect(self._changed)
        self.reset_button.clicked.connect(self.reset)
        self.permute_button.clicked.connect(self.permute)
        # disabled as a whole for a model the switches cannot act on (the state line stays: it gives the reason)
        self.switches_box = SwitchGroups(self._switches.groups[:-1])
        self._refused = ""
        self._lay_out(controls=self._switches.bar, side=self._switches.side, side_width=340)
        self._place_switches()
        self._sync_controls()
        self._draw()

    def showEvent(self, event) -> None:
        super().showEvent(event)
        if getattr(self, "_rerun_when_shown", False):
            self.rerun()

    # -- where the switches stand ----------------------------------------------------------------------
    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._place_switches()

    def _place_switches(self) -> None:
        """Above the figure in a narrow panel (the maps get the width), beside it otherwise; presented (F5), in
        the bar whatever the width: the class sees what is switched, and the lecturer can flip a switch there."""
        sw = self._switches
        sw.place(sw.on_slide or 0 < self.width() < NARROW_PX)
        sw.bar.flow.setSpacing(8 if sw.on_slide else 14)
        per_row = layers_per_row(self, self.width() // 2) if sw.narrow else 1
        if (per_row, len(self.head_checks)) != getattr(self, "_heads_arranged", None):  # not on every resize
            self._heads_arranged = (per_row, len(self.head_checks))
            arrange_heads(self, per_row)
        if getattr(self, "_hidden_for_figure", []):
            sw.bar.setVisible(sw.on_slide)  # presented: the switches stay on the slide, in one bar above it
            return
        sw.bar.setVisible(sw.narrow)
        self.splitter.widget(0).setVisible(not sw.narrow)

    def set_controls_visible(self, on: bool) -> None:
        self._switches.on_slide = not on
        super().set_controls_visible(on)
        self._place_switches()

    # -- the view contract and inputs -----------------------------------------------------------------------
    def _selection_changed(self, state, changed) -> None:
        c = self.comparison
        if changed & {"query", "part"} and c is not None and self.loaded is not None:
            # the same two runs read at the walkthrough's new query: no model call
            position = self._query_position(c.before)
            if position != c.position:
                self.comparison = at_position(c, self.loaded, position, len(c.top_before) or 5)
        if changed & {"layer", "head", "query", "part"}:
            self._draw()

    def _query_position(self, trace) -> int | None:
        """The walkthrough's query as a position of ``trace``'s outputs; None (the default rule's query,
        the one the walkthrough itself opens on) when none is picked or it is out of range, or when it is a
        source word of an encoder–decoder (the encoder writes nothing)."""
        s = self.state
        if s.query is None or (trace is not None and trace.kind == "encoder-decoder" and s.part == "enc"):
            return None
        return s.query if trace is None or 0 <= s.query < len(trace.tokens) else None

    def _style_changed(self) -> None:
        self._draw()

    def set_model(self, loaded) -> None:
        """A newly loaded model: switches back to as-trained (or to the switches a scene saved for this
        model, see :meth:`set_switches`), heads listed, results cleared."""
        self.loaded = loaded
        self._before, self.comparison, self.permutation = None, None, None
        # the previous model's input is not this one's (text on an image model fails, another
        # vocabulary misreads): run on the input of this model's own trace (set_input) or on nothing
        self.text, self.image = None, None
        self._gen += 1
        self._perm_gen += 1
        self._sync_controls()
        pending, self._pending_switches = getattr(self, "_pending_switches", None), None
        if pending is not None and pending[0] is loaded:
            self._apply_switches(pending[1])
        self._changed()

    def set_switches(self, whatif: WhatIf, loaded=None) -> list[tuple[int, int]]:
        """Set every switch to ``whatif`` (an opened scene's), then re-run.

        ``loaded``: the model the switches belong to; when the panel has not been given that model yet,
        they are applied as soon as :meth:`set_model` brings it. Returns the ablated heads the model does
        not have (ignored).
        """
        if loaded is not None and loaded is not self.loaded:
            self._pending_switches = (loaded, whatif)
            cfg = loaded.config
            n_layers = cfg.dec_layers if cfg.kind == "encoder-decoder" else cfg.n_layers
            return sorted(p for p in whatif.ablate if not (0 <= p[0] < n_layers and 0 <= p[1] < cfg.n_heads))
        missing = self._apply_switches(whatif)
        self._changed()
        return missing

    def _apply_switches(self, whatif: WhatIf) -> list[tuple[int, int]]:
        boxes = [self.scale_box, self.temp_slider, self.causal_box, self.pos_box] + list(self.head_checks.values())
        for w in boxes:
            w.blockSignals(True)
        self.scale_box.setCurrentIndex(max(0, self.scale_box.findData(whatif.scale)))
        # the slider holds 10^(v/20): a temperature saved from it comes back exactly; others go to the nearest
        self.temp_slider.setValue(int(round(20 * math.log10(max(whatif.temperature, 1e-9)))))
        cfg = self.loaded.config if self.loaded is not None else None
        causal_default = bool(cfg is not None and cfg.kind in ("decoder", "encoder-decoder"))
        self.causal_box.setChecked(causal_default if whatif.causal is None else bool(whatif.causal))
        self.pos_box.setChecked(bool(whatif.positional) or not self.pos_box.isEnabled())
        for pair, box in self.head_checks.items():
            box.setChecked(pair in whatif.ablate)
        for w in boxes:
            w.blockSignals(False)
        return sorted(p for p in whatif.ablate if p not in self.head_checks)

    def set_input(self, text: str | None = None, image=None) -> None:
        """The input the model is re-run on (the main window's current text or image)."""
        if text == self.text and image is self.image:
            return
        self.text, self.image = text, image
        self._before, self.permutation = None, None
        self._changed()

    def _trace_changed(self) -> None:
        """Follow the main view's input when the trace carries its text (images need ``set_input``)."""
        text = self.trace.description.input_text if self.trace is not None else None
        if text:
            self.set_input(text=text)

    def whatif(self) -> WhatIf:
        """The switches as a :class:`~attnviz.whatif.WhatIf`."""
        cfg = self.loaded.config if self.loaded is not None else None
        causal_default = bool(cfg is not None and cfg.kind in ("decoder", "encoder-decoder"))
        causal = self.causal_box.isChecked()
        ablate = {lh for lh, box in self.head_checks.items() if box.isChecked()}
        return WhatIf(scale=self.scale_box.currentData(), temperature=self.temperature,
                      causal=None if causal == causal_default else causal,
                      positional=self.pos_box.isChecked() or not self.pos_box.isEnabled(), ablate=ablate)

    def current_switches(self) -> WhatIf:
        """What a saved scene should hold: the switches on screen, or those an opened scene set for a
        model the panel has not been given yet."""
        pending = getattr(self, "_pending_switches", None)
        return pending[1] if pending is not None else self.whatif()

    @property
    def temperature(self) -> float:
        return round(10 ** (self.temp_slider.value() / 20), 3)

    def reset(self) -> None:
        self._sync_controls()
        self._changed()

    # -- controls ------------------------------------------------------------------------------------------
    def _sync_controls(self) -> None:
        """Switches as trained; one ablation box per (layer, head) of the loaded model."""
        cfg = self.loaded.config if self.loaded is not None else None
        widgets = [self.scale_box, self.temp_slider, self.causal_box, self.pos_box] + list(self.head_checks.values())
        for w in widgets:
            w.blockSignals(True)
        self.scale_box.setCurrentIndex(0)
        self.temp_slider.setValue(0)
        decoder = cfg is not None and cfg.kind in ("decoder", "encoder-decoder")
        self.causal_box.setChecked(decoder)
        self.causal_box.setEnabled(decoder)
        self.causal_box.setToolTip("" if decoder else "only decoders have a causal mask")
        self.pos_box.setChecked(True)
        self.pos_box.setEnabled(cfg is not None and cfg.pos != "none")
        for w in widgets:
            w.blockSignals(False)
        # a Hugging Face model: the switches greyed with the reason, and no grid of boxes that do nothing
        # (30 × 9 of them, h6–h8 cut off at the side's right edge, all looking live)
        self._refused = switches_refused(self.loaded.model) if self.loaded is not None else ""
        self.switches_box.setEnabled(not self._refused)
        self.switches_box.setToolTip(self._refused)
        n_layers = (cfg.dec_layers if cfg.kind == "encoder-decoder" else cfg.n_layers) if cfg else 0
        shape = (n_layers, cfg.n_heads if cfg else 0) if not self._refused else (0, 0)
        two_stacks = cfg is not None and cfg.kind == "encoder-decoder"  # whatif.applied: the main stack's self
        self._switches.part = "decoder self-attention" if two_stacks else ""
        self._switches.panel_heads(bool(self._switches.narrow))
        if getattr(self, "_heads_shape", None) != shape:
            # every widget of the grid goes, the row labels too (a 3-layer model's "L2" stayed, with no boxes)
            while self.heads_grid.count():
                w = self.heads_grid.takeAt(0).widget()
                if w is not None:
                    w.setParent(None)
                    w.deleteLater()
            self.head_checks = {}
            self.layer_labels = [QLabel(f"L{layer}") for layer in range(shape[0])]
            for layer in range(shape[0]):
                for h in range(shape[1]):
                    box = QCheckBox(f"h{h}")
                    box.toggled.connect(self._changed)
                    self.head_checks[(layer, h)] = box
            self._heads_shape = shape
            self._heads_arranged = None
            self._place_switches()  # the new boxes laid out as the panel's width wants them
        else:
            for box in self.head_checks.values():
                box.blockSignals(True)
                box.setChecked(False)
                box.blockSignals(False)
        self.permute_button.setEnabled(cfg is not None and cfg.kind in ("encoder", "decoder"))

    def _changed(self, *_args) -> None:
        self.temp_label.setText(f"T = {self.temperature:g}")
        self.permutation = None
        self._perm_gen += 1  # a permutation under the old switches no longer applies
        self._timer.start()

    # -- runs ------------------------------------------------------------------------------------------------
    def _input_key(self):
        return (id(self.loaded), self.text, id(self.image))

    def rerun(self) -> None:
        """Re-run the model with the current switches (asynchronously; once shown, if hidden now)."""
        self._timer.stop()
        if not self.isVisible():  # typing in the main window must not queue model runs for a hidden tab
            self._rerun_when_shown = True
            return
        self._rerun_when_shown = False
        if self._refused:  # said at once, without a run that can only fail
            self.comparison, self.message = None, self._refused
            self._draw()
            return
        if self.loaded is None or (self.text is None and self.image is None):
            self.message = "load a model and run an input first"
            self._draw()
            return
        whatif = self.whatif()
        before = self._before[1] if self._before is not None and self._before[0] == self._input_key() else None
        self._gen += 1
        gen, key = self._gen, self._input_key()
        position = self._query_position(before if before is not None else self.trace)
        fn = functools.partial(compare_whatif, self.loaded, whatif, self.text, self.image, 5, before, position)
        self.running = True
        self.state_label.setText("running…")
        self.run_async("compare", fn, lambda res: self._compared(gen, key, res),
                       lambda message: self._failed(message, gen))

    def permute(self) -> None:
        """Shuffle the tokens with the current switches and compare with R·P·Rᵀ (asynchronously)."""
        if self.loaded is None or not self.text or self._refused:
            return
        self._perm_gen += 1
        gen = self._perm_gen
        fn = functools.partial(permute_tokens, self.loaded, self.text, None, self.whatif(), self.perm_seed.value())
        self.running = True
        self.state_label.setText("permuting…")
        self.run_async("permute", fn, lambda res: self._permuted(gen, res), self._failed)

    def _compared(self, gen: int, key, res) -> None:
        if gen != self._gen:
            return  # the switches or the model changed meanwhile: a newer run is coming
        self.running = False
        self._before = (key, res.before)
        position = self._query_position(res.before)
        if position != res.position:  # the query was picked while the model ran
            res = at_position(res, self.loaded, position, len(res.top_before) or 5)
        self.comparison, self.message = res, ""
        self.state_label.setText("")
        self._draw()

    def _permuted(self, gen: int, res) -> None:
        if gen != self._perm_gen:
            return
        self.running = False
        self.permutation = res
        self.state_label.setText("")
        self._draw()

    def _failed(self, message: str, gen: int | None = None) -> None:
        if gen is not None and gen != self._gen:
            return  # a run for a model or input no longer shown: its failure is not news
        self.running = False
        self.message = message
        self.state_label.setText(message)
        self._draw()

    # -- drawing ---------------------------------------------------------------------------------------------
    def _draw(self) -> None:
        from attnviz.gui.walkthrough.whatif_figure import draw_comparison, draw_permutation
        from attnviz.gui.walkthrough.whatif_layout import bring_compared_row_into_view

        self.board.clear()
        self.grids = {}
        c = self.comparison
        if c is None:
            self.board.add_heading("What if…", self.message or "change a switch on the left to re-run the model")
            self.board.finish()
            return
        s = self.state
        # with the figure's own notes: on a slide they are one paragraph in the note type (a note of its own in the
        # larger type took translate's maps from 273 to 215 px when a source word was the walkthrough's query)
        notes = ["The walkthrough's query is a source word: the encoder writes nothing, so the outputs are compared "
                 "at the decoder position the walkthrough opens on."] \
            if c.before.kind == "encoder-decoder" and s.part == "enc" and s.query is not None else []
        draw_comparison(self, c, s.layer, s.head, notes)
        self._hold_maps()
        if self.permutation is not None:
            draw_permutation(self, self.permutation, s.layer, s.head)
        if self.message:
            self.board.add_note(self.message)
        self.board.finish()
        bring_compared_row_into_view(self)

    def _hold_maps(self) -> None:
        """On screen (docked), the two maps keep cells of at least :data:`MAP_MIN_PX`: a 1280×720 window's
        figure was fitted to its ~480 px viewport and drew them ~130 px with ~10 px token labels; now the
        figure scrolls to them instead. An export lets it go (:meth:`render_figure`)."""
        row = getattr(self, "maps_row", None)
        if row is None or not shiboken6.isValid(row) or presenting(self):
            return  # presenting: the figure has the screen
        need = max(sum(g._margins()[1:]) for g in row.maps) + MAP_MIN_PX  # (with a stacked subtitle)
        lines = 2 if row.wrapped else 1  # stacked in a narrow panel: each map its floor
        row.setMinimumHeight(math.ceil(need * lines + 12 * (lines - 1)))
        if row.property("whatif_held") is None:  # the arrangement follows the row's width: held again on a resize
            row.setProperty("whatif_held", True)
            row.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QEvent.Type.Resize and obj is getattr(self, "maps_row", None) and obj.minimumHeight():
            self._hold_maps()
        return super().eventFilter(obj, event)

    def render_figure(self, painter, rect, scale: float = 1.0) -> None:
        """The figure at the page's size, arranged for the page (:func:`whatif_layout.page_arrangement`)."""
        with page_arrangement(self, rect.width() / (scale if scale and scale > 0 else 1.0)):
            super().render_figure(painter, rect, scale)
