"""Reading an input text from a file (``--text-file``, File ▸ Open text…): bounded, UTF-8, a BOM accepted.

A long document is the point of this route (16,384 tokens of English is ~70 KB), so the bound is far above
any model's context yet small enough that a wrong file (a video, a disk image) is refused before it is read.
"""

from __future__ import annotations

import os
from pathlib import Path

from attnviz.errors import InputError

__all__ = ["read_text_file", "MAX_TEXT_FILE_BYTES"]

MAX_TEXT_FILE_BYTES = 8 * 1024 * 1024  # ~2M tokens of English: beyond every context attnviz can open


def read_text_file(path: str | os.PathLike, max_bytes: int = MAX_TEXT_FILE_BYTES) -> str:
    """The text of a UTF-8 file (a leading byte-order mark dropped), refused in one line when it is not one.

    Parameters
    ----------
    path : the file.
    max_bytes : larger files are refused without being read.

    Returns
    -------
    str : the text, with Windows line ends as they are (the tokenizer sees what the file holds).

    Raises
    ------
    InputError : missing, a directory, too large, empty, not UTF-8, or holds NUL bytes (a binary file).
    """
    p = Path(path).expanduser()
    if not p.exists():
        raise InputError(f"text file {p} does not exist")
    if p.is_dir():
        raise InputError(f"{p} is a directory, not a text file")
    try:
        with p.open("rb") as fh:
            raw = fh.read(max_bytes + 1)  # never more than the bound, whatever the file's size
    except OSError as exc:
        raise InputError(f"cannot read {p}: {exc.strerror or exc}") from None
    if len(raw) > max_bytes:
        raise InputError(f"{p.name} is larger than {max_bytes // (1024 * 1024)} MB: give a shorter text file")
    if b"\x00" in raw:
        raise InputError(f"{p.name} is not a text file (it holds NUL bytes)")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{p.name} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not text.strip():
        raise InputError(f"{p.name} has no text")
    return text
