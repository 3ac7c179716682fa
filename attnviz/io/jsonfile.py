"""The one way attnviz reads a JSON file it did not write itself: bounded in size and in nesting.

Scenes, lessons, model configs and tokenizer files are shared between people, so they are untrusted:
a file of ``[`` × 100000 must be one line of error, not a RecursionError, and a 5 GB file must be refused
before it is read. Dependency-free (the leaf layer); callers choose the error class they raise.
"""

from __future__ import annotations

import json
from pathlib import Path

from attnviz.errors import AttnvizError

__all__ = ["read_json_file", "parse_json_text", "check_json_depth", "check_json_text", "JsonLimitError", "MAX_DEPTH"]

MAX_DEPTH = 64  # attnviz files nest 5 deep; Hugging Face configs a few more


class JsonLimitError(AttnvizError):
    """A JSON file that is unreadable, too big, too deep or not JSON (one line naming the file)."""


def check_json_depth(doc, limit: int = MAX_DEPTH) -> None:
    """Raise :class:`JsonLimitError` when ``doc`` nests deeper than ``limit`` (iterative: no recursion)."""
    stack = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            raise JsonLimitError(f"nested more than {limit} levels deep")
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)


def check_json_text(doc) -> None:
    """Raise :class:`JsonLimitError` when a key or string in ``doc`` is not valid Unicode (a lone surrogate
    such as ``"\\ud800"`` parses, then breaks every print and write later). Iterative: no recursion."""
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, str) and not node.isascii():
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise JsonLimitError("holds text that is not valid Unicode (a lone surrogate \\ud800–\\udfff)") from None


def _keep_constant(name: str) -> float:
    # NaN / Infinity are not JSON, but Python writes them; read them so range checks can name the field
    return float(name.replace("Infinity", "inf"))


def parse_json_text(text: str, where: str, max_depth: int = MAX_DEPTH, error=JsonLimitError):
    """Parse ``text`` (from ``where``, for the message) with the nesting limit; ``error(message)`` on failure."""
    try:
        doc = json.loads(text, parse_constant=_keep_constant)
    except RecursionError:
        raise error(f"cannot read {where}: nested more than {max_depth} levels deep") from None
    except ValueError as exc:  # JSONDecodeError; also int() of a 5000-digit number
        raise error(f"cannot read {where}: not valid JSON ({str(exc).splitlines()[0]})") from None
    try:
        check_json_depth(doc, max_depth)
        check_json_text(doc)
    except JsonLimitError as exc:
        raise error(f"cannot read {where}: {exc}") from None
    return doc


def read_json_file(path, max_bytes: int, max_depth: int = MAX_DEPTH, what: str = "file", error=JsonLimitError):
    """Parse the JSON file ``path`` of at most ``max_bytes`` nesting at most ``max_depth`` levels.

    ``what`` names the file in messages ("scene file", "config file"); ``error(message)`` makes the
    exception raised (default :class:`JsonLimitError`), so each caller keeps its own error class.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise error(f"cannot read {path}: {size:,} bytes is more than a {what} may hold ({max_bytes:,})")
        with open(path, "rb") as fh:
            raw = fh.read(size + 1)  # not max_bytes: read(n) sets n bytes aside first; the file may grow
        if len(raw) > max_bytes:
            raise error(f"cannot read {path}: more than a {what} may hold ({max_bytes:,} bytes)")
        text = raw.decode("utf-8-sig")  # a byte-order mark (Windows Notepad writes one) is accepted
    except FileNotFoundError:
        raise error(f"{what} {path} does not exist") from None
    except IsADirectoryError:
        raise error(f"{path} is a folder, not a {what}") from None
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise error(f"cannot read {path}: not UTF-8 text") from None
    return parse_json_text(text, str(path), max_depth, error)
