"""A loaded model for notebooks: :func:`load` and :class:`Model` (``trace`` an input → :class:`Traced`)."""

from __future__ import annotations

__all__ = ["Model", "load"]


class Model:
    """A model loaded through the runtime's adapters (attnviz checkpoint or Hugging Face folder).

    ``loaded`` is the runtime's LoadedModel (its ``model`` is the torch module).
    """

    def __init__(self, loaded):
        self.loaded = loaded

    @property
    def name(self) -> str:
        return str(self.loaded.name)

    def describe(self) -> dict:
        """The model's facts: source, kind, task, parameters, layers, heads, held-out metrics."""
        from attnviz.runtime import describe_model

        return describe_model(self.loaded)

    def trace(self, text: str | None = None, image=None, truncate: bool = False, grad: bool | None = None,
              precision: str = "auto"):
        """Run the model on one input and capture every intermediate → :class:`~attnviz.api.Traced`.

        Parameters
        ----------
        text : input text (text models).
        image : an image file path, PIL image or array (vision models).
        truncate : cut text longer than the model's positions instead of refusing it.
        grad : also capture attention gradients (gradient rollout); None: as the app does (small
            classifiers), and the rollout figure captures them when it needs them.
        precision : "auto", "float32" or "float16" for the stored arrays (as the runtime takes it).
        """
        from attnviz.api.traced import Traced
        from attnviz.runtime import run_trace
        from attnviz.runtime.opening import wants_gradients

        if text is None and image is None:  # the app's opening input: the task's sentence or image
            example = self.example_input()
            text, image = (None, example) if self.loaded.config.kind == "vit" else (example, None)
        grad = wants_gradients(self.loaded) if grad is None else bool(grad)
        trace = run_trace(self.loaded, text=text, image=image, grad=grad, truncate=truncate, precision=precision)
        return Traced(trace, model=self, inputs={"text": text, "image": image, "truncate": truncate,
                                                 "precision": precision})

    def example_input(self):
        """The input the app opens this model on (its task's example); one line if it has none."""
        from attnviz.errors import InputError
        from attnviz.runtime import task_of

        task = task_of(self.loaded)
        example = task.example_input() if task is not None else None
        if example is None:
            raise InputError(f"give text= or image=: {self.name} has no example input of its own")
        return example if task.kind == "vit" else str(example)

    def __repr__(self) -> str:
        cfg = getattr(self.loaded, "config", None)
        shape = f", {cfg.n_layers} layers × {cfg.n_heads} heads" if hasattr(cfg, "n_layers") else ""
        return f"<attnviz.Model {self.name!r}{shape}>"


def load(name_or_dir, device: str = "auto", allow_pickle: bool = False) -> Model:
    """Load a bundled model by name (``"coref"``), an attnviz model folder or a Hugging Face folder.

    device : "auto" (a GPU if there is one), "cpu", "cuda[:N]" or "mps".
    allow_pickle : read ``.bin``/``.pt`` weights with ``torch.load(weights_only=True)`` (refused otherwise).
    """
    from attnviz.runtime import load_model

    return Model(load_model(name_or_dir, device=device, allow_pickle=allow_pickle))
