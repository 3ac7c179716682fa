"""The embedding arrays of a Hugging Face trace: ``emb.token``, ``emb.pos``, ``emb.sum`` (and a vision model's
patch filters), split from :mod:`attnviz.hf.capture`.

``emb.sum`` is always the residual stream entering the first block. ``emb.token`` is the output of the
model's input embeddings (``get_input_embeddings()``, vision: the family's prefix tokens then the patch
rows); ``emb.pos`` is the family's learned position table output (:mod:`attnviz.hf.families`). Rotary
models have no ``emb.pos``: their positions enter every layer by rotating q and k.
"""

from __future__ import annotations

from contextlib import contextmanager

import torch
from torch import nn

__all__ = ["embedding_hooks", "embedding_arrays"]

_PREFIX_PARAMS = {"[CLS]": "cls_token", "[DIST]": "distillation_token"}


def _at(root: nn.Module, path: str):
    node = root
    for part in path.split("."):
        node = getattr(node, part, None)
        if node is None:
            return None
    return node


@contextmanager
def embedding_hooks(model, family, emb: dict):
    """Forward hooks filling ``emb`` with "token", "patch", "pos" for one forward; removed on exit."""
    base, handles = model.base_model, []

    def put(key, fn=lambda o: o):
        def hook(m, a, o):
            emb.setdefault(key, fn(o))  # returning None leaves the output unchanged
        return hook

    try:
        word = _at(base, family.word) if family is not None and family.word else None
        if word is None and (family is None or not family.patch):
            try:
                word = model.get_input_embeddings()
            except (AttributeError, NotImplementedError):
                word = None
        if isinstance(word, nn.Module):
            handles.append(word.register_forward_hook(put("token")))
        if family is not None and family.patch:  # conv output (1, D, gh, gw) → (1, N, D) patch rows
            patch = _at(base, family.patch)
            if isinstance(patch, nn.Module):
                handles.append(patch.register_forward_hook(put("patch", lambda o: o.flatten(2).transpose(1, 2))))
        pos = _at(base, family.pos) if family is not None and family.pos else None
        if isinstance(pos, nn.Parameter):
            emb["pos"] = pos  # (1, T, D) table added as a whole (ViT)
        elif isinstance(pos, nn.Module):
            handles.append(pos.register_forward_hook(put("pos")))
        yield emb
    finally:
        for h in handles:
            h.remove()


def embedding_arrays(model, family, emb: dict, blocks, conv, T: int) -> dict:
    out = {}
    if "patch" in emb and family is not None:  # vision: prefix tokens ([CLS], [DIST]) then the patch rows
        embeddings = model.base_model.embeddings
        rows = [getattr(embeddings, _PREFIX_PARAMS[p]).reshape(1, 1, -1) for p in family.prefix]
        emb["token"] = torch.cat(rows + [emb["patch"]], dim=1)
        out["emb.patch_weight"] = conv(_at(model.base_model, family.patch).weight)  # (D, C, P, P) filters
    for name in ("token", "pos"):
        t = emb.get(name)
        if isinstance(t, torch.Tensor) and t.dim() == 3 and t.shape[1] == T:
            out[f"emb.{name}"] = conv(t[0])
    first = blocks.calls[0] if blocks is not None and blocks.calls else None
    if first is not None and first.get("stream") is not None and first["stream"].shape[1] == T:
        out["emb.sum"] = conv(first["stream"][0])  # the residual stream entering layer 0
    return out
