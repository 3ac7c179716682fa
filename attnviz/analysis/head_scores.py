"""Scores that say what kind of head a head is, accumulated over a whole data set.

Pure numpy on batches of attention probabilities ``(B, H, T_q, T_k)`` with padding masks, so the
same code scores ten inputs or ten thousand: the runner (``attnviz.runtime.batch_scores``) feeds one
batch at a time and only running sums, counts, the top inputs per head and the mean pattern are kept.

Every score is first computed per input (the mean over that input's eligible query rows) and then
averaged over the inputs where it is defined, so a long input counts as much as a short one and the
value shown next to an input in "where it fires most" is on the same scale as the head's score.

Definitions, for a query row i of one input and head (keys j; ``A`` the attention probabilities):

``previous_token``
    A[i, i-1], over rows i ≥ 1 (TransformerLens' previous-token score). A head that always looks
    exactly one token back scores 1.
``duplicate_token``
    Σ A[i, j] over earlier positions j < i holding the same token as i, over rows that have one.
``induction``
    Σ A[i, j] over positions j ≤ i whose previous token is the token at i (j-1 < i, ids[j-1] = ids[i]),
    i.e. "the token after the previous occurrence", over rows that have one. The runner measures it
    on repeated random sequences, where only an induction head can score high.
``first_token``
    A[i, 0], over rows i ≥ 1: the share of attention on the first token (the "attention sink"). Row
    0 is left out because a causal row 0 can only look at itself.
``entropy``
    -Σ_j A[i, j] log A[i, j] in nats, over every valid row (0: one key; log T: uniform).
``distance``
    Σ_j A[i, j] d(i, j) over every valid row; d is |i - j| in tokens for text, the distance between
    patch centres in pixels for images (CLS row and column left out, the rest renormalised, as in
    :func:`attnviz.analysis.distance.mean_attention_distance`).
``gradient_share``
    classifiers: Σ_{i,j} |∂y/∂A[i, j] · A[i, j]| of this head divided by the same sum over every head
    of every layer, y the predicted class's logit (Chefer et al.'s gradient × attention); each input's
    shares sum to 1 over the heads.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["SCORES", "SCORE_LABELS", "score_label", "per_input_scores", "row_scores", "gradient_attribution", "HeadScoreAccumulator",
           "HeadScores"]

SCORES = ("previous_token", "duplicate_token", "induction", "first_token", "entropy", "distance",
          "gradient_share")
SCORE_LABELS = {
    "previous_token": "previous-token score",
    "duplicate_token": "duplicate-token score",
    "induction": "induction score",
    "first_token": "first-token (sink) share",
    "entropy": "mean entropy (nats)",
    "distance": "mean attention distance",
    "gradient_share": "share of gradient attribution",
}


def score_label(name: str, meta: dict | None = None) -> str:
    """What a score of a result with ``meta`` measures, for a label: the induction column of a result with no
    repeated-random-sequence probe (a Hugging Face model, the current input alone) is the repeat-induction
    pattern on the inputs' own repeats (rep-ind), not the induction score; a vision model's previous-token
    score is the previous patch's in reading order."""
    if name == "induction" and meta is not None and not meta.get("n_repeated"):
        return "repeat-induction pattern (rep-ind)"
    if name == "previous_token" and meta is not None and meta.get("kind") == "vit":
        # a ViT's tokens are [CLS] and patches read row by row: A[i, i-1] is the patch before in that order (the
        # last of the row above for a row's first patch, [CLS] for the first)
        return "previous-patch score (reading order)"
    return SCORE_LABELS[name]


