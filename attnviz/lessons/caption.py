"""Captions that name a claim's measured values: a small fixed placeholder language, not Python's format.

Scene and lesson files are shared between lecturers, so a caption is untrusted text. ``str.format`` over
the values would let it reach attributes (``{query.__class__.__mro__}``), index into values, or ask for a
field two billion characters wide. This engine knows exactly two forms:

``{name}``        the value as it is (numbers in a short form: ``0.8123`` → ``0.8123``, ``200`` → ``200``)
``{name:SPEC}``   SPEC = ``[<>^][WIDTH][,][.PRECISION][TYPE]``, TYPE one of ``f % e g d s``;
                  WIDTH ≤ 40, PRECISION ≤ 6 (``.2f``, ``.0%``, ``.1%``, ``.0e``, ``g``, ``d``, ``>8.3f``)

``{{`` and ``}}`` are literal braces. Anything else in braces (attributes, indexes, conversions such as
``!r``, positional fields, nested fields, an unknown name) is refused with one line naming the field.
Qt-free and dependency-free.
"""

from __future__ import annotations

import math
import numbers
import re

from attnviz.errors import InputError

__all__ = ["fill_caption", "check_caption", "MAX_WIDTH", "MAX_PRECISION", "MAX_CAPTION_CHARS"]

MAX_WIDTH = 40
MAX_PRECISION = 6
MAX_CAPTION_CHARS = 2000  # a caption is a sentence or two under a figure
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
_SPEC = re.compile(r"(?P<align>[<>^])?(?P<width>\d+)?(?P<comma>,)?(?:\.(?P<prec>\d{1,3}))?(?P<type>[fe%gds])?")
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|[{}]")


def _parse(template: str):
    """Yield ("text", str) and ("field", name, spec) parts; InputError (one line) for anything else."""
    if len(template) > MAX_CAPTION_CHARS:
        raise InputError(f"a caption of {len(template):,} characters is longer than {MAX_CAPTION_CHARS:,}")
    pos = 0
    for m in _TOKEN.finditer(template):
        if m.start() > pos:
            yield ("text", template[pos:m.start()])
        tok = m.group(0)
        if tok in ("{{", "}}"):
            yield ("text", tok[0])
        elif tok in ("{", "}"):
            raise InputError(f"caption has an unmatched {tok!r} at character {m.start() + 1} (write {tok * 2} "
                             "for a brace)")
        else:
            body = m.group(1)
            name, _, spec = body.partition(":")
            if not _NAME.fullmatch(name) or ("!" in body):
                raise InputError(f"caption field {_short(tok)} is not {{name}} or {{name:SPEC}} (no attributes, "
                                 "indexes or conversions)")
            yield ("field", name, _check_spec(spec, tok) if ":" in body else None)
        pos = m.end()
    if pos < len(template):
        yield ("text", template[pos:])


def _short(text: str) -> str:
    return repr(text if len(text) <= 40 else text[:37] + "…")


def _check_spec(spec: str, tok: str) -> dict:
    m = _SPEC.fullmatch(spec)
    if not m:
        raise InputError(f"caption field {_short(tok)}: format {_short(spec)} is not "
                         "[<>^][WIDTH][,][.PRECISION][f e % g d s]")
    digits, prec = (m["width"] or "0").lstrip("0") or "0", m["prec"]
    if len(digits) > 2 or int(digits) > MAX_WIDTH:  # compared as text first: no int() of a 4000-digit width
        shown = digits if len(digits) <= 12 else digits[:12] + "…"
        raise InputError(f"caption field {_short(tok)}: width {shown} is more than {MAX_WIDTH}")
    if prec is not None and int(prec) > MAX_PRECISION:
        raise InputError(f"caption field {_short(tok)}: precision {prec} is more than {MAX_PRECISION}")
    if prec is not None and m["type"] in ("d", "s"):
        raise InputError(f"caption field {_short(tok)}: {m['type']!r} takes no precision")
    return m.groupdict()


def check_caption(template: str, names=None) -> None:
    """Raise InputError when ``template`` is not a valid caption (or names a value not in ``names``)."""
    for part in _parse(template):
        if part[0] == "field" and names is not None and part[1] not in names:
            raise InputError(_unknown(part[1], names))


def _unknown(name: str, names) -> str:
    known = sorted(names)
    # one readable line however many values a claim measures
    known = ", ".join(known[:24]) + (f", … ({len(known) - 24} more)" if len(known) > 24 else "") if known else "none"
    return f"caption names {{{name}}}, a value the claim does not measure (it measures: {known})"


def _plain(value) -> str:
    if isinstance(value, float) and math.isfinite(value):
        return f"{value:.4g}"
    return str(value)


def _format(value, spec: dict, name: str) -> str:
    kind = spec["type"]
    if value is None:
        text = "—"  # a value the claim could not measure (e.g. no held-out data for this kind)
    elif isinstance(value, bool) or isinstance(value, str):
        if kind not in (None, "s"):
            raise InputError(f"caption field {{{name}:…}} formats {_short(str(value))} as a number")
        text = str(value)
    elif isinstance(value, numbers.Integral) and kind in (None, "d", "s") or (
            kind == "d" and isinstance(value, numbers.Real) and float(value).is_integer()):
        text = format(int(value), "," if spec["comma"] else "")
    elif isinstance(value, numbers.Real):
        number = float(value)
        if kind in (None, "s"):
            text = _plain(number)
        elif kind == "d":
            raise InputError(f"caption field {{{name}:d}}: {number:g} is not a whole number")
        else:
            prec = "" if spec["prec"] is None else f".{spec['prec']}"
            text = format(number, f"{',' if spec['comma'] else ''}{prec}{kind}")
    else:
        text = str(value)[:200]
    width = int((spec["width"] or "0").lstrip("0") or 0)
    if len(text) < width:
        align = spec["align"] or ("<" if isinstance(value, str) else ">")
        text = {"<": text.ljust, ">": text.rjust, "^": text.center}[align](width)
    return text


_NO_SPEC = {"align": None, "width": None, "comma": None, "prec": None, "type": None}


def fill_caption(template: str, values: dict) -> str:
    """The caption with every ``{name}`` / ``{name:SPEC}`` replaced by its value (InputError otherwise)."""
    out = []
    for part in _parse(template):
        if part[0] == "text":
            out.append(part[1])
            continue
        _, name, spec = part
        if name not in values:
            raise InputError(_unknown(name, values))
        out.append(_format(values[name], spec or _NO_SPEC, name))
    return "".join(out)
