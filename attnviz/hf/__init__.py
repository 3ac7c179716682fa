"""Hugging Face models from a local folder, traced into the same Trace as attnviz's own models (Qt-free).

Optional: needs ``pip install 'attnviz[hf]'`` (transformers 5). Importing this package does not import
transformers or torch; :func:`is_hf_folder` only reads ``config.json``.

- :mod:`attnviz.hf.detect` — is this folder an HF model, which family?
- :mod:`attnviz.hf.loader` — :func:`load_hf_model` → ``LoadedModel`` (eager attention, local files only)
- :mod:`attnviz.hf.inputs` — the model's own tokenizer and image processor → ``Prepared``
- :mod:`attnviz.hf.capture` — :func:`capture_hf` → ``Trace`` (forward hooks on the projections)
- :mod:`attnviz.hf.own_attention` — Falcon, Bloom, GPT-Neo, DeBERTa-v2: attention they compute themselves,
  read by forward hooks on their public submodules
"""

from attnviz.hf.detect import HFFolder, detect_hf_folder, is_hf_folder
from attnviz.hf.families import FAMILIES, Family, family_of

__all__ = ["HFFolder", "detect_hf_folder", "is_hf_folder", "FAMILIES", "Family", "family_of", "load_hf_model"]


def load_hf_model(path, device=None, allow_pickle: bool = False, dtype: str = "auto"):
    """See :func:`attnviz.hf.loader.load_hf_model` (imported on first use: it pulls in torch)."""
    from attnviz.hf.loader import load_hf_model as load

    return load(path, device=device, allow_pickle=allow_pickle, dtype=dtype)
