"""The model seam: every kind of model enters attnviz through one adapter protocol.

An adapter knows one family of model folders (attnviz's own checkpoints, Hugging Face folders, …):
it loads them, describes them, prepares an input the way the model expects, and runs it into a
:class:`~attnviz.capture.Trace`. Everything above the runtime layer (CLI, GUI, export, training
snapshots) sees only :class:`~attnviz.models.checkpoint.LoadedModel` and Traces.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Protocol, runtime_checkable

__all__ = ["ModelAdapter", "CaptureOptions"]


@dataclass(frozen=True)
class CaptureOptions:
    """Everything a capture can be asked for besides the input, for every adapter alike.

    Attributes
    ----------
    grad : also record d(target)/d(probs) as ``L{i}.grad``; target : the class or token it differentiates
        (None: the model's own prediction).
    precision : "auto", "float32" or "float16" (a storage choice: :func:`attnviz.capture.capture`).
    layers : the layer indices kept in full (None: all); only adapters whose ``keeps_some_layers`` says so.
    preview : called with each :class:`~attnviz.capture.preview.LayerPreview` during the forward (adapters
        that cannot report early call nothing); preview_layers : the layers it is called for (None: all).
    attention : "auto", or "on_demand": the fastest kernel at any length, probabilities recomputed from q, k
        and each row's log-sum-exp when asked (adapters whose ``keeps_some_layers`` says so).
    """

    grad: bool = False
    target: int | None = None
    precision: str = "auto"
    layers: tuple[int, ...] | None = None
    preview: Callable | None = None
    preview_layers: tuple[int, ...] | None = None
    attention: str = "auto"


@runtime_checkable
class ModelAdapter(Protocol):
    """What the runtime needs of one kind of model."""

    name: str  # e.g. "attnviz", "huggingface"
    batched: bool  # True when a batch of many inputs can be recorded in one pass (capture.batch)

    def can_load(self, path: Path) -> bool:
        """True when ``path`` (an existing folder) is a model of this kind."""

    def owns(self, loaded) -> bool:
        """True when ``loaded`` was loaded by this adapter."""

    def load(self, path: Path, device=None, allow_pickle: bool = False, dtype: str = "auto"):
        """Load the folder → LoadedModel (ModelLoadError with a sentence for the user on failure); ``dtype``:
        "auto" (the checkpoint's own), "float32", "float16" or "bfloat16"."""

    def describe(self, loaded) -> dict:
        """Facts for the user: name, source, kind, task, parameters, layers, heads, labels, metrics."""

    def prepare_text(self, loaded, text: str, truncate: bool = False, target_text: str | None = None):
        """Typed text → :class:`~attnviz.capture.Prepared` (InputError for text the model cannot read);
        ``target_text``: what an encoder–decoder's decoder reads instead of its own greedy output (other
        models refuse one with an InputError)."""

    def prepare_image(self, loaded, image):
        """A path, PIL image or array → :class:`~attnviz.capture.Prepared`."""

    def keeps_some_layers(self, loaded) -> bool:
        """Whether :meth:`capture` can keep only some layers in full (``CaptureOptions.layers``)."""

    def capture(self, loaded, prepared, meta: dict, options: CaptureOptions = CaptureOptions()):
        """Run the prepared input with every intermediate recorded → Trace."""
