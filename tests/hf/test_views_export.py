"""Every figure attnviz exports renders from an HF trace (off-screen), and the lecture pack is written."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from .factories import FAMILY_IDS, trace_of  # noqa: E402

pytest.importorskip("pytestqt")

# DeiT puts two tokens ([CLS], [DIST]) before its patches; the rollout view assumes one and raises
# (reshape of 17 values to 4×4). Left out until the views read meta["prefix_tokens"] (lead's report).
KNOWN_GAPS: set = set()


def _figures(trace):
    from attnviz.figures.registry import FIGURES

    return [name for name, spec in FIGURES.items() if trace.kind in spec.kinds]


def _settle(qapp) -> None:
    """Let the views' background worker finish and their deleteLater run while the application lives."""
    from attnviz.gui.workers import views_lane

    views_lane().submit(None, lambda: None).result(timeout=60)  # one worker: everything queued before is done
    qapp.processEvents()


def _export(loaded, path, qapp):
    from attnviz.analysis.rollout import compute_rollout
    from attnviz.export.batch import export_one
    from attnviz.figures.render import ExportOptions
    from attnviz.selection import SelectionState

    trace, prep = trace_of(loaded, grad=True)
    trace.arrays["rollout"] = compute_rollout(trace.all_probs()).astype(np.float32)  # as run_trace adds it
    if prep.image is not None:
        trace.arrays["image"] = prep.image
    try:
        return [export_one(f, trace, SelectionState(layer=1, head=2, query=3), path / f"{f}.png",
                           ExportOptions(width=480, height=320)) for f in _figures(trace)
                if (loaded.name, f) not in KNOWN_GAPS]
    finally:
        _settle(qapp)


@pytest.mark.parametrize("name", FAMILY_IDS)
def test_every_figure_renders_for_every_family(name, hf_loaded, qapp, tmp_path):
    from PIL import Image

    written = _export(hf_loaded[name], tmp_path, qapp)
    assert len(written) >= 9
    for out in written:
        with Image.open(out) as im:
            assert im.size == (480, 320)
            assert len(np.unique(np.asarray(im.convert("L")))) > 8, f"{out.name} looks blank"


def test_lecture_pack_of_an_hf_model(hf_loaded, qapp, tmp_path):
    from attnviz.export.batch import export_lecture_pack
    from attnviz.figures.render import ExportOptions

    trace, _ = trace_of(hf_loaded["gpt2"], grad=True)
    try:
        entries = export_lecture_pack(trace, tmp_path / "pack", ExportOptions(width=400, height=300))
    finally:
        _settle(qapp)
    assert len(entries) >= 10 and (tmp_path / "pack" / "index.md").is_file()
    assert all(e.path.stat().st_size > 1000 for e in entries)
    lines = [e for e in entries if e.path.name.startswith("token-lines")]
    # token lines of the pack's query only (the "it" → "animal" picture), said in title and command
    assert lines and all("--query" in e.command and e.title.startswith("Where “") for e in lines)


def test_token_strip_shows_the_models_ids_and_bpe_merges(hf_loaded):
    from attnviz.text.token_strip import build_strip

    loaded = hf_loaded["gpt2"]
    trace, prep = trace_of(loaded)
    strip = build_strip(loaded.tokenizer, trace.tokens)
    assert strip.ids == prep.inputs["input_ids"][0].tolist()
    cat = strip.merges[trace.tokens.index("Ġcat")]
    assert cat and cat[-1].replace("+", "") == "Ġcat"  # the last merge builds the whole token
    bert = hf_loaded["bert"]
    trace, prep = trace_of(bert)
    assert build_strip(bert.tokenizer, trace.tokens).ids == prep.inputs["input_ids"][0].tolist()
