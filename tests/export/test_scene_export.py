"""`attnviz export --scene/--lesson` and the comparison views: files, captions with measured numbers, data."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from PIL import Image

from attnviz.cli import main
from attnviz.lessons.scene import Scene, save_scene

TIRED = "The animal didn't cross the street because it was too tired"


def _svg_text(path) -> str:
    return " ".join("".join(e.itertext()) for e in ET.parse(path).getroot().iter() if e.tag.endswith("text"))


def test_scene_export_draws_its_title_and_the_measured_caption(tmp_path, capsys):
    scene = Scene(model="coref", text=TIRED, view="token-lines", title="It finds the animal",
                  caption="'{query}' → '{target}' {here:.2f}", claim={"kind": "attends-to", "target": "animal"})
    path = save_scene(scene, tmp_path / "s.json")
    assert main(["export", "--scene", str(path), "-o", str(tmp_path / "s.svg")]) == 0
    text = _svg_text(tmp_path / "s.svg")
    assert "It finds the animal" in text
    value = re.search(r"'it' → 'animal' (\d\.\d\d)", text)
    assert value is not None  # the caption's number, measured now
    from attnviz.runtime import load_model, run_trace

    trace = run_trace(load_model("coref", device="cpu"), text=TIRED)
    f = trace.meta["focus"]
    assert float(value[1]) == pytest.approx(float(trace[f"L{f['layer']}.probs"][f["head"], 8, 2]), abs=0.006)


def test_mask_view_shows_the_whole_matrix_and_writes_its_data(tmp_path):
    out, data = tmp_path / "m.png", tmp_path / "m.npz"
    assert main(["export", "--model", "induction", "--text", "dragonflydragonfly", "--view", "causal-mask",
                 "--layer", "1", "-o", str(out), "--data", str(data)]) == 0
    with Image.open(out) as im:
        assert im.size[0] > 0
    with np.load(data) as z:
        mask = z["L1.mask"]
        T = mask.shape[0]
        assert mask.shape == (T, T) and np.isneginf(mask[np.triu_indices(T, 1)]).all()
        assert (mask[np.tril_indices(T)] == 0).all()


def test_permutation_view_data_is_equivariant_without_positions(tmp_path):
    data = tmp_path / "p.npz"
    assert main(["export", "--model", "order-sentiment-nopos", "--text", "the food was good, not bad at all",
                 "--view", "permutation", "-o", str(tmp_path / "p.png"), "--data", str(data)]) == 0
    with np.load(data) as z:
        assert float(z["max_difference"]) < 1e-5
        P, perm = z["probs_expected"], z["perm"]
        assert np.abs(P - 1.0 / P.shape[-1]).max() > 0.05  # not flat
        np.testing.assert_allclose(z["probs_permuted"], P, atol=1e-5)
        assert sorted(perm.tolist()) == list(range(P.shape[-1])) and (perm != np.arange(len(perm))).any()


def test_whatif_view_needs_a_switch_and_writes_before_and_after(tmp_path, capsys):
    base = ["export", "--model", "coref", "--text", TIRED, "--view", "what-if", "-o", str(tmp_path / "w.png")]
    assert main(base) == 2
    assert "needs a switch" in capsys.readouterr().err
    assert main(base + ["--score-scale", "none", "--layer", "1", "--data", str(tmp_path / "w.npz")]) == 0
    with np.load(tmp_path / "w.npz") as z:
        before, after = z["probs_before"], z["probs_after"]
        np.testing.assert_allclose(before.sum(-1), 1.0, atol=1e-5)
        assert float(z["entropy_after"]) <= float(z["entropy_before"]) + 1e-9  # no 1/√d_k: sharper


def test_lesson_deck_has_one_pdf_page_per_scene_and_bad_outputs_exit_2(tmp_path, capsys):
    lesson = {"format": "attnviz-lesson", "version": 1, "name": "two", "title": "Two", "scenes": [
        {"title": "Mask", "model": "induction", "text": "dragonflydragonfly", "view": "causal-mask", "layer": 1},
        {"title": "Heads, concat · W_O", "model": "coref", "text": TIRED, "view": "model"},
    ]}
    path = tmp_path / "two.json"
    path.write_text(json.dumps(lesson), encoding="utf-8")
    deck = tmp_path / "deck.pdf"
    assert main(["export", "--lesson", str(path), "-o", str(deck)]) == 0
    raw = deck.read_bytes()
    assert raw.startswith(b"%PDF") and len(re.findall(rb"/Type\s*/Page[^s]", raw)) == 2
    assert main(["export", "--lesson", str(path), "-o", str(tmp_path / "deck.png")]) == 2
    assert main(["export", "--lesson", str(path), "--lecture-pack", str(tmp_path / "pack")]) == 0
    assert (tmp_path / "pack" / "index.html").is_file() and len(list((tmp_path / "pack").glob("*.png"))) == 2
    for index in ("index.html", "index.md"):  # titles as the slides draw them (a40: raw "W_O")
        text = (tmp_path / "pack" / index).read_text(encoding="utf-8")
        assert "W<sub>O</sub>" in text and "W_O" not in text
    assert main(["export", "--scene", str(tmp_path / "missing.json"), "-o", str(tmp_path / "x.png")]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) >= 1


def test_a_scene_reproduces_the_figure_of_the_same_exploration(tmp_path):
    args = ["--model", "coref", "--text", TIRED, "--view", "head-map", "--layer", "0", "--head", "2", "--query", "8",
            "--colormap", "magma", "--size", "800x500"]
    assert main(["export", *args, "-o", str(tmp_path / "direct.png")]) == 0
    scene = Scene(model="coref", text=TIRED, view="head-map", layer=0, head=2, query=8, colormap="magma")
    path = save_scene(scene, tmp_path / "s.json")
    assert main(["export", "--scene", str(path), "--size", "800x500", "-o", str(tmp_path / "scene.png")]) == 0
    with Image.open(tmp_path / "direct.png") as a, Image.open(tmp_path / "scene.png") as b:
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_cli_export_defaults_to_the_focus_head(tmp_path):

    data = tmp_path / "hm.npz"
    assert main(["export", "--model", "coref", "--text", TIRED, "--view", "head-map", "-o", str(tmp_path / "hm.png"),
                 "--data", str(data)]) == 0
    from attnviz.runtime import load_model

    m = load_model("coref", device="cpu").info["metrics"]
    with np.load(data) as z:
        assert f"L{m['focus_layer']}.probs[{m['focus_head']}]" in z.files
