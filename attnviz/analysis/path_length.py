"""Path length, RNN vs attention, read and summarised: what the "path-length" figure and claim show.

The study (:mod:`attnviz.training.path_length_study`, shipped as ``assets/data/path_length.json``)
trained an Elman RNN and a two-layer transformer on the same task (read the first letter at the
last position) over several seeds. :func:`load_study` reads it as an untrusted file (bounded,
every field checked); :func:`summarise` gives per model the mean over seeds of the held-out accuracy
and of ‖∂ logit / ∂ x_t‖ against the distance, and :func:`sequential_steps` the number of
recurrent or attention steps between two tokens, from the architecture. Qt-free, numpy only.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from attnviz.errors import InputError

__all__ = ["study_path", "STUDY_FILE", "load_study", "summarise", "sequential_steps", "MODELS", "MAX_STUDY_BYTES"]

MAX_STUDY_BYTES = 2_000_000
MODELS = ("rnn", "attention")
_SERIES = ("accuracy", "grad", "grad_init", "accuracy_init", "loss")


STUDY_FILE = "path_length.json"


def study_path() -> Path:
    """Where the shipped study lives (the bundled assets' data folder); its module in attnviz.training writes it."""
    from attnviz.io import assets_dir

    return assets_dir() / "data" / STUDY_FILE


def _bad(path, why: str) -> InputError:
    return InputError(f"{path}: not a path-length study file ({why})")


def load_study(path: str | Path | None = None) -> dict:
    """The study at ``path`` (default: the bundled one), validated; InputError, one line, when it is not."""
    from attnviz.io.jsonfile import JsonLimitError, read_json_file

    if path is None:
        path = study_path()
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no path-length study at {path}: re-create it with "
                         "python -m attnviz.training.path_length_study")
    try:
        doc = read_json_file(path, MAX_STUDY_BYTES, what="path-length study")
    except JsonLimitError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(doc, dict) or doc.get("format") != "attnviz-path-length":
        raise _bad(path, "format")
    dist = doc.get("distances")
    if not isinstance(dist, list) or not 1 <= len(dist) <= 4096 or not all(isinstance(d, int) for d in dist):
        raise _bad(path, "distances")
    runs = doc.get("runs")
    if not isinstance(runs, list) or not 2 <= len(runs) <= 100:
        raise _bad(path, "runs")
    for run in runs:
        if not isinstance(run, dict) or run.get("model") not in MODELS or not isinstance(run.get("seed"), int):
            raise _bad(path, "a run's model or seed")
        for key in _SERIES:
            vals = run.get(key)
            if not isinstance(vals, list) or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                     and math.isfinite(v) for v in vals):
                raise _bad(path, f"a run's {key}")
            if key != "loss" and len(vals) != len(dist):
                raise _bad(path, f"a run's {key} has {len(vals)} values for {len(dist)} distances")
    if {r["model"] for r in runs} != set(MODELS):
        raise _bad(path, "both models are needed")
    return doc


def summarise(doc: dict) -> dict:
    """``distances`` and, per model: ``seeds``, each series of the study as (n_seeds, n_distances) and its
    mean over seeds (``accuracy_mean``, ``grad_mean``, ``grad_init_mean``), ``grad_ratio`` and
    ``grad_ratio_init`` per seed (the gradient at the farthest distance over the gradient at distance
    1, trained and at initialisation), and ``far_accuracy``
    per seed (mean accuracy over the farthest quarter of the distances)."""
    dist = np.asarray(doc["distances"], float)
    far = dist >= dist.max() - (dist.max() - dist.min()) / 4
    out = {"distances": dist, "far_from": float(dist[far].min()), "models": {}}
    for name in MODELS:
        runs = [r for r in doc["runs"] if r["model"] == name]
        m = {"seeds": [r["seed"] for r in runs]}
        for key in ("accuracy", "grad", "grad_init"):
            arr = np.asarray([r[key] for r in runs], float)  # (seeds, distances)
            m[key] = arr
            m[key + "_mean"] = arr.mean(0)
        with np.errstate(divide="ignore", invalid="ignore"):
            m["grad_ratio"] = m["grad"][:, -1] / m["grad"][:, 0]
            m["grad_ratio_init"] = m["grad_init"][:, -1] / m["grad_init"][:, 0]
        m["far_accuracy"] = m["accuracy"][:, far].mean(1)
        out["models"][name] = m
    return out


def sequential_steps(distances) -> dict[str, np.ndarray]:
    """Sequential operations between a token and one ``d`` positions later (the path length): an RNN
    applies its recurrence ``d`` times; one self-attention layer connects any two positions directly,
    in one step, whatever ``d``."""
    d = np.asarray(distances, float)
    return {"rnn": d, "attention": np.ones_like(d)}
