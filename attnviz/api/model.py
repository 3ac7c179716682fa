"""A loaded model for notebooks: :func:`load` and :class:`Model` (``trace`` an input → :class:`Traced`)."""

from __future__ import annotations

import os

from attnviz.api.checks import PRECISIONS, check_choice, check_text
from attnviz.errors import ModelLoadError

__all__ = ["Model", "load"]

_HINT = "pass a transformers model, a folder or a bundled name (attnviz.models())"


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
        precision : "auto", "float32" or "float16" for the stored arrays (as the runtime takes it). "float16" halves
            the memory and costs exactness: stored maps are within 2.5e-4 of the model's probabilities, maps a long
            input recomputes from float16 q and k differ by up to ~5e-3 on sharp heads; the trace's notice says
            so (measured figures: :mod:`attnviz.capture.storage_notice`). "auto" keeps a float32 model's values,
            except attnviz's own models above 512 tokens (float16 maps, with the same notice).
        """
        from attnviz.api.traced import Traced
        from attnviz.runtime import run_trace
        from attnviz.runtime.opening import wants_gradients

        text = check_text(text)
        check_choice("precision", precision, PRECISIONS)
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


def load(model, tokenizer=None, processor=None, device: str = "auto", allow_pickle: bool = False,
         name: str | None = None, dtype: str = "auto") -> Model:
    """Load a model to trace: a bundled name, a folder, or a model object already in memory.

    Parameters
    ----------
    model : a bundled name (``"coref"``; see :func:`attnviz.models`), an attnviz model folder, a Hugging Face
        folder, a ``transformers`` model object (any family a folder can hold), or a TransformerLens
        ``HookedTransformer`` / ``TransformerBridge`` (with ``pip install 'attnviz[transformerlens]'``).
    tokenizer : the tokenizer of a text model object (a folder brings its own).
    processor : the image processor of a vision model object (optional: else mean = std = 0.5).
    device : for a name or folder: "auto" (a GPU if there is one), "cpu", "cuda[:N]" or "mps". A model object
        stays where it is.
    allow_pickle : read ``.bin``/``.pt`` weights with ``torch.load(weights_only=True)`` (refused otherwise).
    name : what traces call a model object (default its class name).
    dtype : for a Hugging Face folder: "auto" (the checkpoint's own float16 / bfloat16, else float32),
        "float32", "float16" or "bfloat16". A model object keeps its own.

    A model object is left exactly as it was: attnviz never moves it, casts it, sets its train/eval mode
    or attention implementation for good, nor leaves a hook, gradient or attribute on it.

    Examples
    --------
    >>> import attnviz
    >>> attnviz.load("coref")
    <attnviz.Model 'coref', 2 layers × 4 heads>
    >>> attnviz.load(None)
    Traceback (most recent call last):
    ...
    attnviz.errors.ModelLoadError: cannot load None: pass a transformers model, a folder or a bundled name (attnviz.models())
    """
    if isinstance(model, (str, os.PathLike)):
        if tokenizer is not None or processor is not None:
            raise ModelLoadError("a folder or bundled name brings its own tokenizer and processor: "
                                 "leave tokenizer= and processor= out")
        from attnviz.runtime import load_model

        from attnviz.api.checks import check_choice

        check_choice("dtype", dtype, ("auto", "float32", "float16", "bfloat16"))
        loaded = load_model(model, device=device, allow_pickle=allow_pickle, dtype=dtype)
        if loaded.info.get("notice"):  # e.g. float16 weights run in float32 (the device has no float16 kernel)
            import warnings

            warnings.warn(f"attnviz: {loaded.info['notice']}", UserWarning, stacklevel=2)
        return Model(loaded)
    if dtype != "auto":
        raise ModelLoadError("a model object keeps its own dtype: cast it (model.to(dtype)) before attnviz.load")
    if device != "auto":
        raise ModelLoadError("a model object stays on its own device: move it (model.to(...)) before "
                             "attnviz.load, and leave device= out")
    from attnviz.hf.in_memory import is_hf_model

    if is_hf_model(model):
        from attnviz.hf.in_memory import wrap_hf_model

        return Model(wrap_hf_model(model, tokenizer=tokenizer, processor=processor, name=name))
    from attnviz.api.from_lens import is_lens_model

    if is_lens_model(model):
        from attnviz.api.from_lens import LensModel

        from attnviz.hf.in_memory import wrap_hf_model

        def load_plain(plain, tok, plain_name):  # the transformers model inside a TransformerBridge
            return Model(wrap_hf_model(plain, tokenizer=tok, name=plain_name))

        return LensModel(model, tokenizer=tokenizer, name=name, load_plain=load_plain)
    what = "None" if model is None else f"a {type(model).__name__}"
    raise ModelLoadError(f"cannot load {what}: {_HINT}")
