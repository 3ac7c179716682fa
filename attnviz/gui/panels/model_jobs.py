"""The jobs the main window runs on its model lane: load a model, run it on an input.

Plain functions and result holders, executed on a worker thread (no widgets in here); see
:class:`attnviz.gui.workers.ModelLane`.
"""

from __future__ import annotations

import logging
import time

from attnviz.errors import AttnvizError, Message

__all__ = ["LoadResult", "RunResult", "load_model_job", "run_input_job", "wants_gradients",
           "DEFAULT_MODEL"]

log = logging.getLogger(__name__)


class LoadResult:
    """A loaded model and what the window shows with it first."""

    def __init__(self, ref: str, loaded, example, devices: list[str], snapshots=None, notice: str = "",
                 samples: dict | None = None, examples: list | None = None):
        self.ref, self.loaded, self.example, self.devices = ref, loaded, example, devices
        self.snapshots, self.notice, self.samples = snapshots, notice, samples or {}
        self.examples = examples or []  # the task's example sentences, for the picker


class RunResult:
    """One model run: the trace, the token strip, and the input it answers."""

    def __init__(self, trace, strip, source, seconds: float):
        self.trace, self.strip, self.source, self.seconds = trace, strip, source, seconds


DEFAULT_MODEL = "coref"


def load_model_job(ref: str | None, device: str = "auto", dtype: str = "auto") -> LoadResult:
    """Load ``ref`` (bundled name or directory; None: the default bundled model) and its example, in
    ``dtype`` (``attnviz gui --dtype``; "auto": the checkpoint's own)."""
    from attnviz.device import available_devices
    from attnviz.errors import ModelLoadError
    from attnviz.io import bundled_models
    from attnviz.runtime import load_model, task_of

    notice = ""
    if not ref:
        names = bundled_models()
        if not names:
            raise ModelLoadError("no bundled models are installed: open a model folder (File → Open model folder)")
        ref = DEFAULT_MODEL if DEFAULT_MODEL in names else names[0]
    loaded = load_model(ref, device=device, dtype=dtype)
    _use_threads_for(loaded)
    try:
        task = task_of(loaded)
        example = task.example_input() if task is not None else None
        examples = [e for e in task.examples() if isinstance(e, str)] if task is not None else []
    except AttnvizError as exc:  # a model whose task module is missing still loads and runs
        example, examples, notice = None, [], Message.of(exc)
    snapshots = None
    if loaded.path is not None:
        from attnviz.training.snapshots import load_snapshots

        try:
            snapshots = load_snapshots(loaded.path)
        except AttnvizError as exc:
            notice = Message.of(exc)
    return LoadResult(str(ref), loaded, example, available_devices(), snapshots, notice,
                      _sample_images() if loaded.config.kind == "vit" else {},
                      examples if loaded.config.kind != "vit" else [])


def _use_threads_for(loaded) -> None:
    """Every core for a large model's runs, one left to the GUI thread for a small one (device.app_threads)."""
    import torch

    from attnviz.device import app_threads

    torch.set_num_threads(app_threads(sum(p.numel() for p in loaded.model.parameters())))


def _sample_images() -> dict:
    """Bundled sample images (name → path); none when the assets lack them (a notice is logged)."""
    from attnviz.vision.samples import sample_images

    try:
        return {str(k): str(v) for k, v in sample_images().items()}
    except AttnvizError as exc:
        log.warning("no sample images: %s", exc)
        return {}


def wants_gradients(loaded) -> bool:
    """The one rule (:func:`attnviz.runtime.opening.wants_gradients`), imported when a job runs: the
    runtime package pulls in torch, which the window must not load before its first paint."""
    from attnviz.runtime.opening import wants_gradients as rule

    return rule(loaded)


def _preview_of(layer: int):
    """The ``preview`` of :func:`attnviz.runtime.run_trace` that sends ``layer``'s
    :class:`~attnviz.capture.preview.LayerPreview` through the lane's progress path, queued to the GUI thread,
    dropped with a superseded run."""
    from attnviz.gui.lane import report_progress

    def preview(p) -> None:  # a LayerPreview (capture/preview.py: numpy, not imported while the window builds)
        if p.layer == layer:
            report_progress(p)
    return preview


def run_input_job(loaded, text: str | None = None, image=None, target: str | None = None,
                  preview_layer: int | None = None) -> RunResult:
    """Run the model on text or an image and capture a Trace (+ the token strip for text); ``target``:
    what an encoder–decoder's decoder reads (None: its own greedy output); ``preview_layer``: the layer
    whose probabilities are reported (a :class:`LayerPreview`) as soon as the forward has computed them."""
    # input_tokens is a Qt module, but already imported by the window (GUI thread): only a lookup here
    from attnviz.text.token_strip import build_strip
    from attnviz.runtime import run_trace

    t0 = time.perf_counter()
    trace = run_trace(loaded, text=text, image=image, truncate=True, grad=wants_gradients(loaded),
                      target_text=target, preview=None if preview_layer is None else _preview_of(preview_layer),
                      preview_layers=None if preview_layer is None else [preview_layer])
    strip = None
    if text is not None:
        if trace.src_tokens:  # encoder–decoder: the strip shows what the encoder read
            strip = build_strip(loaded.tokenizer, trace.src_tokens, "source tokens")
        else:
            strip = build_strip(loaded.tokenizer, trace.tokens)
    return RunResult(trace, strip, text if text is not None else image, time.perf_counter() - t0)