def _rowmean(values: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Mean of ``values`` (B, H, T) over the rows where ``rows`` (B, T) is True; NaN where none."""
    n = rows.sum(-1).astype(np.float64)  # (B,)
    total = (values * rows[:, None, :]).sum(-1)  # (B, H)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = total / n[:, None]
    out[n == 0] = np.nan
    return out


def per_input_scores(probs, q_valid, k_valid=None, ids=None, distances=None, spatial=None,
                     wanted=("previous_token", "duplicate_token", "induction", "first_token", "entropy",
                             "distance")) -> dict[str, np.ndarray]:
    """Each input's score for each head, ``{name: (B, H)}`` (NaN where an input has no eligible row).

    Parameters
    ----------
    probs : (B, H, T_q, T_k) attention probabilities; padded keys carry zero weight.
    q_valid : (B, T_q) bool, True at real (not padding) query positions.
    k_valid : (B, T_k) bool for the keys (default: ``q_valid``, self-attention).
    ids : (B, T) token ids of a self-attention input (duplicate-token and induction need them).
    distances : (T_q, T_k) distance between positions (default |i - j|).
    spatial : (T,) bool, positions that have a place for ``distance`` (default: all; False for CLS).
    wanted : which scores; the ones that need a square self-attention map or ids are skipped otherwise.
    """
    A = np.asarray(probs, dtype=np.float64)
    Tq, Tk = A.shape[2:]
    rows = row_scores(A, np.arange(Tq), q_valid, k_valid, ids, distances, spatial, wanted,
                      square=Tq == Tk and k_valid is None)
    return {name: _rowmean(values, eligible) for name, (values, eligible) in rows.items()}


def row_scores(A, rows, q_valid, k_valid=None, ids=None, distances=None, spatial=None,
               wanted=("previous_token", "duplicate_token", "induction", "first_token", "entropy", "distance"),
               square: bool = True) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Every score's value on each query row of a block, and which rows it is defined on.

    The one definition of the scores (module docstring): :func:`per_input_scores` reads a whole map as one
    block, :mod:`attnviz.analysis.trace_head_scores` streams a long input's rows block by block; an input's
    score is the sum of ``values`` over its eligible rows divided by their number, whatever the blocks.

    Parameters
    ----------
    A : (B, H, r, T_k) float64 probabilities of the query rows ``rows``.
    rows : (r,) the absolute positions of those query rows.
    q_valid : (B, T_q) bool over every query position; ``k_valid`` (B, T_k) (default ``q_valid``).
    ids, distances, spatial, wanted : as :func:`per_input_scores` (``distances`` (T_q, T_k) whole).
    square : a self-attention map (queries and keys are the same positions): the scores about positions.

    Returns
    -------
    ``{name: (values (B, H, r), eligible (B, r) bool)}``.
    """
    B, H, r, Tk = A.shape
    rows = np.asarray(rows, dtype=np.intp)
    qv_all = np.asarray(q_valid, dtype=bool)
    kv = qv_all if k_valid is None else np.asarray(k_valid, dtype=bool)
    qv = qv_all[:, rows]  # (B, r)
    later = qv & (rows >= 1)[None, :]  # rows i >= 1
    out: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    if square and "previous_token" in wanted:
        sub = np.zeros((B, H, r))
        has = rows >= 1
        sub[:, :, has] = A[:, :, np.flatnonzero(has), rows[has] - 1]  # A[i, i-1]
        out["previous_token"] = (sub, later)
    if "first_token" in wanted:
        out["first_token"] = (A[:, :, :, 0], later)
    if "entropy" in wanted:
        with np.errstate(divide="ignore", invalid="ignore"):
            plogp = np.where(A > 0, A * np.log(np.where(A > 0, A, 1.0)), 0.0)
        out["entropy"] = (-plogp.sum(-1), qv)
    if square and "distance" in wanted:
        D = np.abs(rows[:, None] - np.arange(Tk)[None, :]).astype(np.float64) if distances is None \
            else np.asarray(distances, dtype=np.float64)[rows]  # (r, Tk)
        place = np.ones(Tk, dtype=bool) if spatial is None else np.asarray(spatial, dtype=bool)
        W = A * place[None, None, None, :]  # drop keys without a place (CLS), renormalise the rest
        mass = W.sum(-1)  # (B, H, r)
        with np.errstate(invalid="ignore", divide="ignore"):
            dist = (W * D[None, None]).sum(-1) / mass
        out["distance"] = (np.nan_to_num(dist), qv & place[rows][None, :] & (mass.min(1) > 0))
    if square and ids is not None and ({"duplicate_token", "induction"} & set(wanted)):
        ids = np.asarray(ids)
        # (B, r, Tk): key j holds the query's token
        pair = (ids[:, rows][:, :, None] == ids[:, None, :]) & qv[:, :, None] & kv[:, None, :]
        earlier = np.arange(Tk)[None, :] < rows[:, None]  # (r, Tk): j < i
        if "duplicate_token" in wanted:
            dup = pair & earlier[None]
            out["duplicate_token"] = ((A * dup[:, None]).sum(-1), dup.any(-1))
        if "induction" in wanted:
            # key j is "after a previous occurrence of the query's token": ids[j-1] == ids[i], j-1 < i
            ind = np.zeros_like(pair)
            ind[:, :, 1:] = pair[:, :, :-1] & earlier[None, :, :-1] & kv[:, None, 1:]
            out["induction"] = ((A * ind[:, None]).sum(-1), ind.any(-1))
    return out


def gradient_attribution(probs, grads) -> np.ndarray:
    """Σ over (query, key) of |gradient × attention| per input and head: (B, H, Tq, Tk) × 2 → (B, H)."""
    return np.abs(np.asarray(grads, dtype=np.float64) * np.asarray(probs, dtype=np.float64)).sum((-2, -1))


@dataclass
class HeadScores:
    """What :class:`HeadScoreAccumulator` found over a data set.

    ``scores[part][name]`` is (L, H) (NaN: not defined for this model or data), ``top[part][name]`` the
    (L, H, K) indices of the inputs where the head scored highest (-1: none) with ``top_values`` beside
    them, ``patterns[part]`` the (L, H, T, T) mean attention over the inputs that reach each cell
    (first ``pattern_size`` positions; NaN where no input does), ``inputs`` the kept inputs by index
    (only those in some top list), ``counts[part][name]`` how many inputs each score averages.
    """

    n_inputs: int
    scores: dict[str, dict[str, np.ndarray]]
    counts: dict[str, dict[str, np.ndarray]]
    top: dict[str, dict[str, np.ndarray]]
    top_values: dict[str, dict[str, np.ndarray]]
    patterns: dict[str, np.ndarray]
    inputs: dict[int, object] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)

    @property
    def parts(self) -> list[str]:
        return list(self.scores)

    def score_names(self, part: str = "self") -> list[str]:
        """The scores defined for at least one head of ``part``, in :data:`SCORES` order."""
        table = self.scores.get(part, {})
        return [n for n in SCORES if n in table and np.isfinite(table[n]).any()]

    def to_json(self) -> dict:
        """``{"n_inputs": N, "heads": [{"layer", "head", "part", "scores": {...}}, ...]}`` (null: undefined)."""
        heads = []
        for part, table in self.scores.items():
            L, H = next(iter(table.values())).shape
            for layer in range(L):
                for head in range(H):
                    vals = {}
                    for name in SCORES:  # every score named; null where it is not defined
                        v = table[name][layer, head] if name in table else np.nan
                        vals[name] = round(float(v), 6) if np.isfinite(v) else None
                    heads.append({"layer": layer, "head": head, "part": part, "scores": vals})
        return {"n_inputs": int(self.n_inputs), **{k: v for k, v in self.meta.items() if k != "inputs"},
                "heads": heads}


