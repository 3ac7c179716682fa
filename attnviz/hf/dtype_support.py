"""A float16 / bfloat16 model runs in its own dtype where the device computes every op in it; else in float32, said.

PyTorch's CPU kernels cover float16 and bfloat16 for the ops of the families attnviz opens (checked on torch
2.13), but not every device and build does: an op missing in a dtype raises ``"<op>" not implemented for
'Half'`` (or ``'BFloat16'``) at the first forward. :func:`run_in_supported_dtype` runs one two-position
forward right after loading; if a kernel is missing, the model is converted to float32 once and the one-line
notice saying so goes into ``LoadedModel.info["notice"]``, which every trace of the model carries in its
``meta["notice"]`` (the CLI prints it on stderr, the app shows it, ``attnviz.load`` warns with it).
"""

from __future__ import annotations

__all__ = ["run_in_supported_dtype", "unsupported_op", "compute_dtype_of", "stored_precision"]

_DTYPE_WORDS = {"float16": ("'Half'", "float16", "Half"), "bfloat16": ("'BFloat16'", "bfloat16", "BFloat16")}


def unsupported_op(exc: BaseException, dtype_name: str) -> str | None:
    """The first line of ``exc`` when it says an op has no kernel for ``dtype_name`` ("float16" / "bfloat16");
    None for any other error (the probe only asks about the dtype)."""
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    if "not implemented for" not in text and "not supported for" not in text and "Unsupported dtype" not in text:
        return None
    return text if any(w in text for w in _DTYPE_WORDS.get(dtype_name, ())) else None


def _probe_inputs(model, vision: bool, seq2seq: bool) -> dict:
    import torch

    device = next(model.parameters()).device
    cfg = model.config
    if vision:
        size = getattr(cfg, "image_size", 224)
        size = size[0] if isinstance(size, (list, tuple)) else int(size)
        dtype = next(model.parameters()).dtype
        return {"pixel_values": torch.zeros((1, int(getattr(cfg, "num_channels", 3)), size, size), dtype=dtype,
                                            device=device)}
    ids = torch.tensor([[1, 2]], device=device)
    inputs = {"input_ids": ids}
    if seq2seq:
        start = getattr(cfg, "decoder_start_token_id", None)
        inputs["decoder_input_ids"] = torch.tensor([[0 if start is None else int(start), 1]], device=device)
    return inputs


def run_in_supported_dtype(model, vision: bool = False, seq2seq: bool = False) -> str | None:
    """Probe ``model`` (float16 or bfloat16) with one tiny forward; convert it to float32 in place when the
    device lacks a kernel in that dtype. Returns the one-line notice, or None (nothing changed)."""
    import torch

    dtype = next(model.parameters()).dtype
    if dtype not in (torch.float16, torch.bfloat16):
        return None
    name = str(dtype).replace("torch.", "")
    try:
        with torch.no_grad():
            model(**_probe_inputs(model, vision, seq2seq))
    except (RuntimeError, NotImplementedError, TypeError) as exc:
        op = unsupported_op(exc, name)
        if op is None:
            return None  # another reason (the probe's made-up input): the real input will say it
        model.float()
        device = next(model.parameters()).device.type
        return (f"the {name} weights run in float32: {device} has no {name} kernel for an op of this model "
                f"({op[:120]})")
    return None


def compute_dtype_of(model) -> str:
    """The dtype ``model``'s weights run in, as a name ("float32", "float16", "bfloat16"): a trace records it as
    ``meta["compute_dtype"]`` and returns probabilities in its precision (:mod:`attnviz.capture.compute_dtype`)."""
    first = next(iter(model.parameters()), None)
    return "float32" if first is None else str(first.dtype).replace("torch.", "")


def stored_precision(dtype, compute: str) -> str:
    """The ``precision`` fact of a capture storing ``dtype`` from a model computing in ``compute``: a float16
    model's tensors are kept as they are (float32 would add nothing), so its arrays are float16 whatever asked."""
    import numpy as np

    return "float16" if compute == "float16" else np.dtype(dtype).name
