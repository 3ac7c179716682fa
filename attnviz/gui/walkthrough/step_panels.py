"""What each of the six steps shows, for the model's numbers (SixSteps) and the sandbox's (SandboxSteps).

``build_step(board, steps, name)`` fills a :class:`FigureBoard` with the grids of one step and returns
them by the field names of :class:`~attnviz.analysis.steps.SixSteps` ("q_i", "k", "scores", …), which is
how tests read back exactly what is on screen.
"""

from __future__ import annotations

import math

import numpy as np

from attnviz.analysis.model_labels import kv_input
from attnviz.gui.walkthrough.figure import FigureBoard
from attnviz.gui.walkthrough.matrix_grid import MatrixGrid
from attnviz.gui.walkthrough.number_format import dot_product_text, format_number, product_text
from attnviz.text.token_display import display_token

__all__ = ["step_names", "step_label", "build_step", "STEP_TITLES"]

STEP_TITLES = {
    "project": "1 · project",
    "rotate": "rotate",
    "score": "2 · score",
    "scale": "3 · scale",
    "mask": "mask",
    "softmax": "4 · softmax",
    "weight": "5 · weight",
    "sum": "6 · sum",
}


def step_label(name: str) -> str:
    """The step as the controls name it: "step 4 of 6 · softmax"; the optional mask sits between 3 and 4
    (the six steps stay six, whether or not a model masks)."""
    if name == "mask":
        return "mask · between steps 3 and 4"
    if name == "rotate":
        return "rotary positions · between steps 1 and 2"
    number, _, what = STEP_TITLES[name].partition(" · ")
    return f"step {number} of 6 · {what}"


def step_names(has_mask: bool, rotary: bool = False) -> list[str]:
    """The walkthrough's steps; the mask step only when some key is masked (causal models, padding) or a
    bias is added; the rotation only for rotary models (Llama, Qwen, Gemma …)."""
    names = ["project", "rotate", "score", "scale", "mask", "softmax", "weight", "sum"]
    return [n for n in names if (n != "mask" or has_mask) and (n != "rotate" or rotary)]


def _grid(board: FigureBoard, grids: dict, name: str, values, title: str, **kw) -> MatrixGrid:
    g = MatrixGrid(name, board.style)
    g.row_pitch = 1.0  # a line per named token: the page scrolls rather than run K's labels together
    g.set_data(values, title=title, **kw)
    grids[name] = g
    return g


def _focus_key(steps, key: int | None) -> int:
    """The key a worked example is written for: the selected one, else the most attended."""
    n = len(steps.key_tokens)
    if key is not None and 0 <= key < n:
        return key
    return int(np.argmax(steps.weights))


def _short(x: float) -> str:
    """A factor with up to four significant digits and no trailing zeros: 0.5, 0.3536, 1."""
    return f"{x:.4g}"


def _scale_note(steps) -> str:
    d_k = steps.q_i.shape[-1]
    if math.isclose(steps.scale, 1 / math.sqrt(d_k), rel_tol=1e-6):
        return (f"d_k = {d_k}, so ÷√d_k = ÷{_short(math.sqrt(d_k))} = ×{_short(steps.scale)}: "
                "dot products of d_k numbers grow like √d_k; dividing keeps the softmax from saturating")
    if steps.scale == 1.0:
        return "no scaling: the raw dot products go into the softmax, which then tends to pick a single key"
    return f"this model multiplies by its own factor {_short(steps.scale)} (1/√d_k would be " \
           f"{_short(1 / math.sqrt(d_k))})"


