"""Hugging Face model folders, through the same seam as attnviz's own models (optional: ``attnviz[hf]``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from attnviz.runtime.adapter import CaptureOptions
from attnviz.runtime.describe import describe_loaded, refuse_target
from attnviz.runtime.finite_weights import first_nonfinite_weight

__all__ = ["HuggingFaceAdapter"]

def _kept_as_it_was(loaded):
    """A user's model in memory (``attnviz.load(model)``) is left exactly as it was by the capture; a model
    attnviz loaded from a folder is its own (nothing to restore on every keystroke)."""
    from contextlib import nullcontext

    if not loaded.extra.get("in_memory"):
        return nullcontext()
    from attnviz.hf.in_memory import preserved_model

    return preserved_model(loaded.model, loaded.config)


class HuggingFaceAdapter:
    """Folders with a ``config.json`` naming a ``model_type`` (BERT, GPT-2, ViT, …): see :mod:`attnviz.hf`."""

    name = "huggingface"
    batched = False  # hooks record one input at a time

    def can_load(self, path: Path) -> bool:
        from attnviz.hf.detect import is_hf_folder

        return is_hf_folder(path)

    def owns(self, loaded) -> bool:
        return loaded.info.get("source") == "huggingface"

    def load(self, path: Path, device=None, allow_pickle: bool = False, dtype: str = "auto"):
        from attnviz.hf.loader import load_hf_model

        return load_hf_model(path, device=device, allow_pickle=allow_pickle, dtype=dtype)

    def describe(self, loaded) -> dict:
        facts = describe_loaded(loaded, self.name)
        facts.update(architecture=loaded.info.get("architecture"), family=loaded.info.get("family"),
                     qkv_available=loaded.info.get("qkv_available"))
        return facts

    def prepare_text(self, loaded, text: str, truncate: bool = False, target_text: str | None = None):
        from attnviz.hf.inputs import prepare_hf_text

        if loaded.config.kind == "encoder-decoder":  # T5, BART, Marian, …: source, and the decoder's tokens
            from attnviz.hf.encdec_inputs import prepare_encdec_text

            with _kept_as_it_was(loaded):  # the greedy decode runs the model
                return prepare_encdec_text(loaded, text, target=target_text, truncate=truncate)
        refuse_target(loaded, target_text)
        return prepare_hf_text(loaded, text, truncate=truncate)

    def prepare_image(self, loaded, image):
        from attnviz.hf.inputs import prepare_hf_image

        return prepare_hf_image(loaded, image)

    def keeps_some_layers(self, loaded) -> bool:
        """Whether :meth:`capture` can keep only some layers in full (``layers``): decoders and encoders."""
        return loaded.config.kind != "encoder-decoder"

    def capture(self, loaded, prepared, meta: dict, options: CaptureOptions = CaptureOptions()):
        from attnviz.capture.finite import add_nonfinite_notice

        grad, extra = options.grad, {}
        if grad and loaded.info.get("head") == "none" and loaded.config.kind != "encoder-decoder":
            # a base model (BertModel, GPT2Model) has no logits: there is no target to differentiate, and the
            # capture would read .grad of tensors no backward pass reached (PyTorch's non-leaf warning)
            grad = False
        if loaded.config.kind == "encoder-decoder":
            from attnviz.hf.encdec_capture import capture_encdec as capture
            extra = {"attention": options.attention}  # on demand from ON_DEMAND_T tokens, as decoders
        else:
            from attnviz.hf.capture import capture_hf as capture
            extra = {"layers": options.layers, "preview": options.preview, "preview_layers": options.preview_layers,
                     "attention": options.attention}
        with _kept_as_it_was(loaded):
            trace = capture(loaded.model, prepared.inputs, prepared.tokens, meta=meta, grad=grad,
                            target=options.target, precision=options.precision, **extra)
        # the notice attnviz's own capture() adds; the weight arrays (W_q … b_o: ~28 M numbers of BERT-base,
        # most of the check's ~25 ms a keystroke) are the model's own parameters, checked once per version
        # (float32 only: a float16 trace may have rounded a large finite weight to ∞)
        weights = [k for k, a in trace.arrays.items()
                   if k.rpartition(".")[2][:2] in ("W_", "b_") and a.dtype == np.float32]
        known = weights if first_nonfinite_weight(loaded.model) is None else []
        if trace.spill is not None:  # arrays on disk were checked as they were written (capture/spill.py)
            known = [*known, *trace.spill.finite]
        add_nonfinite_notice(trace.meta, trace.arrays, known)
        if loaded.info.get("notice"):  # the model's own (a float16 model run in float32: hf/dtype_support.py)
            trace.meta["notice"] = "; ".join(filter(None, [trace.description.notice, loaded.info["notice"]]))
        return trace
