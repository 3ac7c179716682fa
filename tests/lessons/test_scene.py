"""Scenes: the JSON round trip, validation of hand-written files, and recognising a scene file."""

from __future__ import annotations

import json

import pytest

from attnviz.errors import InputError
from attnviz.lessons.scene import Scene, is_scene_file, load_scene, save_scene, scene_from_dict


def _full() -> Scene:
    return Scene(model="coref", text="The animal didn't cross the street because it was too tired", view="steps",
                 part="self", layer=1, head=2, query=8, step="softmax",
                 whatif={"scale": "none", "temperature": 2.0, "causal": False, "positional": False, "ablate": [[0, 1]]},
                 colormap="magma", theme="dark", title="t", caption="c {here}")


def test_save_and_load_round_trip(tmp_path):
    scene = _full()
    path = save_scene(scene, tmp_path / "s.json")
    back = load_scene(path)
    assert back == scene
    assert back.base_dir == str(tmp_path.resolve())
    assert is_scene_file(path)
    w = back.whatif_switches()
    assert (w.scale, w.temperature, w.causal, w.positional, w.ablate) == ("none", 2.0, False, False, frozenset({(0, 1)}))


def test_defaults_need_only_a_model_and_an_input():
    s = scene_from_dict({"model": "coref", "text": "it"})
    assert (s.view, s.layer, s.head, s.query, s.whatif_switches().is_default) == ("head-map", None, None, None, True)


@pytest.mark.parametrize("bad, message", [
    ({"text": "x"}, "names no model"),
    ({"model": "coref"}, "exactly one input"),
    ({"model": "coref", "text": "x", "image": "a.png"}, "exactly one input"),
    ({"model": "coref", "text": "x", "layer": -1}, "≥ 0"),
    ({"model": "coref", "text": "x", "layer": "1"}, "wrong type"),
    ({"model": "coref", "text": "x", "colour": "red"}, "unknown scene key"),
    ({"model": "coref", "text": "x", "part": "both"}, "part"),
    ({"model": "coref", "text": "x", "whatif": {"scale": "half"}}, "scale"),
    ({"model": "coref", "text": "x", "whatif": {"mask": False}}, "unknown what-if"),
    ({"model": "coref", "text": "x", "format": "attnviz-lesson"}, "not an attnviz scene"),
    ({"model": "coref", "text": "x", "version": 9}, "version"),
])
def test_bad_scenes_name_the_problem(bad, message):
    with pytest.raises(InputError, match=message):
        scene_from_dict(bad)


def test_unreadable_files_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="does not exist"):
        load_scene(tmp_path / "missing.json")
    broken = tmp_path / "b.json"
    broken.write_text("{not json", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        load_scene(broken)
    assert not is_scene_file(broken)
    other = tmp_path / "o.json"
    other.write_text(json.dumps({"format": "something-else"}), encoding="utf-8")
    assert not is_scene_file(other) and not is_scene_file(tmp_path)


def test_relative_images_are_read_next_to_the_scene(tmp_path):
    (tmp_path / "sub").mkdir()
    save_scene(Scene(model="shapes", image="pic.png"), tmp_path / "sub" / "s.json")
    assert load_scene(tmp_path / "sub" / "s.json").image_source() == str(tmp_path.resolve() / "sub" / "pic.png")
    assert Scene(model="shapes", image="sample:shapes-star").image_source().endswith("shapes-star.png")
    with pytest.raises(InputError, match="sample image"):
        Scene(model="shapes", image="sample:nope").image_source()


def test_attnviz_with_a_scene_file_opens_it_in_the_app(tmp_path):
    from attnviz.cli import build_parser, route
    from attnviz.commands.gui import split_scene_paths

    path = save_scene(Scene(model="coref", text="it"), tmp_path / "s.json")
    assert route([str(path)]) == ["gui", str(path)]  # a file: the app opens it
    other = tmp_path / "o.json"
    other.write_text("{}", encoding="utf-8")
    # the scene opens as a scene; a JSON file that is not one is left to the other handlers
    assert split_scene_paths([str(other), str(path)]) == (str(path), [str(other)])
    assert split_scene_paths([str(other)]) == (None, [str(other)])
    assert route(["lesson", "list"]) == ["lesson", "list"]
    assert build_parser().parse_args(["gui", "--scene", str(path)]).scene == str(path)