def _rotate_step(board, grids, steps, keys, qtok, j, col) -> None:
    """Rotary positions: q_i and every k_j turned by their own position; the score then depends on the
    positions only through j − i (checked: the 'by distance' column, from unrotated vectors)."""
    d = steps.rotary_dims
    board.add_heading("Rotary positions:  q_i and k_j turned by their positions",
                      "no position vector is added to the tokens; instead each pair of dimensions (d, d + "
                      f"{d // 2}) of the first {d} of q and k is rotated by an angle proportional to the position, "
                      "with the model's own cos/sin table"
                      + (" (q and k first pass through the model's per-head norm)" if steps.qk_norm else ""))
    board.add_row([_grid(board, grids, "q_pre_rope_i", steps.q_pre_rope_i, "q_i before", row_labels=[qtok]),
                   _grid(board, grids, "rope_cos_i", steps.rope_cos_i, f"cos (pos {steps.query})"),
                   _grid(board, grids, "rope_sin_i", steps.rope_sin_i, f"sin (pos {steps.query})"), "→",
                   _grid(board, grids, "q_i", steps.q_i, "q_i after", row_labels=[qtok])])
    board.add_row([_grid(board, grids, "k_pre_rope", steps.k_pre_rope, "K before", row_labels=keys,
                         highlight_rows=[j]), "→ turned →",
                   _grid(board, grids, "k", steps.k, "K after", row_labels=keys, highlight_rows=[j]),
                   (_grid(board, grids, "distance", col(steps.distance), "j − i", row_labels=keys), 1),
                   (_grid(board, grids, "scores_by_distance", col(steps.scores_by_distance), "q·k by distance",
                          row_labels=keys, highlight_rows=[j]), 2)])
    board.add_note("q·k by distance: the unrotated q_i times the unrotated k_j turned by the table row of the "
                   f"distance j − i alone equals the score of step 2 (max difference {steps.rotary_error:.1e}): "
                   "the score depends on where the tokens are only through how far apart they are")


