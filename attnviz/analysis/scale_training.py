"""The √d_k training study, read and summarised: what the "scale-training" figure and claim show.

The study (:mod:`attnviz.training.scale_study`, shipped as ``assets/data/scale_study.json``) trained
the same model with and without 1/√d_k at d_k 256, from two initialisations, over several seeds.
:func:`load_study` reads it as an untrusted file (bounded size, every field type- and range-checked);
:func:`summarise` gives, per (init, scale), the seeds' curves and their mean, and the numbers the
caption states; :func:`when_it_matters` is the sentence those numbers support. Qt-free, numpy only.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from attnviz.errors import InputError

__all__ = ["study_path", "STUDY_FILE", "load_study", "summarise", "when_it_matters", "CURVES", "MAX_STUDY_BYTES"]

MAX_STUDY_BYTES = 4_000_000
CURVES = ("train_loss", "loss", "accuracy", "entropy")
_INITS, _SCALES = ("unit", "small"), ("scaled", "unscaled")


STUDY_FILE = "scale_study.json"


def study_path() -> Path:
    """Where the shipped study lives (the bundled assets' data folder); its module in attnviz.training writes it."""
    from attnviz.io import assets_dir

    return assets_dir() / "data" / STUDY_FILE


def _bad(path, why: str) -> InputError:
    return InputError(f"{path}: not a √d_k study file ({why})")


def load_study(path: str | Path | None = None) -> dict:
    """The study at ``path`` (default: the bundled one), validated; InputError, one line, when it is not."""
    from attnviz.io.jsonfile import JsonLimitError, read_json_file

    if path is None:
        path = study_path()
    path = Path(path)
    if not path.is_file():
        raise InputError(f"no √d_k study at {path}: re-create it with python -m attnviz.training.scale_study")
    try:
        doc = read_json_file(path, MAX_STUDY_BYTES, what="√d_k study")
    except JsonLimitError as exc:
        raise InputError(str(exc)) from None
    if not isinstance(doc, dict) or doc.get("format") != "attnviz-scale-study":
        raise _bad(path, "format")
    runs = doc.get("runs")
    if not isinstance(runs, list) or not 1 <= len(runs) <= 200:
        raise _bad(path, "runs")
    for run in runs:
        if not isinstance(run, dict) or run.get("init") not in _INITS or run.get("scale") not in _SCALES:
            raise _bad(path, "a run's init or scale")
        steps = run.get("step")
        if not isinstance(steps, list) or not 1 <= len(steps) <= 10_000:
            raise _bad(path, "a run's steps")
        for key in ("step", "seed", *CURVES):
            vals = run.get(key)
            seq = vals if isinstance(vals, list) else [vals]
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in seq):
                raise _bad(path, f"a run's {key}")
            if key in CURVES and len(seq) != len(steps):
                raise _bad(path, f"a run's {key} has {len(seq)} points for {len(steps)} steps")
        if any(not math.isfinite(v) for k in ("loss", "accuracy", "entropy") for v in run[k]):
            raise _bad(path, "a non-finite value")
    for key in ("d_head", "steps"):
        if not isinstance(doc.get(key), int) or doc[key] < 1:
            raise _bad(path, key)
    return doc


def summarise(doc: dict) -> dict:
    """Per ``(init, scale)``: ``step`` (the shared evaluation steps), ``seeds``, every curve of
    :data:`CURVES` as (n_seeds, n_steps) and its mean; ``final`` (the mean of each curve at the last
    step), ``mean_loss`` (validation loss averaged over the run: how fast it learned), ``to_90`` (the
    first step at which the mean accuracy reaches 90 %, NaN if never); and ``worst_gap`` per init: the
    smallest, over seeds paired by seed, of (unscaled − scaled) validation loss averaged over the run
    (positive: the scale made learning faster in every seed)."""
    groups: dict[tuple[str, str], dict] = {}
    for run in doc["runs"]:
        groups.setdefault((run["init"], run["scale"]), []).append(run)
    out: dict = {"d_head": doc["d_head"], "steps": doc["steps"], "groups": {}, "worst_gap": {}}
    for key, runs in groups.items():
        n = min(len(r["step"]) for r in runs)
        g = {"step": np.asarray(runs[0]["step"][:n], float), "seeds": [int(r["seed"]) for r in runs]}
        for c in CURVES:
            arr = np.asarray([r[c][:n] for r in runs], float)  # (seeds, steps)
            g[c] = arr
            g[c + "_mean"] = np.nanmean(arr, 0)
        g["final"] = {c: float(g[c + "_mean"][-1]) for c in ("loss", "accuracy", "entropy")}
        g["mean_loss"] = float(g["loss_mean"].mean())
        reach = np.flatnonzero(g["accuracy_mean"] >= 0.9)
        g["to_90"] = float(g["step"][reach[0]]) if reach.size else float("nan")
        out["groups"][key] = g
    for init in _INITS:
        s, u = out["groups"].get((init, "scaled")), out["groups"].get((init, "unscaled"))
        if s is None or u is None:
            continue
        area_u = dict(zip(u["seeds"], u["loss"].mean(1)))
        gaps = [area_u[seed] - area for seed, area in zip(s["seeds"], s["loss"].mean(1)) if seed in area_u]
        out["worst_gap"][init] = float(min(gaps)) if gaps else float("nan")
    return out


def _step(value: float) -> str:
    return "never" if math.isnan(value) else f"{value:.0f}"


def when_it_matters(summary: dict) -> str:
    """The sentence the figure prints, with the study's own numbers (means over seeds at the last step)."""
    g, d = summary["groups"], summary["d_head"]
    parts = []
    for init, words in (("unit", "q, k with unit-variance components (the lecture's assumption)"),
                        ("small", "the model's own small initialisation (std 0.02)")):
        s, u = g.get((init, "scaled")), g.get((init, "unscaled"))
        if s is None or u is None:
            continue
        parts.append(f"from {words}: validation loss averaged over training {s['mean_loss']:.2f} scaled vs "
                     f"{u['mean_loss']:.2f} unscaled, 90 % accuracy at step {_step(s['to_90'])} vs "
                     f"{_step(u['to_90'])}, attention entropy at the start {s['entropy_mean'][0]:.2f} vs "
                     f"{u['entropy_mean'][0]:.2f} nats")
    small_gap = summary["worst_gap"].get("small", float("nan"))
    tail = (" (here the unscaled run even learned faster: its scores move in larger steps)"
            if small_gap < 0 else "")
    return (f"At d_k {d}, over {summary['steps']} steps, " + "; ".join(parts) + ". The scale matters when q·k "
            "starts large, i.e. at large d_k with unit-variance q and k: unscaled, the softmax starts saturated "
            f"and its gradient vanishes; from a small initialisation q·k starts small either way{tail}.")
