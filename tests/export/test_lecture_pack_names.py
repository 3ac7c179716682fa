"""The lecture pack lists each figure once, named and commanded by what it draws.

Token lines show every head of a layer: four "per-head" files of one layer were the same picture. Layer-free
figures (filters, position similarity) got ``_L1`` names and ``--layer/--head/--query`` options that change
nothing in them.
"""

from __future__ import annotations

import hashlib
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from attnviz.bench.traces import sample_trace  # noqa: E402


@pytest.mark.parametrize("kind", ["encoder", "vit"])
def test_every_file_is_a_different_figure_named_by_what_it_draws(qapp, tmp_path, kind):
    from attnviz.export.batch import export_lecture_pack
    from attnviz.figures.render import ExportOptions
    from attnviz.figures.registry import FIGURES

    trace = sample_trace(kind, T=8, grad=True, n_layers=2, n_heads=4)
    entries = export_lecture_pack(trace, tmp_path / "pack", ExportOptions(width=480, height=320))
    names = [e.path.name for e in entries]
    assert len(names) == len(set(names))
    digests = {}
    for e in entries:
        digest = hashlib.sha256(e.path.read_bytes()).hexdigest()
        assert digest not in digests, f"{e.path.name} is byte-identical to {digests.get(digest)}"
        digests[digest] = e.path.name
    for e in entries:
        view = e.command.split("--view ")[1].split()[0]
        drawn = FIGURES[view].selects
        for field, bit in (("layer", "_L"), ("head", "_H")):
            if field not in drawn:
                assert f"--{field} " not in e.command and bit not in e.path.stem, e
        if "query" not in drawn:
            assert "--query" not in e.command, e
    lines = [e for e in entries if e.path.name.startswith("token-lines")]
    assert lines and all("_H" not in e.path.stem and "--head" not in e.command for e in lines)
    if kind == "vit":
        flat = [e for e in entries if e.path.name.startswith(("filters-pca", "pos-similarity"))]
        assert flat and all(e.path.stem in ("filters-pca", "pos-similarity") for e in flat)
        assert all(e.command.split(" -o ")[0].endswith(f"--view {e.path.stem}") for e in flat)
    index = (tmp_path / "pack" / "index.md").read_text(encoding="utf-8")
    assert all(n in index for n in names)


def test_index_rows_name_their_head_and_steps_say_their_number_once(qapp, tmp_path):
    """Issue 36 finding 10: four index rows titled only "Who attends to whom"; "Step 1" painted as the slide title
    and again in the figure's own heading."""
    from attnviz.export.batch import _painted_title, export_lecture_pack
    from attnviz.figures.render import ExportOptions

    trace = sample_trace("encoder", T=8, grad=True, n_layers=2, n_heads=4)
    entries = export_lecture_pack(trace, tmp_path / "pack", ExportOptions(width=480, height=320))
    titles = [e.title for e in entries]
    assert len(titles) == len(set(titles)), titles
    maps = [t for t in titles if t.startswith("Who attends to whom")]
    assert len(maps) >= 2 and all(" · layer " in t and " · head " in t for t in maps)
    index = (tmp_path / "pack" / "index.md").read_text(encoding="utf-8")
    assert all(t in index for t in maps)
    assert _painted_title("Step 1: queries, keys, values", 1) == "Queries, keys, values"
    assert _painted_title("Who attends to whom", None) == "Who attends to whom"  # (control: not a step)
    # titles as the slides write them: "W_O", "√d_k" with real subscripts in both index pages (a40: raw markup)
    marked = [t for t in titles if "W_O" in t or "d_k" in t]
    page = (tmp_path / "pack" / "index.html").read_text(encoding="utf-8")
    assert marked and all("W_O" not in text and "d_k" not in text for text in (index, page))
    assert "W<sub>O</sub>" in page and "d<sub>k</sub>" in page and "W<sub>O</sub>" in index


def test_a_language_models_pack_says_no_classifier_and_leaves_out_empty_position_slides(qapp, tmp_path):
    """A Llama's pack titled its rollout "Where the classifier looked" and drew two slides that said only
    "no position encodings to draw" (a rotary model adds none to its input)."""
    from attnviz.analysis.rollout_maps import RolloutSettings, compute_rollout_maps
    from attnviz.export.batch import export_lecture_pack
    from attnviz.figures.render import ExportOptions

    lm = sample_trace("decoder", T=8, grad=True, n_layers=2, n_heads=2)
    del lm.arrays["emb.pos"]  # what a rotary model's trace holds: no position vectors
    titles = {e.path.stem.split("_")[0]: e.title for e in
              export_lecture_pack(lm, tmp_path / "lm", ExportOptions(width=480, height=320))}
    assert titles["rollout"].startswith("Where the attention flows") and "pos-encoding" not in titles
    assert "pos-similarity" not in titles
    assert "next token" in compute_rollout_maps(lm, RolloutSettings()).grad_of
    classifier = sample_trace("encoder", T=8, grad=True, n_layers=2, n_heads=2)  # control
    titles = {e.path.stem.split("_")[0]: e.title for e in
              export_lecture_pack(classifier, tmp_path / "cls", ExportOptions(width=480, height=320))}
    assert titles["rollout"].startswith("Where the classifier looked") and "pos-encoding" in titles
    assert "predicted class" in compute_rollout_maps(classifier, RolloutSettings()).grad_of