class HeadScoreAccumulator:
    """Running sums of per-input head scores, the top inputs per head, and the mean pattern.

    Memory does not grow with the number of inputs: per part and score an (L, H) sum and count and
    an (L, H, K) top list; per part an (L, H, P, P) pattern sum with P ≤ ``pattern_size``; and the
    inputs currently in some top list.
    """

    def __init__(self, layers: dict[str, tuple[int, int]], top_k: int = 8, pattern_size: int = 128):
        self.layers = dict(layers)  # part -> (n_layers, n_heads)
        self.top_k = int(top_k)
        self.pattern_size = int(pattern_size)
        self.n_inputs = 0
        self._sum: dict[str, dict[str, np.ndarray]] = {p: {} for p in self.layers}
        self._count: dict[str, dict[str, np.ndarray]] = {p: {} for p in self.layers}
        self._topv: dict[str, dict[str, np.ndarray]] = {p: {} for p in self.layers}
        self._topi: dict[str, dict[str, np.ndarray]] = {p: {} for p in self.layers}
        self._pat: dict[str, np.ndarray | None] = {p: None for p in self.layers}
        self._patn: dict[str, np.ndarray | None] = {p: None for p in self.layers}
        self._inputs: dict[int, object] = {}

    def _tables(self, part: str, name: str):
        if name not in self._sum[part]:
            L, H = self.layers[part]
            self._sum[part][name] = np.zeros((L, H))
            self._count[part][name] = np.zeros((L, H), dtype=np.int64)
            self._topv[part][name] = np.full((L, H, self.top_k), -np.inf)
            self._topi[part][name] = np.full((L, H, self.top_k), -1, dtype=np.int64)
        return self._sum[part][name], self._count[part][name], self._topv[part][name], self._topi[part][name]

    def add_scores(self, part: str, layer: int, name: str, values: np.ndarray, first_index: int) -> None:
        """Add per-input values (B, H) of one score for inputs ``first_index … first_index + B - 1``."""
        values = np.asarray(values, dtype=np.float64)
        s, c, tv, ti = self._tables(part, name)
        ok = np.isfinite(values)
        s[layer] += np.where(ok, values, 0.0).sum(0)
        c[layer] += ok.sum(0)
        B = values.shape[0]
        cand_v = np.concatenate([tv[layer], np.where(ok, values, -np.inf).T], axis=1)  # (H, K + B)
        cand_i = np.concatenate([ti[layer], np.broadcast_to(first_index + np.arange(B), (values.shape[1], B))], 1)
        order = np.argsort(-cand_v, axis=1, kind="stable")[:, : self.top_k]
        tv[layer] = np.take_along_axis(cand_v, order, 1)
        ti[layer] = np.where(np.isfinite(tv[layer]), np.take_along_axis(cand_i, order, 1), -1)

    def add_pattern(self, part: str, layer: int, probs: np.ndarray, q_valid, k_valid=None) -> None:
        """Add a batch's attention (B, H, Tq, Tk) to the mean pattern, counting only real cells."""
        P = self.pattern_size
        A = np.asarray(probs)[:, :, :P, :P].astype(np.float64)
        qv = np.asarray(q_valid, dtype=bool)[:, :P]
        kv = qv if k_valid is None else np.asarray(k_valid, dtype=bool)[:, :P]
        cell = qv[:, :, None] & kv[:, None, :]  # (B, Tq, Tk)
        L, H = self.layers[part]
        if self._pat[part] is None:
            self._pat[part] = np.zeros((L, H, 0, 0))
            self._patn[part] = np.zeros((0, 0))
        tq, tk = A.shape[2], A.shape[3]
        self._grow(part, tq, tk)
        self._pat[part][layer, :, :tq, :tk] += (A * cell[:, None]).sum(0)
        if layer == 0:  # the cell counts are the same for every layer of a part
            self._patn[part][:tq, :tk] += cell.sum(0)

    def _grow(self, part: str, tq: int, tk: int) -> None:
        pat, n = self._pat[part], self._patn[part]
        if pat.shape[2] >= tq and pat.shape[3] >= tk:
            return
        new = np.zeros(pat.shape[:2] + (max(tq, pat.shape[2]), max(tk, pat.shape[3])))
        new[:, :, : pat.shape[2], : pat.shape[3]] = pat
        newn = np.zeros(new.shape[2:])
        newn[: n.shape[0], : n.shape[1]] = n
        self._pat[part], self._patn[part] = new, newn

    def add_inputs(self, first_index: int, items: list, count: bool = True) -> None:
        """Remember the batch's inputs (texts, paths or arrays); :meth:`prune` drops those no top list needs.

        ``count=False`` for probe inputs that are not part of the data set (the repeated sequences
        the induction score is measured on): they can be shown but do not add to ``n_inputs``.
        """
        for i, item in enumerate(items):
            self._inputs[first_index + i] = item
        if count:
            self.n_inputs = max(self.n_inputs, first_index + len(items))

    def prune(self) -> None:
        """Forget the inputs that are in no top list (keeps memory bounded)."""
        keep = set()
        for part in self._topi.values():
            for arr in part.values():
                keep.update(int(i) for i in np.unique(arr) if i >= 0)
        for i in [i for i in self._inputs if i not in keep]:
            del self._inputs[i]

    def result(self, meta: dict | None = None) -> HeadScores:
        """The scores so far (means over the inputs where each is defined)."""
        self.prune()
        scores, counts, patterns = {}, {}, {}
        for part in self.layers:
            scores[part], counts[part] = {}, {}
            for name in SCORES:
                if name not in self._sum[part]:
                    continue
                s, c = self._sum[part][name], self._count[part][name]
                with np.errstate(invalid="ignore", divide="ignore"):
                    scores[part][name] = np.where(c > 0, s / np.maximum(c, 1), np.nan)
                counts[part][name] = c.copy()
            if self._pat[part] is not None:
                n = self._patn[part]
                with np.errstate(invalid="ignore", divide="ignore"):
                    patterns[part] = np.where(n > 0, self._pat[part] / np.maximum(n, 1), np.nan)
        return HeadScores(
            n_inputs=self.n_inputs, scores=scores, counts=counts,
            top={p: {k: v.copy() for k, v in t.items()} for p, t in self._topi.items()},
            top_values={p: {k: v.copy() for k, v in t.items()} for p, t in self._topv.items()},
            patterns=patterns, inputs=dict(self._inputs), meta=dict(meta or {}))
