"""The main window's models: loading one (by name, folder or device change), taking a loaded model in
(model panel, prediction vocabulary, selection bounds, the Training tab's replay) and running it on its
own example first.

A component of :class:`attnviz.gui.window.main_window.MainWindow`: it writes the loaded model into the
window's state (``state.model``) and uses the window's ``lane``, ``settings``, panels and ``notify``.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from attnviz.gui.panels.model_jobs import load_model_job
from attnviz.gui.panels.trace_defaults import input_id
from attnviz.text.fallback_text import FALLBACK_TEXT  # text models without an example: the CLI uses it too

APP_TITLE = "attnviz"  # the application display name (gui.app): window titles end with it

__all__ = ["ModelLoading", "FALLBACK_TEXT"]


class ModelLoading:
    """Loads models on the window's lane and shows what a loaded model brings."""

    def __init__(self, win):
        self.win = win
        self.state = win.state
        self.example_text = ""  # the example the model last ran on its own

    def load_model(self, ref: str | None) -> None:
        """Load a bundled model by name or a model directory (None: the default bundled model)."""
        self.state.model.loads_asked += 1  # a model asked for: the first one is no longer held back
        name = ref or "the default model"
        self.win.statusBar().showMessage(f"loading {name}…")
        current = self.state.model.ref or self.state.model.opening_ref  # (a stored opening trace shows)
        if current and ref != current and self.state.shown.trace is not None:
            # another model: the figures on screen are the previous model's. They are covered at once (a
            # real-size model loads for seconds, and its predecessor's maps stood unmarked meanwhile), not
            # cleared: a load that fails uncovers them as they were
            from attnviz.gui.window.running_covers import loading_text

            for cover in self.win.loading_covers:
                cover.cover(loading_text(Path(name).name or name))
        self.win.runs.load_started(Path(name).name or name)  # a running input's covers say so too
        # a new model makes waiting (and running) traces of the old one stale
        self.win.lane.submit("load", load_model_job, ref, self.win.model_panel.device,
                            getattr(self.win, "dtype", "auto"), supersedes=("trace",))

    def open_model_dialog(self) -> None:
        path = QFileDialog.getExistingDirectory(self.win, "Open a model folder (config.json + model.safetensors)")
        if path:
            self.load_model(path)

    def device_changed(self, device: str) -> None:
        self.win.settings.device = device
        if self.state.model.ref:
            self.load_model(self.state.model.ref)

    def model_loaded(self, res) -> None:
        from attnviz.io import bundled_models

        win, model, selection = self.win, self.state.model, self.state.selection
        switched = res.ref != model.ref  # not a reload on another device
        if switched and model.ref:  # where this model was left comes back with it; its clicks stay here
            selection.leave_model(model.ref, input_id(self.state.shown.trace))
        opening = model.loaded is None and model.opening_ref == res.ref
        model.opening_ref = None
        if not opening:  # the stored opening trace is this model's own: it stays until the live run
            win.clear_shown()  # nothing of the previous model stays on screen, hidden docks included
        self.uncover()
        loaded = res.loaded
        # the stored opening trace already chose this model's starting view (its focus head): the live
        # run keeps what is on screen, even a head picked meanwhile, so nothing jumps when it takes over
        # (the walkthrough follows ``loaded`` through the state: the what-if lab drops the old results)
        model.update(loaded=loaded, new_model=not opening, ref=res.ref)
        self.offer_model(loaded.config)
        bundled = res.ref in bundled_models()
        win.settings.last_model = res.ref
        panel = win.model_panel
        if not bundled:
            panel.set_recent(win.settings.add_recent("models", str(Path(res.ref).resolve())))
        panel.set_current(res.ref)
        if panel.device_box.count() <= 1:
            panel.set_devices(res.devices, win.settings.device)
            if win.training is not None:
                win.training.set_devices(res.devices)
        cfg = loaded.config
        panel.show_loaded(loaded)
        out_tok = loaded.tgt_tokenizer or loaded.tokenizer
        win.prediction_panel.set_vocab(out_tok.vocab if out_tok is not None else [], loaded.name)
        selection.clamp(max(cfg.n_layers, cfg.dec_layers), cfg.n_heads, 10**9)
        win.setWindowTitle(f"{loaded.name} — {APP_TITLE}")  # ends with the display name: said once
        win.statusBar().showMessage(f"{loaded.name} loaded on {loaded.device}", 4000)
        if res.notice:
            win.notify(res.notice, "warning")
        elif win.notice.level == "error":
            win.notice.dismiss()  # the model problem is solved
        # this model's replay and curves, or none: a model without snapshots or history must not leave the
        # previous model's on the Training tab
        win.pages.set_snapshots(res.snapshots, cfg.causal)
        win.pages.tab_changed(win.tabs.currentIndex())
        self.feed_first_input(res, keep_text=not switched)
        win.model_loaded.emit(res.ref)

    def offer_model(self, config) -> None:
        """The part row and the tabs of the model just loaded: they follow the model, not the last trace."""
        from attnviz.gui.panels.view_groups import offer_for_model

        from attnviz.gui.panels.part_bar import opening_part

        model = self.state.model
        # a new model's first trace opens on this part (trace_defaults); a stored opening trace already chose
        # the part on screen (new_model is then False), which stays
        part = opening_part(config, self.state.selection.kept(model.ref or "")) if model.new_model else None
        self.win.part_bar.set_model(config, part)
        offer_for_model(self.win.views_area, self.state.shown.trace, config)

    def uncover(self) -> None:
        """The covers of a switch away (the new model is in, or its load failed: the figures were kept)."""
        for cover in self.win.loading_covers:
            cover.uncover()

    def feed_first_input(self, res, keep_text: bool = False) -> None:
        """Run the model on its own example (its task's sentence, a sample image), or on the text
        given on the command line; a reload of the same model keeps the text."""
        vision = res.loaded.config.kind == "vit"
        panel = self.win.input_panel
        panel.set_mode("image" if vision else "text")
        if not keep_text:  # another model: its target field starts empty (its own output)
            panel.set_target_visible(False)
        panel.set_target_visible(res.loaded.config.kind == "encoder-decoder")
        first = self.state.model.first
        first_target = first.pop("target", None)  # a scene's (or the command line's) target
        if first_target is not None and res.loaded.config.kind == "encoder-decoder":
            panel.target_row.set_target(first_target)
        first_text, first_image = first.pop("text", None), first.pop("image", None)
        if vision:
            panel.image.set_samples(res.samples)
            if first_image:
                panel.image.submit(first_image)
            elif res.example is not None:
                panel.image.submit(res.example, caption="example")
            elif panel.image.current is not None:
                panel.image.submit(panel.image.current)
            return
        examples = [e for e in getattr(res, "examples", []) if isinstance(e, str)]
        example = res.example if isinstance(res.example, str) else (examples[0] if examples else FALLBACK_TEXT)
        panel.set_examples(examples or [example])
        text = panel.text
        if first_text:
            text = first_text
        elif not (keep_text and text):
            text = self.example_text = example
        panel.set_text(text, submit=True)