def build_step(board: FigureBoard, steps, name: str, key: int | None = None,
               context: str = "", x_is: str = "LN of the residual stream in a pre-LN model") -> dict[str, MatrixGrid]:
    """Fill ``board`` with step ``name`` of ``steps`` (SixSteps or SandboxSteps); return the grids.

    ``context`` (e.g. "layer 1 · head 2") starts the line under the step's formula; ``x_is`` says what X is
    for this model (:func:`attnviz.analysis.model_labels.x_words`: RMSNorm for Llama, the stream itself
    in a post-LN model such as BERT).
    """
    board.clear()
    board.context = context
    grids: dict[str, MatrixGrid] = {}
    keys = [display_token(t) for t in steps.key_tokens]  # "Ġcat" as "cat", as every view writes it
    n_all = getattr(steps, "n_keys", None)  # a long input: the grids show a window of keys
    if n_all:
        a = steps.key_offset
        board.add_note(f"a long input: keys {a}–{a + len(keys) - 1} of {n_all:,} (around the query) are shown; "
                       f"the softmax and z_i are over all {n_all:,} keys")
    qtok = display_token(steps.query_token)
    j = _focus_key(steps, key)
    col = lambda v: np.asarray(v, dtype=np.float64)[:, None]  # noqa: E731 - (T,) → (T, 1) column
    D = steps.x_i.shape[-1]
    if name == "project":
        # a bias term only where the model has one (all-zero biases are a model without them)
        b = {n: f" + b_{n}" if getattr(steps, f"b_{n}", None) is not None and np.any(getattr(steps, f"b_{n}")) else ""
             for n in "QKV"}
        src, src_is = kv_input(steps.part)  # cross-attention: keys and values from the encoder's output
        board.add_heading(f"Step 1 · project:  q_i = x_i W_Q{b['Q']}",
                          f"and every token's key k_j = {src} W_K{b['K']} and value v_j = {src} W_V{b['V']}; "
                          f"x_i is the row of X for the query token {qtok!r} (X: what the projections read, "
                          f"{x_is}){'; ' + src_is if src_is else ''}")
        x = _grid(board, grids, "x_i", steps.x_i, f"x_i  ({qtok})", row_labels=[qtok])
        if steps.W_Q is None:
            board.add_row([x])
            board.add_note("parameter-free attention: q_i = x_i, k_j = v_j = x_j (no weight matrices)")
            k = _grid(board, grids, "k", steps.k, "K = X", row_labels=keys)
            board.add_row([k])
        else:
            # the biases on x_i's line, the other inputs of the projections (on a row of their own under K and V
            # they took the height a 1280×720 page needed to name 24 keys at 12 px: 8.9-px labels)
            biases = [(n, getattr(steps, n)) for n in ("b_Q", "b_K", "b_V")]
            biases = [(n, b) for n, b in biases if b is not None] if any(b is not None and np.any(b)
                                                                         for _, b in biases) else []
            board.add_row([(x, 4)] + [_grid(board, grids, n, b, n) for n, b in biases])
            # a rotary model turns q and k after this step (the rotary panel): here they are the products
            # themselves, as the heading writes them (the rotated ones stood under "q_i = x_i W_Q")
            rotary = getattr(steps, "rope_cos_i", None) is not None
            q, k = (steps.q_proj_i, steps.k_pre_rope) if rotary else (steps.q_i, steps.k)
            qk_norm = rotary and steps.qk_norm  # the trace's keys entering the rotation are after the head norm
            board.add_row([
                _grid(board, grids, "W_Q", steps.W_Q, "W_Q"), "→",
                (_grid(board, grids, "q_proj_i" if rotary else "q_i", q,
                       "q_i unrotated" if rotary else "q_i", row_labels=[qtok]), 2),
                _grid(board, grids, "W_K", steps.W_K, "W_K"), "→",
                (_grid(board, grids, "k_pre_rope" if rotary else "k", k,
                       ("K, head-normed" if qk_norm else "K") + (" unrotated" if rotary else ""),
                       row_labels=keys), 2),
                _grid(board, grids, "W_V", steps.W_V, "W_V"), "→",
                (_grid(board, grids, "v", steps.v, "V", row_labels=keys), 2),
            ])
        board.add_note(f"shapes: x_i 1×{D}, W {D}×{steps.q_i.shape[-1]}, K and V {len(keys)}×{steps.k.shape[-1]}")
    elif name == "score":
        board.add_heading("Step 2 · score:  s_j = q_i · k_j",
                          "how well each key matches the query: one dot product per token")
        board.add_note(f"for {keys[j]!r}:  q_i · k_j = {dot_product_text(steps.q_i, steps.k[j])}")
        board.add_row([_grid(board, grids, "q_i", steps.q_i, "q_i", row_labels=[qtok]), "•",
                       _grid(board, grids, "k", steps.k, "K", row_labels=keys, highlight_rows=[j]), "=",
                       (_grid(board, grids, "scores", col(steps.scores), "s = q_i·k_j", row_labels=keys,
                              col_labels=["score"], highlight_rows=[j]), 3)])
    elif name == "scale":
        board.add_heading(f"Step 3 · scale:  s_j × {_short(steps.scale)}", _scale_note(steps))
        board.add_note(f"for {keys[j]!r}: {product_text(float(steps.scores[j]), float(steps.scale))}"
                       "  (from the digits shown: a calculator gets the same)")
        row = [_grid(board, grids, "scores", col(steps.scores), "s", row_labels=keys, highlight_rows=[j]),
               f"× {_short(steps.scale)} =",
               _grid(board, grids, "scaled", col(steps.scaled), "s × scale", row_labels=keys, highlight_rows=[j])]
        cap = getattr(steps, "softcap", None)
        if cap:  # Gemma 2: scores squeezed smoothly into (−c, c) before the softmax
            row += [f"→ {_short(cap)}·tanh(· / {_short(cap)}) =",
                    _grid(board, grids, "capped", col(steps.capped), "soft-capped", row_labels=keys,
                          highlight_rows=[j])]
            board.add_note(f"soft-cap: this model passes the scaled scores through {_short(cap)}·tanh(s / {_short(cap)}),"
                           f" so no score leaves (−{_short(cap)}, {_short(cap)})")
        board.add_row(row)
    elif name == "mask":
        n_masked = int(np.isneginf(steps.mask).sum())
        window = getattr(steps, "sliding_window", None)
        why = "future tokens of a decoder, or padding" + (f", or keys more than {window - 1} tokens back: "
                                                          f"this layer's sliding window is {window} tokens"
                                                          if window else "")
        bias = getattr(steps, "bias", None)
        cap = getattr(steps, "softcap", None)
        before = (steps.capped, "soft-capped") if cap else (steps.scaled, "s × scale")
        board.add_heading("Mask:  s_j + " + ("B_j + " if bias is not None else "") + "M_j,   M_j = −∞ for keys the "
                          "query may not see", f"{n_masked} of {len(keys)} keys{' shown' if n_all else ''} are "
                          f"masked ({why}); "
                          "e^−∞ = 0, so the softmax gives them no weight"
                          + ("; B is the model's additive position bias (relative / ALiBi)" if bias is not None else ""))
        row = [_grid(board, grids, "scaled", col(before[0]), before[1], row_labels=keys), "+"]
        if bias is not None:
            row += [_grid(board, grids, "bias", col(bias), "B", row_labels=keys), "+"]
        board.add_row(row + [_grid(board, grids, "mask", col(steps.mask), "M", row_labels=keys), "=",
                             _grid(board, grids, "masked", col(steps.masked), "masked", row_labels=keys)])
    elif name == "rotate":
        _rotate_step(board, grids, steps, keys, qtok, j, col)
    elif name == "softmax":
        top = int(np.argmax(steps.weights))
        total = (f"the weights are positive and sum to 1 (Σ = {steps.weights.sum():.6f})" if not n_all else
                 f"the weights are positive and sum to 1 over all {n_all:,} keys; the {len(keys)} shown have "
                 f"Σ = {steps.weights.sum():.6f}")
        sink = getattr(steps, "sink", None)
        if sink is not None:  # GPT-OSS: the head's learned sink takes a share of each row's weight
            total = (f"the head's learned sink ({format_number(sink, 3)}) is one more term of the normaliser, so the "
                     f"weights sum to less than 1 (Σ = {steps.weights.sum():.6f}{' shown' if n_all else ''})")
        board.add_heading("Step 4 · softmax:  w_j = exp(s_j) / " + ("(Σ_l exp(s_l) + exp(sink))" if sink is not None
                                                                     else "Σ_l exp(s_l)"),
                          f"{total}; {keys[top]!r} gets the most{' of them' if n_all else ''}: "
                          f"{format_number(steps.weights[top], 3)}")
        # what the softmax reads: the scores after scaling (and soft-cap, bias and mask when the model has them)
        label = ("soft-capped" if getattr(steps, "softcap", None) else "scaled") + " scores"
        label += " + B" if getattr(steps, "bias", None) is not None else ""
        label += " + M" if np.any(np.asarray(steps.mask) != 0) else ""
        board.add_row([_grid(board, grids, "masked", col(steps.masked), label, row_labels=keys), "→ softmax →",
                       _grid(board, grids, "weights", col(steps.weights), "w", row_labels=keys, kind="prob",
                             highlight_rows=[j])])
    elif name == "weight":
        board.add_heading("Step 5 · weight the values:  w_j · v_j",
                          "each token's value vector, scaled by how much the query attends to it")
        # the weights keep room for their numbers beside the two wide heatmaps
        room = 4 if len(keys) <= 40 else 1  # beyond ~40 rows the numbers give way to a heatmap anyway
        board.add_row([(_grid(board, grids, "weights", col(steps.weights), "w", row_labels=keys, kind="prob"), room), "×",
                       _grid(board, grids, "v", steps.v, "V", row_labels=keys), "=",
                       _grid(board, grids, "weighted", steps.weighted, "w_j v_j", row_labels=keys,
                             highlight_rows=[j])])
    elif name == "sum":
        board.add_heading("Step 6 · sum:  z_i = Σ_j w_j v_j", "the head's output for the query token "
                          f"{qtok!r}: a weighted average of the values")
        # w_j v_j the width of the figure, its column sums under it: beside z_i and the model's z it had a third of
        # the width, its 64-column heatmap's rows (at most 2.5 cells wide) too short to name 12 keys at 12 px on a
        # 1280×720 page
        board.add_row([_grid(board, grids, "weighted", steps.weighted, "w_j v_j", row_labels=keys)])
        row = ["Σ_j ↓", _grid(board, grids, "z_i", steps.z_i, "z_i", row_labels=[qtok])]
        z_model = getattr(steps, "z_trace", None)
        if z_model is not None:
            row += ["model:", _grid(board, grids, "z_trace", z_model, "z from the model", row_labels=[qtok])]
        board.add_row(row)
        if z_model is not None:
            ran = getattr(steps, "compute_dtype", "float32")  # the sandbox's steps have no model
            board.add_note(f"recomputed here in float64 from x and the weights; the model's own z differs by at "
                           f"most {steps.max_error:.1e}"
                           + (f": the model ran in {ran}, whose rounding is ~1e-3" if ran != "float32" else ""))
    else:
        raise ValueError(f"unknown step {name!r}")
    board.finish()
    return grids
