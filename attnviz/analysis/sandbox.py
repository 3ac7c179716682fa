"""A toy self-attention the user types by hand: X, W_Q, W_K, W_V (and biases) → every step (Qt-free).

The lecture pictures, in numbers small enough to check on paper:

* projected (seed 003): Q = X W_Q + β_q, K = X W_K + β_k, V = X W_V + β_v (the β of seed 002 are optional),
  scores = Q Kᵀ, scaled = scores · scale, masked = scaled + M, P = softmax(masked) row-wise, Z = P V;
* parameter-free (seed 004): Q = K = V = X, so Z = softmax(X Xᵀ · scale) X.

:func:`parse_matrix` turns typed text into numbers and reports every problem with its row, column and
character span, so the editor can mark the very cell that is wrong. Nothing here raises on bad input;
errors are returned as :class:`CellError` lists.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

import numpy as np

from attnviz.analysis.steps import softmax

__all__ = [
    "CellError", "ParsedMatrix", "SandboxConfig", "SandboxResult", "SandboxSteps", "SandboxPreset",
    "parse_matrix", "parse_vector", "check_shapes", "compute_sandbox", "format_matrix", "make_preset",
    "PRESET_NAMES", "SEED_003_X", "MAX_SIZE",
]

MAX_SIZE = 32  # rows or columns: a sandbox is for numbers one can read on a slide
MATRICES = ("X", "W_Q", "W_K", "W_V")
BIASES = ("b_Q", "b_K", "b_V")
# seed 003's three toy inputs; the lecture shows no weight matrices, so its preset uses identities
SEED_003_X = np.array([[1, 0, 1, 0], [0, 2, 0, 2], [1, 1, 1, 1]], dtype=np.float64)

_CELL = re.compile(r"[^\s,;\[\]()]+")  # a cell is anything between separators and brackets


@dataclass(frozen=True)
class CellError:
    """One problem in a typed matrix.

    ``row``/``col`` are 0-based (None when the problem concerns a whole row or the whole matrix);
    ``span`` is (start, end) in the typed text, for highlighting; ``message`` is for the user.
    """

    matrix: str
    row: int | None
    col: int | None
    message: str
    span: tuple[int, int] | None = None


@dataclass
class ParsedMatrix:
    """The numbers of a typed matrix (None when there are errors), and the errors."""

    name: str
    values: np.ndarray | None
    errors: list[CellError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors and self.values is not None


def _rows(text: str) -> list[list[tuple[str, int, int]]]:
    """Cells (text, start, end) per row. Rows end at a newline, a ';' or a ']' closing an inner list,
    so "1 0; 0 1", one row per line and "[[1, 0], [0, 1]]" all read the same."""
    rows: list[list[tuple[str, int, int]]] = []
    start, depth = 0, 0
    bounds: list[tuple[int, int]] = []
    for i, ch in enumerate(text):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth >= 1:
                bounds.append((start, i))
                start = i + 1
        elif ch in "\n;":
            bounds.append((start, i))
            start = i + 1
    bounds.append((start, len(text)))
    for a, b in bounds:
        cells = [(m.group(), a + m.start(), a + m.end()) for m in _CELL.finditer(text[a:b])]
        if cells:
            rows.append(cells)
    return rows


def _number(cell: str) -> float:
    """float() that also reads a typographic minus and simple fractions such as 1/3."""
    s = cell.replace("\u2212", "-")
    if "/" in s:
        num, _, den = s.partition("/")
        return float(num) / float(den)
    return float(s)


def parse_matrix(text: str, name: str = "X", max_size: int = MAX_SIZE) -> ParsedMatrix:
    """Read a matrix typed as rows of numbers.

    Parameters
    ----------
    text : rows separated by newlines or ';' (or written as nested lists); cells by spaces or commas.
    name : the matrix's name, used in messages ("W_Q row 2, column 3: …").
    max_size : largest number of rows or columns accepted.

    Returns
    -------
    ParsedMatrix whose ``values`` is a (rows, cols) float64 array when ``errors`` is empty.
    Errors name the cell (row/column, 1-based in the message) and carry its character span.
    """
    rows = _rows(text or "")
    if not rows:
        empty = CellError(name, None, None, f"{name} is empty: type numbers, one row per line")
        return ParsedMatrix(name, None, [empty])
    errors: list[CellError] = []
    width = len(rows[0])
    values = np.zeros((len(rows), width))
    for r, cells in enumerate(rows):
        for c, (cell, a, b) in enumerate(cells):
            where = f"{name} row {r + 1}, column {c + 1}"
            try:
                v = _number(cell)
            except (ValueError, ZeroDivisionError):
                errors.append(CellError(name, r, c, f"{where}: {cell!r} is not a number", (a, b)))
                continue
            if math.isnan(v):
                errors.append(CellError(name, r, c, f"{where}: NaN is not allowed, type a number", (a, b)))
            elif math.isinf(v):
                errors.append(CellError(name, r, c, f"{where}: {cell!r} is infinite, type a finite number", (a, b)))
            elif c < width:
                values[r, c] = v
        if len(cells) > width:  # the surplus cells are the ones to mark
            for c in range(width, len(cells)):
                _, a, b = cells[c]
                errors.append(CellError(name, r, c, f"{name} row {r + 1} has {len(cells)} numbers but row 1 has "
                                        f"{width}: every row needs the same length", (a, b)))
        elif len(cells) < width:
            errors.append(CellError(name, r, None, f"{name} row {r + 1} has {len(cells)} numbers but row 1 has "
                                    f"{width}: every row needs the same length", (cells[0][1], cells[-1][2])))
    if len(rows) > max_size or width > max_size:
        errors.append(CellError(name, None, None, f"{name} is {len(rows)}×{width}; the sandbox takes at most "
                                f"{max_size}×{max_size}"))
    return ParsedMatrix(name, None if errors else values, errors)


def parse_vector(text: str, name: str = "b_Q", max_size: int = MAX_SIZE) -> ParsedMatrix:
    """A bias typed as one row of numbers; ``values`` is 1-D."""
    parsed = parse_matrix(text, name, max_size)
    if parsed.ok and parsed.values.shape[0] != 1:
        return ParsedMatrix(name, None, [CellError(name, 1, None, f"{name} is a vector: type one row of numbers, "
                                                   f"not {parsed.values.shape[0]} rows")])
    if parsed.ok:
        parsed.values = parsed.values[0]
    return parsed


def check_shapes(X: np.ndarray, W_Q: np.ndarray, W_K: np.ndarray, W_V: np.ndarray,
                 b_Q: np.ndarray | None = None, b_K: np.ndarray | None = None,
                 b_V: np.ndarray | None = None) -> list[CellError]:
    """Shape mismatches between X (T×D), W_Q, W_K (D×d_k), W_V (D×d_v) and the biases, as errors."""
    errors = []
    D = X.shape[1]
    for name, W in (("W_Q", W_Q), ("W_K", W_K), ("W_V", W_V)):
        if W.shape[0] != D:
            errors.append(CellError(name, None, None, f"{name} has {W.shape[0]} rows but X has {D} columns: "
                                    f"X {name} needs {name} to be {D}×something"))
    if W_Q.shape[1] != W_K.shape[1]:
        errors.append(CellError("W_K", None, None, f"W_K has {W_K.shape[1]} columns but W_Q has {W_Q.shape[1]}: "
                                "q·k needs queries and keys of the same length d_k"))
    for name, b, W in (("b_Q", b_Q, W_Q), ("b_K", b_K, W_K), ("b_V", b_V, W_V)):
        if b is not None and b.shape[0] != W.shape[1]:
            errors.append(CellError(name, None, None, f"{name} has {b.shape[0]} numbers but W{name[1:]} has "
                                    f"{W.shape[1]} columns: they must match"))
    return errors


@dataclass(frozen=True)
class SandboxConfig:
    """How the toy attention is computed.

    mode : "projected" (Q = X W_Q + β_q, …) or "parameter-free" (Q = K = V = X, seed 004).
    scale : "sqrt" (1/√d_k), "none" (1.0) or a number multiplying q·k.
    causal : add the causal mask (query i sees keys j ≤ i).
    bias : add β_q, β_k, β_v (seed 002) in projected mode.
    """

    mode: str = "projected"
    scale: str | float = "sqrt"
    causal: bool = False
    bias: bool = False

    def scale_value(self, d_k: int) -> float:
        if self.scale == "sqrt":
            return 1.0 / math.sqrt(d_k)
        if self.scale == "none":
            return 1.0
        return float(self.scale)


@dataclass
class SandboxSteps:
    """The six steps for one query, with the same field names as :class:`~attnviz.analysis.steps.SixSteps`."""

    query: int
    query_token: str
    key_tokens: list[str]
    x_i: np.ndarray
    W_Q: np.ndarray | None
    W_K: np.ndarray | None
    W_V: np.ndarray | None
    b_Q: np.ndarray | None
    b_K: np.ndarray | None
    b_V: np.ndarray | None
    q_i: np.ndarray
    k: np.ndarray
    v: np.ndarray
    scores: np.ndarray
    scale: float
    scaled: np.ndarray
    mask: np.ndarray
    masked: np.ndarray
    weights: np.ndarray
    weighted: np.ndarray
    z_i: np.ndarray


@dataclass
class SandboxResult:
    """Every intermediate of the toy attention, as float64 matrices (T tokens)."""

    config: SandboxConfig
    tokens: list[str]
    X: np.ndarray  # (T, D)
    W_Q: np.ndarray | None  # (D, d_k); None in parameter-free mode
    W_K: np.ndarray | None
    W_V: np.ndarray | None  # (D, d_v)
    b_Q: np.ndarray | None
    b_K: np.ndarray | None
    b_V: np.ndarray | None
    Q: np.ndarray  # (T, d_k)
    K: np.ndarray  # (T, d_k)
    V: np.ndarray  # (T, d_v)
    scores: np.ndarray  # (T, T) Q Kᵀ
    scale: float
    scaled: np.ndarray  # (T, T)
    mask: np.ndarray  # (T, T) 0 or -inf
    masked: np.ndarray  # (T, T)
    P: np.ndarray  # (T, T) row-wise softmax
    Z: np.ndarray  # (T, d_v) P V

    def steps(self, query: int) -> SandboxSteps:
        """The six steps of one query row (what the walkthrough panels draw)."""
        w = self.P[query]
        return SandboxSteps(
            query=query, query_token=self.tokens[query], key_tokens=list(self.tokens), x_i=self.X[query],
            W_Q=self.W_Q, W_K=self.W_K, W_V=self.W_V, b_Q=self.b_Q, b_K=self.b_K, b_V=self.b_V,
            q_i=self.Q[query], k=self.K, v=self.V, scores=self.scores[query], scale=self.scale,
            scaled=self.scaled[query], mask=self.mask[query], masked=self.masked[query], weights=w,
            weighted=w[:, None] * self.V, z_i=self.Z[query],
        )


def compute_sandbox(X, W_Q=None, W_K=None, W_V=None, config: SandboxConfig | None = None,
                    b_Q=None, b_K=None, b_V=None, tokens: list[str] | None = None) -> SandboxResult:
    """Every step of the toy self-attention.

    Parameters
    ----------
    X : (T, D) inputs, one token per row.
    W_Q, W_K : (D, d_k); W_V : (D, d_v). Ignored in parameter-free mode.
    config : mode, scale, causal mask, biases.
    b_Q, b_K, b_V : biases (used when ``config.bias``; missing ones count as zero).
    tokens : row labels (default x1, x2, …).

    Returns
    -------
    SandboxResult. Shapes must agree (see :func:`check_shapes`); a ValueError names the mismatch.
    """
    config = config or SandboxConfig()
    X = np.asarray(X, dtype=np.float64)
    T = X.shape[0]
    tokens = list(tokens) if tokens is not None else [f"x{i + 1}" for i in range(T)]
    if config.mode == "parameter-free":
        Q = K = V = X
        W_Q = W_K = W_V = b_Q = b_K = b_V = None
    elif config.mode == "projected":
        W_Q, W_K, W_V = (np.asarray(W, dtype=np.float64) for W in (W_Q, W_K, W_V))
        if config.bias:
            b_Q, b_K, b_V = (np.zeros(W.shape[1]) if b is None else np.asarray(b, dtype=np.float64)
                             for b, W in ((b_Q, W_Q), (b_K, W_K), (b_V, W_V)))
        else:
            b_Q = b_K = b_V = None
        errors = check_shapes(X, W_Q, W_K, W_V, b_Q, b_K, b_V)
        if errors:
            raise ValueError("; ".join(e.message for e in errors))
        Q, K, V = X @ W_Q, X @ W_K, X @ W_V  # (T, d_k), (T, d_k), (T, d_v)
        if config.bias:
            Q, K, V = Q + b_Q, K + b_K, V + b_V
    else:
        raise ValueError(f"mode {config.mode!r} must be 'projected' or 'parameter-free'")
    scores = Q @ K.T  # (T, T)
    scale = config.scale_value(Q.shape[1])
    scaled = scores * scale
    mask = np.zeros((T, T))
    if config.causal:
        mask[np.triu_indices(T, 1)] = -np.inf  # query i may see keys j <= i
    masked = scaled + mask
    P = softmax(masked)
    return SandboxResult(config=config, tokens=tokens, X=X, W_Q=W_Q, W_K=W_K, W_V=W_V, b_Q=b_Q, b_K=b_K,
                         b_V=b_V, Q=Q, K=K, V=V, scores=scores, scale=scale, scaled=scaled, mask=mask,
                         masked=masked, P=P, Z=P @ V)


def format_matrix(values, digits: int = 4) -> str:
    """Text for the sandbox editors: one row per line, integers without decimals."""
    a = np.atleast_2d(np.asarray(values, dtype=np.float64))

    def cell(v: float) -> str:
        return str(int(v)) if float(v).is_integer() and abs(v) < 1e15 else f"{v:.{digits}g}"

    return "\n".join("  ".join(cell(v) for v in row) for row in a)


PRESET_NAMES = ("seed 003 inputs", "identity weights", "random", "parameter-free")


@dataclass
class SandboxPreset:
    X: np.ndarray
    W_Q: np.ndarray
    W_K: np.ndarray
    W_V: np.ndarray
    b_Q: np.ndarray
    b_K: np.ndarray
    b_V: np.ndarray
    config: SandboxConfig


def make_preset(name: str, seed: int = 0, X: np.ndarray | None = None, d_k: int = 3) -> SandboxPreset:
    """A ready-made sandbox.

    "seed 003 inputs": the lecture's three inputs [1,0,1,0], [0,2,0,2], [1,1,1,1] with identity weights
    (the lecture gives no weight matrices). "identity weights": keep ``X`` (default: those inputs),
    W = I. "random": 3×4 inputs and 4×``d_k`` weights drawn from ``seed``, rounded to one decimal so they
    can be read aloud. "parameter-free": those inputs with Softmax(X Xᵀ) X and no scaling (seed 004).
    """
    if name not in PRESET_NAMES:
        raise ValueError(f"unknown preset {name!r}; choose one of {', '.join(PRESET_NAMES)}")
    if name == "random":
        rng = np.random.default_rng(seed)
        X = np.round(rng.normal(0, 1, (3, 4)), 1)
        W_Q, W_K, W_V = (np.round(rng.normal(0, 1, (4, d_k)), 1) for _ in range(3))
        b = [np.round(rng.normal(0, 0.5, d_k), 1) for _ in range(3)]
        return SandboxPreset(X, W_Q, W_K, W_V, *b, SandboxConfig())
    if name != "identity weights" or X is None:
        X = SEED_003_X.copy()
    eye = np.eye(X.shape[1])
    zero = np.zeros(X.shape[1])
    config = SandboxConfig(mode="parameter-free", scale="none") if name == "parameter-free" else SandboxConfig()
    return SandboxPreset(np.asarray(X, dtype=np.float64), eye, eye.copy(), eye.copy(), zero, zero.copy(),
                         zero.copy(), config)
