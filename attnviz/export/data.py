"""The numbers behind a figure, written as .npz or .csv next to (or instead of) the picture.

Qt-free: a figure name, a Trace and a selection state in; named arrays with row/column labels out.
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnviz.capture.trace import layer_prefix

from attnviz.io import write_atomic
from attnviz.errors import AttnvizError
from attnviz.selection import SelectionState

__all__ = ["FigureData", "figure_data", "write_figure_data"]


@dataclass
class FigureData:
    """Named arrays, and for the main 2-D array the labels of its rows and columns (CSV header)."""

    arrays: dict[str, np.ndarray]
    rows: list[str] = field(default_factory=list)
    cols: list[str] = field(default_factory=list)
    main: str = ""


def _head_map(trace, s: SelectionState) -> FigureData:
    p = trace.probs(s.layer, s.part)[s.head]
    key = f"{layer_prefix(s.layer, s.part)}probs[{s.head}]"
    from attnviz.analysis.decoder_positions import row_labels

    return FigureData({key: p}, row_labels(trace, s.part), trace.key_tokens(s.part), key)


def _layer_probs(trace, s: SelectionState) -> FigureData:
    prefix = layer_prefix(s.layer, s.part)
    return FigureData({prefix + "probs": trace.probs(s.layer, s.part)}, main="")


def _all_probs(trace, s: SelectionState) -> FigureData:
    n = trace.layers_in(s.part)
    return FigureData({f"{layer_prefix(i, s.part)}probs": trace.probs(i, s.part) for i in range(n)})


def _rollout(trace, s: SelectionState) -> FigureData:
    """The trace's rollout (T, T), or computed one layer at a time (never every layer's maps at once). Above
    ``LONG_ROLLOUT_T`` tokens the (T, T) product is not built: the selected query's row alone (``rollout_row``,
    streamed over row blocks of every layer, as the Rollout view shows a long input), (1, T)."""
    from attnviz.analysis import rollout_row as long_rollout
    from attnviz.analysis.rollout import compute_rollout
    from attnviz.analysis.rollout_maps import default_query

    tokens = list(trace.tokens)
    if "rollout" in trace:
        r = trace["rollout"]
    elif trace.probs_shape(0, "self")[-1] > long_rollout.LONG_ROLLOUT_T:
        q = default_query(trace) if s.query is None else int(s.query)
        row = long_rollout.rollout_row(trace, q)  # (T,) float64; InputError for a query out of range
        return FigureData({"rollout_row": row[None].astype(np.float32), "rollout_query": np.array(q)},
                          [f"{tokens[q]} [{q}]" if q < len(tokens) else str(q)], tokens, "rollout_row")
    else:
        r = compute_rollout(trace)  # ProbLayers: one layer's (H, T, T) at a time
    return FigureData({"rollout": np.asarray(r, dtype=np.float32)}, tokens, tokens, "rollout")


def _steps(trace, s: SelectionState) -> FigureData:
    from attnviz.analysis.steps import compute_six_steps

    steps = compute_six_steps(trace, s.layer, s.head, s.query or 0, s.part)
    arrays = {k: np.asarray(v) for k, v in vars(steps).items()
              if isinstance(v, np.ndarray) or isinstance(v, (float, int))}
    cols = trace.key_tokens(s.part)
    table = np.stack([np.asarray(steps.scores), np.asarray(steps.scaled), np.asarray(steps.masked),
                      np.asarray(steps.weights)])  # (4, T)
    arrays["steps_table"] = table
    return FigureData(arrays, ["score q·k", "scaled", "masked", "softmax weight"], cols, "steps_table")


def _distance(trace, s: SelectionState) -> FigureData:
    """Mean attention distance and entropy (L, H), each layer streamed over blocks of query rows (never a
    layer's whole map: a long trace recomputes its blocks on demand)."""
    from attnviz.analysis.distance import head_statistics

    part = s.part if s.part != "cross" else "self"
    grid = trace.grid
    patch = trace.description.config.get("patch_size", 1) if grid else 1
    stats = [head_statistics(trace, i, part, grid=grid, patch_size=patch) for i in range(trace.layers_in(part))]
    return FigureData({"mean_distance": np.stack([d for _, d in stats]), "entropy": np.stack([e for e, _ in stats])})


def _embeddings(trace, s: SelectionState) -> FigureData:
    keys = [k for k in ("emb.token", "emb.pos", "emb.sum") if k in trace]
    return FigureData({k: np.asarray(trace[k], dtype=np.float32) for k in keys}, main="")


def _pos_encoding(trace, s: SelectionState) -> FigureData:
    """What the positional-encoding figure shows: the model's whole table (rows: positions) when the trace
    carries it, else the input's rows; the CSV header names each position (and its token, if used)."""
    data = _embeddings(trace, s)
    key = "emb.pos_table" if "emb.pos_table" in trace else "emb.pos"
    if key not in trace:
        return data
    table = np.asarray(trace[key], dtype=np.float32)
    data.arrays[key] = table
    used = len(trace["emb.pos"]) if "emb.pos" in trace else 0
    tokens = list(trace.tokens)
    data.rows = [f"{i} {tokens[i]}" if i < min(used, len(tokens)) else str(i) for i in range(len(table))]
    data.cols = [f"dim {d}" for d in range(table.shape[1])]
    data.main = key
    return data


def _qk_points(trace, s: SelectionState) -> FigureData:
    # the query–key figure is drawn from a data set, not from the trace: the same points, as a table
    from attnviz.runtime.model_copies import model_ref
    from attnviz.runtime.qk_collect import qk_points_table

    values, rows, cols = qk_points_table(model_ref(trace=trace), s.layer, s.head, s.part)
    return FigureData({"qk_points": values}, rows, cols, "qk_points")


def _filters_pca(trace, s: SelectionState) -> FigureData:
    """The principal components of the patch filters and their share of the variance (what the figure shows)."""
    from attnviz.analysis.pca import compute_filter_pca

    comps, ratio = compute_filter_pca(np.asarray(trace["emb.patch_weight"], dtype=np.float64))
    return FigureData({"components": comps.astype(np.float32), "explained_variance_ratio": ratio}, main="")


def _mask(trace, s: SelectionState) -> FigureData:
    p = layer_prefix(s.layer, s.part)
    return FigureData({p + "mask": np.asarray(trace[p + "mask"]), p + f"logits[{s.head}]": trace[p + "logits"][s.head],
                       p + f"probs[{s.head}]": trace.probs(s.layer, s.part)[s.head]}, main="")


def _scale_reason(trace, s: SelectionState) -> FigureData:
    """The curves against d_k (rows) and the head's own numbers, as the √d_k figure draws them."""
    from attnviz.analysis.scaling import scale_reason

    d = scale_reason(trace, s.layer, s.head, s.part)
    cols = ["spread_raw", "spread_scaled", "top_raw", "top_scaled", "grad_raw", "grad_scaled"]
    table = np.array([d[c] for c in cols], dtype=np.float64).T  # (d_ks, curves)
    head = {k: np.float64(v) for k, v in d.items() if k.startswith("head_")}
    return FigureData({"curves": table, "d_ks": np.asarray(d["d_ks"]), "d_k": np.int64(d["d_k"]), **head},
                      [str(x) for x in d["d_ks"]], cols, "curves")


def _matrix_z(trace, s: SelectionState) -> FigureData:
    """One head's A (its attention), V and Z = A·V, as the matrix-z figure shows them."""
    p = layer_prefix(s.layer, s.part)
    v = np.asarray(trace[p + "v"], np.float64)  # (H_kv, T_k, d)
    group = trace.n_heads // v.shape[0]  # query heads per key/value head (GQA)
    A = np.asarray(trace.probs(s.layer, s.part)[s.head], np.float64)
    V = v[s.head // group]  # (T_k, d): the key/value head this head reads
    Z = np.asarray(trace[p + "z"], np.float64)[s.head]  # (T_q, d)
    return FigureData({"A": A, "V": V, "Z": Z}, main="")


def _scale_training(trace, s: SelectionState) -> FigureData:
    """Every run of the shipped √d_k study: (runs, points) arrays and which run is which."""
    from attnviz.analysis.scale_training import CURVES, load_study

    runs = load_study()["runs"]
    n = min(len(r["step"]) for r in runs)
    arrays = {c: np.array([r[c][:n] for r in runs], dtype=np.float64) for c in ("step", *CURVES)}
    arrays["run_init"] = np.array([r["init"] for r in runs], dtype=str)
    arrays["run_scale"] = np.array([r["scale"] for r in runs], dtype=str)
    arrays["run_seed"] = np.array([r["seed"] for r in runs], dtype=np.int64)
    return FigureData(arrays, main="")


def _path_length(trace, s: SelectionState) -> FigureData:
    """Per distance (rows): accuracy (mean over seeds) and input gradient (median), trained and at start."""
    from attnviz.analysis.path_length import load_study, sequential_steps, summarise

    sm = summarise(load_study())
    cols, table = [], []
    steps = sequential_steps(sm["distances"])
    for name, m in sm["models"].items():
        cols += [f"{name}_steps", f"{name}_accuracy", f"{name}_grad", f"{name}_grad_init"]
        table += [steps[name], m["accuracy_mean"], np.median(m["grad"], 0), np.median(m["grad_init"], 0)]
    return FigureData({"by_distance": np.array(table, dtype=np.float64).T}, [f"{d:g}" for d in sm["distances"]],
                      cols, "by_distance")


def _masked_lm(trace, s: SelectionState) -> FigureData:
    """Per [MASK] (rows): the shown head's attention over the tokens (columns), and its top guesses."""
    from attnviz.analysis.masked_positions import mask_rows

    rows = mask_rows(trace)
    if not rows:
        raise AttnvizError("no [MASK] in this input: the masked-lm figure has no numbers to save")
    att = np.stack([m.attention[m.head] for m in rows]).astype(np.float32)  # (masks, T)
    arrays = {"attention": att, "position": np.array([m.position for m in rows]),
              "layer_head": np.array([m.head for m in rows]),
              "guess_prob": np.array([[p for _, p in m.guesses] for m in rows], dtype=np.float32),
              "guess_word": np.array([[w for w, _ in m.guesses] for m in rows])}
    labels = [f"[MASK] {m.position} L{m.head[0]}H{m.head[1]}" for m in rows]
    return FigureData(arrays, labels, list(trace.tokens), "attention")


_DATA = {
    "masked-lm": _masked_lm,
    "scale-reason": _scale_reason,
    "matrix-z": _matrix_z,
    "scale-training": _scale_training,
    "path-length": _path_length,
    "qk-embedding": _qk_points,
    "filters-pca": _filters_pca,
    "causal-mask": _mask,
    "head-map": _head_map,
    "token-lines": _layer_probs,
    "model": _all_probs,
    "rollout": _rollout,
    "steps": _steps,
    "matrix-form": _layer_probs,
    "attention-distance": _distance,
    "token-pca": _embeddings,
    "pos-encoding": _pos_encoding,
    "pos-similarity": _embeddings,
}


def figure_data(name: str, trace, state: SelectionState) -> FigureData:
    """The arrays a figure of ``name`` shows (falls back to the selected layer's probabilities)."""
    return _DATA.get(name, _layer_probs)(trace, state)


def write_figure_data(path, data: FigureData) -> Path:
    """``.npz``: every array. ``.csv``: the main 2-D array with its row and column labels."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".npz":
        def write(tmp: str) -> None:
            with open(tmp, "wb") as fh:
                arrays = {k: np.asarray(v) for k, v in data.arrays.items()}
                if data.rows:  # the labels the CSV header carries, as plain strings (no pickles)
                    arrays["row_labels"] = np.array([str(r) for r in data.rows], dtype=str)
                if data.cols:
                    arrays["col_labels"] = np.array([str(c) for c in data.cols], dtype=str)
                np.savez_compressed(fh, **arrays)
    elif suffix == ".csv":
        main = data.arrays.get(data.main) if data.main else None
        if main is None or np.ndim(main) != 2:
            raise AttnvizError("this figure's numbers are not one table: write them as .npz instead of .csv")
        buf = io.StringIO()
        w = csv.writer(buf)
        w.writerow(["", *(data.cols or range(main.shape[1]))])
        for label, row in zip(data.rows or range(main.shape[0]), main):
            w.writerow([label, *(repr(float(x)) for x in row)])

        def write(tmp: str) -> None:
            Path(tmp).write_text(buf.getvalue(), encoding="utf-8")
    else:
        raise AttnvizError(f"cannot write data to {path.name}: use .npz or .csv")
    try:
        write_atomic(path, write)
    except OSError as exc:
        from attnviz.io.atomic import friendly_os_error

        raise AttnvizError(f"cannot write {path}: {friendly_os_error(exc)}") from None
    return path
