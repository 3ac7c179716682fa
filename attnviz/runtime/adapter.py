"""The model seam: every kind of model enters attnviz through one adapter protocol.

An adapter knows one family of model folders (attnviz's own checkpoints, Hugging Face folders, …):
it loads them, describes them, prepares an input the way the model expects, and runs it into a
:class:`~attnviz.capture.Trace`. Everything above the runtime layer (CLI, GUI, export, training
snapshots) sees only :class:`~attnviz.models.checkpoint.LoadedModel` and Traces.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol, runtime_checkable

__all__ = ["ModelAdapter"]


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

    def capture(self, loaded, prepared, meta: dict, grad: bool = False, target: int | None = None,
                precision: str = "auto"):
        """Run the prepared input with every intermediate recorded → Trace."""
