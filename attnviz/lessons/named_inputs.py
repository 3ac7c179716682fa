"""Every file and model a scene or lesson names: what a command reading it must never write over.

A scene names its model (a bundled name or a folder) and maybe an image file; its claim may name more
models (``with_positions`` / ``without_positions``); a lesson is its scenes. The output rules
(:mod:`attnviz.io.outputs`) count all of them as the command's inputs, as they count ``--model``.
"""

from __future__ import annotations

from attnviz.lessons.claim_params import MODEL_PARAMS

__all__ = ["named_inputs"]


def named_inputs(scenes) -> tuple[list[str], list[str]]:
    """(files, model references) the ``scenes`` name; model references as written (name or folder)."""
    files: list[str] = []
    models: list[str] = []
    for scene in scenes:
        models.append(scene.model)
        claim = scene.claim or {}
        models += [claim[k] for k in MODEL_PARAMS if isinstance(claim.get(k), str)]
        if scene.image is not None and not scene.image.startswith("sample:"):
            files.append(scene.image_source())
    return list(dict.fromkeys(files)), list(dict.fromkeys(models))
