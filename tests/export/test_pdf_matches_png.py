"""A PDF figure draws the same cells as the PNG: heatmap images go in losslessly (Qt's PDF writer JPEG-encoded
them: a 10 × 10 map came out with every masked grey cell tinted by its neighbours), and an encoder–decoder's
export opens on cross-attention as the app does."""

from __future__ import annotations

import os
import re
import zlib

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QRectF  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.selection import SelectionState  # noqa: E402


def _images(pdf: bytes) -> list[tuple[bytes, bytes]]:
    """(dictionary, stream) of every image XObject in ``pdf`` (Qt writes one dictionary per object)."""
    out = []
    for m in re.finditer(rb"<<\s*/Type /XObject\s*/Subtype /Image(.*?)>>\s*stream\r?\n", pdf, re.S):
        # the stream runs to its "endstream" (its /Length may be an indirect object)
        out.append((m.group(1), pdf[m.end():pdf.index(b"endstream", m.end())]))
    return out


def test_pdf_heatmap_is_the_exact_cells_of_the_map(qapp, tmp_path):
    from attnviz.export.batch import export_one
    from attnviz.figures.render import ExportOptions

    trace = sample_trace("decoder", T=10)
    state = SelectionState(layer=1, head=0)
    export_one("head-map", trace, state, tmp_path / "m.pdf", ExportOptions(width=960, height=540), None)
    pdf = (tmp_path / "m.pdf").read_bytes()
    images = _images(pdf)
    assert images and not any(b"DCTDecode" in head for head, _ in images)
    # the map's image: 10 × 10 pixels whose masked cells (upper triangle) are all one grey
    head, data = next((h, d) for h, d in images if b"/Width 10" in h and b"/Height 10" in h)
    raw = zlib.decompressobj().decompress(data) if b"FlateDecode" in head else data
    rgb = np.frombuffer(raw, np.uint8)[:300].reshape(10, 10, 3)
    masked = np.triu(np.ones((10, 10), bool), 1)
    assert len({tuple(c) for c in rgb[masked]}) == 1
    assert len({tuple(c) for c in rgb[~masked]}) > 10


def test_encoder_decoder_export_opens_on_cross_attention(tmp_path, capsys):
    from attnviz.cli import main
    from attnviz.io import bundled_models

    if "translate" not in bundled_models():
        pytest.skip("the bundled translate model is not built (make assets)")
    out = tmp_path / "t.csv"
    assert main(["export", "--model", "translate", "--view", "head-map", "--size", "480x320",
                 "-o", str(tmp_path / "t.png"), "--data", str(out)]) == 0
    text = out.read_text(encoding="utf-8")
    assert "→" in text  # cross-attention rows are named by the word they produced
