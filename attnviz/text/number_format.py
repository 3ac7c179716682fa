"""How numbers read on a slide: rounded sensibly in the cell, exact on hover, −∞ as itself."""

from __future__ import annotations

import math

import numpy as np

__all__ = ["subscript", "format_number", "exact_number", "format_vector", "dot_product_text", "product_text", "MINUS", "widest_candidates"]

MINUS = "\u2212"  # a real minus sign: "−0.42" reads better than "-0.42" on a projector


def format_number(v: float, digits: int = 2) -> str:
    """A short label: integers as integers, ``digits`` decimals below 10, fewer above, −∞ as "−∞".

    Values too small to show with ``digits`` decimals keep one significant digit (0.003, 2e-05) rather
    than rounding to a misleading 0.00.
    """
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "∞" if v > 0 else MINUS + "∞"
    a = abs(v)
    if v == 0:
        text = "0"
    elif v.is_integer() and a < 1e6:
        text = str(int(a))
    elif a >= 1e4:
        text = f"{a:.2e}"
    elif a >= 100:
        text = f"{a:.0f}"
    elif a >= 10:
        text = f"{a:.1f}"
    elif a >= 10 ** -digits:
        text = f"{a:.{digits}f}"
    else:
        text = f"{a:.1g}"
    return (MINUS if v < 0 and text != "0" else "") + text


def exact_number(v: float) -> str:
    """The value as stored (shortest repr that round-trips float64), −inf spelled out."""
    v = float(v)
    if math.isinf(v):
        return "-inf" if v < 0 else "inf"
    return repr(v)


def format_vector(values, digits: int = 2, limit: int = 8) -> str:
    """[0.42, −0.16, …] with at most ``limit`` entries shown."""
    vals = np.asarray(values, dtype=np.float64).ravel()
    shown = [format_number(x, digits) for x in vals[:limit]]
    if vals.size > limit:
        shown.append(f"… ({vals.size} in all)")
    return "[" + ", ".join(shown) + "]"


def dot_product_text(a, b, digits: int = 2, limit: int = 4) -> str:
    """The dot product written out, as a lecturer would on the board: "1×1 + 0×0 + … = 2"."""
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()

    def term(x: float, y: float, first: bool) -> str:
        fx, fy = format_number(x, digits), format_number(y, digits)
        return f"{'(' + fx + ')' if x < 0 and not first else fx}×{'(' + fy + ')' if y < 0 else fy}"

    terms = [term(x, y, i == 0) for i, (x, y) in enumerate(zip(a[:limit], b[:limit]))]
    if a.size > limit:
        terms.append(f"… ({a.size} terms)")
    return " + ".join(terms) + f" = {format_number(float(a @ b), digits)}"


def product_text(x: float, factor: float) -> str:
    """"18.1719 × 0.25 = 4.5430": a product that checks on a calculator. The operands are shown to 4
    decimals and 6 significant digits, and the result is the product of exactly those shown digits
    (rounded to 4 decimals): a rounded operand next to an unrounded result ("18.2 × 0.25 = 4.543") did not
    check. The model's own value differs from it by less than the last shown digit."""
    if not (math.isfinite(x) and math.isfinite(factor)):
        return f"{format_number(x)} × {format_number(factor)} = {format_number(x * factor)}"
    a, k = f"{x:.4f}", f"{factor:.6g}"
    r = float(a) * float(k)
    return f"{a.replace('-', MINUS)} × {k.replace('-', MINUS)} = {f'{r:.4f}'.replace('-', MINUS)}"


def widest_candidates(values: np.ndarray, n: int = 48) -> np.ndarray:
    """Values whose labels are likely the longest: the largest and smallest magnitudes of each sign,
    plus a strided sample (formatting every cell of a 64×64 matrix on each redraw is too slow)."""
    flat = values.ravel()
    if flat.size <= 4 * n:
        return flat
    order = np.argsort(np.abs(flat), kind="stable")
    return np.concatenate([flat[order[:n]], flat[order[-n:]], flat[:: max(1, flat.size // n)]])


_SUBSCRIPTS = str.maketrans("0123456789", "₀₁₂₃₄₅₆₇₈₉")


def subscript(n: int) -> str:
    """``n`` in subscript digits (Z₁₇)."""
    return str(n).translate(_SUBSCRIPTS)
