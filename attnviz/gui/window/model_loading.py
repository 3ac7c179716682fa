"""The main window's models: loading one (by name, folder or device change), taking a loaded model in
(model panel, prediction vocabulary, selection bounds, the Training tab's replay) and running it on its
own example first.

A mixin of :class:`attnviz.gui.window.main_window.MainWindow` (kept apart so each file stays readable); it uses
the window's ``lane``, ``settings``, ``selection``, panels and ``notify``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from attnviz.gui.panels.model_jobs import load_model_job

APP_TITLE = "attnviz"  # the application display name (gui.app): window titles end with it

__all__ = ["WindowModelsMixin", "FALLBACK_TEXT"]

# shown by text models whose task gives no example (e.g. a model folder trained elsewhere)
FALLBACK_TEXT = "The animal didn't cross the street because it was too tired"


class WindowModelsMixin:
    """Loads models on the window's lane and shows what a loaded model brings."""

    def load_model(self, ref: str | None) -> None:
        """Load a bundled model by name or a model directory (None: the default bundled model)."""
        self._load_waits = False  # a model asked for: the first one is no longer held back (startup/window.py)
        self.statusBar().showMessage(f"loading {ref or 'the default model'}…")
        # a new model makes waiting (and running) traces of the old one stale
        self.lane.submit("load", load_model_job, ref, self.model_panel.device, supersedes=("trace",))

    def open_model_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self, "Open a model folder (config.json + model.safetensors)")
        if path:
            self.load_model(path)

    def _device_changed(self, device: str) -> None:
        self.settings.device = device
        if self.model_ref:
            self.load_model(self.model_ref)

    def _model_loaded(self, res) -> None:
        from attnviz.io import bundled_models

        switched = res.ref != self.model_ref  # not a reload on another device
        if switched and self.model_ref:  # where this model was left comes back with it; its clicks stay here
            self.selection.leave_model(self.model_ref)
        opening = self.loaded is None and self._opening_ref == res.ref
        self._opening_ref = None
        if not opening:  # the stored opening trace is this model's own: it stays until the live run
            self.clear_shown()  # nothing of the previous model stays on screen, hidden docks included
        loaded = self.loaded = res.loaded
        if self.walkthrough is not None:  # the what-if lab drops the old model's results, even hidden
            self.walkthrough.set_model(loaded)
            self._walkthrough_fed = (loaded, None, self._walkthrough_fed[2])
        # the stored opening trace already chose this model's starting view (its focus head): the live
        # run keeps what is on screen, even a head picked meanwhile, so nothing jumps when it takes over
        self._new_model = not opening
        self.model_ref = res.ref
        bundled = res.ref in bundled_models()
        self.settings.last_model = res.ref
        if not bundled:
            self.model_panel.set_recent(self.settings.add_recent("models", str(Path(res.ref).resolve())))
        self.model_panel.set_current(res.ref)
        if self.model_panel.device_box.count() <= 1:
            self.model_panel.set_devices(res.devices, self.settings.device)
            if self.training is not None:
                self.training.set_devices(res.devices)
        cfg = loaded.config
        self.model_panel.show_loaded(loaded)
        out_tok = loaded.tgt_tokenizer or loaded.tokenizer
        self.prediction_panel.set_vocab(out_tok.vocab if out_tok is not None else [])
        self.selection.clamp(max(cfg.n_layers, cfg.dec_layers), cfg.n_heads, 10**9)
        self.setWindowTitle(f"{loaded.name} — {APP_TITLE}")  # ends with the display name: said once
        self.statusBar().showMessage(f"{loaded.name} loaded on {loaded.device}", 4000)
        if res.notice:
            self.notify(res.notice, "warning")
        elif self.notice.level == "error":
            self.notice.dismiss()  # the model problem is solved
        # this model's replay and curves, or none: a model without snapshots or history must not leave the
        # previous model's on the Training tab
        self._snapshots_pending = (res.snapshots, cfg.causal)
        if self.training is not None:
            # the Training tab's replay and curves in a turn of their own: with the tab in front, the
            # rest of this and its repaint in one turn froze the window for 80+ ms per model switch
            self.run_steps(self._snapshots_step(loaded, self._snapshots_pending))
        self._tab_changed(self.tabs.currentIndex())
        self._feed_first_input(res, keep_text=not switched)
        self.model_loaded.emit(res.ref)

    def _snapshots_step(self, loaded, pending):
        yield
        if self.loaded is loaded and self._snapshots_pending is pending:  # no newer load since
            yield from self._pending_snapshot_steps()

    def _feed_first_input(self, res, keep_text: bool = False) -> None:
        """Run the model on its own example (its task's sentence, a sample image), or on the text
        given on the command line; a reload of the same model keeps the text."""
        vision = res.loaded.config.kind == "vit"
        self.input_panel.set_mode("image" if vision else "text")
        if not keep_text:  # another model: its target field starts empty (its own output)
            self.input_panel.set_target_visible(False)
        self.input_panel.set_target_visible(res.loaded.config.kind == "encoder-decoder")
        first_target = self._first.pop("target", None)  # a scene's (or the command line's) target
        if first_target is not None and res.loaded.config.kind == "encoder-decoder":
            self.input_panel.target_row.set_target(first_target)
        first_text, first_image = self._first.pop("text", None), self._first.pop("image", None)
        if vision:
            self.input_panel.image.set_samples(res.samples)
            if first_image:
                self.input_panel.image.submit(first_image)
            elif res.example is not None:
                self.input_panel.image.submit(res.example, caption="example")
            elif self.input_panel.image.current is not None:
                self.input_panel.image.submit(self.input_panel.image.current)
            return
        examples = [e for e in getattr(res, "examples", []) if isinstance(e, str)]
        example = res.example if isinstance(res.example, str) else (examples[0] if examples else FALLBACK_TEXT)
        self.input_panel.set_examples(examples or [example])
        text = self.input_panel.text
        if first_text:
            text = first_text
        elif not (keep_text and text):
            text = self._example_text = example
        self.input_panel.set_text(text, submit=True)
