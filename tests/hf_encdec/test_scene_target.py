"""A scene keeps an encoder–decoder's target: saved, read back, and exported with the decoder reading it."""

from __future__ import annotations

import json

import pytest

from attnviz.cli import main
from attnviz.errors import InputError
from attnviz.lessons.scene import Scene, load_scene, save_scene, scene_from_dict

from .factories import SOURCE, TARGET


def test_scene_round_trips_its_target(tmp_path):
    scene = Scene(model="translate", text="the big dog sees a small cat", target="na vidas", part="cross")
    path = tmp_path / "s.attnviz-scene.json"
    save_scene(scene, path)
    assert json.loads(path.read_text(encoding="utf-8"))["target"] == "na vidas"
    assert load_scene(path).target == "na vidas"
    plain = Scene(model="coref", text="the cat")
    assert "target" not in plain.to_dict()  # scenes without one are written as before
    with pytest.raises(InputError, match="needs a text"):
        scene_from_dict({"model": "shapes", "image": "sample:shapes-star", "target": "x"})
    with pytest.raises(InputError, match="target"):
        scene_from_dict({"model": "translate", "text": "a", "target": 3})


def test_export_of_a_scene_with_a_target(encdec_folders, tmp_path, capsys):
    scene = Scene(model=str(encdec_folders["bart"]), text=SOURCE, target=TARGET, view="head-map", part="cross",
                  layer=0, head=0)
    path = tmp_path / "s.attnviz-scene.json"
    save_scene(scene, path)
    out, data = tmp_path / "f.png", tmp_path / "f.csv"
    assert main(["export", "--scene", str(path), "-o", str(out), "--data", str(data)]) == 0
    text = data.read_text(encoding="utf-8")
    assert "→ chat" in text and "→ tapis" in text  # the rows are the target's tokens
