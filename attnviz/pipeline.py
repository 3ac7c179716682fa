"""From a model name and an input to a Trace: the one path the CLI, the GUI and notebooks share.

input (text | image) → tokenize / preprocess → capture() → Trace (+ default rollout)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from attnviz.errors import InputError

__all__ = ["Prepared", "load_model", "task_of", "prepare_text", "prepare_seq2seq", "prepare_image", "run_trace"]


@dataclass
class Prepared:
    """Model inputs for a batch of one, the labels of its positions, and notices for the user."""

    inputs: dict
    tokens: list[str]
    src_tokens: list[str] = field(default_factory=list)
    meta: dict = field(default_factory=dict)
    image: np.ndarray | None = None  # preprocessed image (H, W, C) in [0, 1], for overlays


def load_model(name_or_dir, device=None, allow_pickle: bool = False):
    """Load a bundled model by name or a model directory (see :mod:`attnviz.models.checkpoint`)."""
    from attnviz.models.checkpoint import load_checkpoint

    return load_checkpoint(name_or_dir, device=device, allow_pickle=allow_pickle)


def task_of(loaded):
    """The built-in task a model was trained on (cached on the LoadedModel), or None."""
    if "task_obj" not in loaded.extra:
        from attnviz.tasks import TASKS, get_task

        name = loaded.task
        loaded.extra["task_obj"] = get_task(name) if name in TASKS else None
    return loaded.extra["task_obj"]


def _fit(ids: list[int], tokens: list[str], limit: int, truncate: bool, what: str):
    if len(ids) <= limit:
        return ids, tokens, None
    if not truncate:
        raise InputError(f"{what} has {len(ids)} tokens but the model takes at most {limit}; shorten it")
    return ids[:limit], tokens[:limit], f"{what} truncated to the model's {limit} positions (it had {len(ids)} tokens)"


def prepare_text(loaded, text: str, truncate: bool = False) -> Prepared:
    """Tokenize ``text`` for the model; tasks may override (e.g. which token a classifier reads)."""
    import torch

    cfg = loaded.config
    if cfg.kind == "vit":
        raise InputError(f"{loaded.name} is a vision model: give it an image, not text")
    if text is None or not str(text).strip():
        raise InputError("the text is empty: type a sentence")
    hook = loaded.extra.get("prepare_text")  # Hugging Face models tokenize their own way
    if hook is not None:
        return hook(loaded, text, truncate=truncate)
    task = task_of(loaded)
    if task is not None and hasattr(task, "prepare_text"):
        return task.prepare_text(loaded, text, truncate=truncate)
    enc = loaded.tokenizer.encode(text)
    ids, tokens, notice = _fit(enc.ids, enc.tokens, cfg.max_len, truncate, "the text")
    notice = "; ".join(filter(None, [enc.notice, notice]))  # characters read as [UNK] or left out
    meta = {"notice": notice} if notice else {}
    if cfg.kind != "encoder-decoder":
        return Prepared({"ids": torch.tensor([ids], device=loaded.device)}, tokens, meta=meta)
    return prepare_seq2seq(loaded, tokens, meta)


def prepare_seq2seq(loaded, src_tokens: list[str], meta: dict | None = None) -> Prepared:
    """Encoder–decoder input: translate ``src_tokens`` greedily, then trace the decoder over its own output.

    Positions are the decoder's tokens "[BOS] y1 … [EOS]"; ``src_tokens`` label the encoder positions.
    """
    import torch

    src_tok = loaded.tokenizer
    tgt_tok = loaded.tgt_tokenizer or src_tok
    src = torch.tensor([[src_tok.id_of(t) for t in src_tokens]], device=loaded.device)
    out = loaded.model.generate(src, bos=tgt_tok.id_of("[BOS]"), eos=tgt_tok.id_of("[EOS]"),
                                max_new=loaded.config.max_len - 1)[0].tolist()
    meta = {**(meta or {}), "output_text": tgt_tok.decode(out)}
    return Prepared({"src": src, "tgt": torch.tensor([out], device=loaded.device)},
                    [tgt_tok.vocab[i] for i in out], list(src_tokens), meta)


def prepare_image(loaded, image) -> Prepared:
    """Load (path, PIL image or array) and preprocess an image for a vision model."""
    from attnviz.vision.preprocess import patch_labels, preprocess_image

    cfg = loaded.config
    if cfg.kind != "vit":
        raise InputError(f"{loaded.name} is a text model: give it text, not an image")
    hook = loaded.extra.get("prepare_image")
    if hook is not None:
        return hook(loaded, image)
    tensor, shown = preprocess_image(image, cfg, loaded.info.get("preprocess"))
    return Prepared({"images": tensor.to(loaded.device)}, patch_labels(cfg.grid), image=shown)


def run_trace(loaded, text: str | None = None, image=None, grad: bool = False, target: int | None = None,
              truncate: bool = False, precision: str = "auto", rollout: bool = True):
    """Prepare the input, capture a Trace and add the default rollout."""
    from attnviz.capture.record import capture

    if (text is None) == (image is None):
        raise InputError("give exactly one input: text or an image")
    prep = prepare_image(loaded, image) if image is not None else prepare_text(loaded, text, truncate)
    meta = {"task": loaded.task, "model_name": loaded.name, "labels": loaded.info.get("labels"),
            "input_text": text, **prep.meta}
    capture_fn = loaded.extra.get("capture", capture)  # Hugging Face models record through hooks
    trace = capture_fn(loaded.model, prep.inputs, prep.tokens, meta=meta, grad=grad, target=target,
                    precision=precision)
    if capture_fn is not capture:  # other adapters (Hugging Face): the same NaN/Inf notice as capture() adds
        from attnviz.capture.finite import add_nonfinite_notice

        add_nonfinite_notice(trace.meta, trace.arrays)
    if prep.src_tokens:
        trace.arrays["src_tokens"] = np.array(prep.src_tokens, dtype=str)
    if prep.image is not None:
        trace.arrays["image"] = prep.image.astype(np.float32)
    if rollout:
        from attnviz.analysis.rollout import compute_rollout

        trace.arrays["rollout"] = compute_rollout(trace.all_probs()).astype(np.float32)
    return trace
