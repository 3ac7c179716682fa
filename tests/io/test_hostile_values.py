"""Issue 38, findings 6–12: every value read from a shared file or given to the API is checked before use.

Hang and memory cases run in a child process under a time limit (a hang fails the test instead of
stalling the suite) and report their own peak memory; nothing here asserts a duration."""

from __future__ import annotations

import json
import math
import struct
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tests._robust_models import SENTENCE, run_cli
from attnviz.errors import AttnvizError, InputError, ModelLoadError

CHILD_TIMEOUT = 240  # a hang detector, far above any real run on a busy machine (never a measured figure)


CHILD_ADDRESS_SPACE = 3 * 2**30  # torch and transformers reserve ~1 GB of address space when imported


def run_child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter under an address-space limit (a runaway allocation fails there,
    not on the shared machine); it sets ``RESULT``; its peak RSS (MB) is added."""
    limit = f"import resource\nresource.setrlimit(resource.RLIMIT_AS, ({CHILD_ADDRESS_SPACE}, {CHILD_ADDRESS_SPACE}))\n"
    wrapped = limit + textwrap.dedent(code) + textwrap.dedent("""
        import json as _j
        # VmHWM: this process's own peak (getrusage's ru_maxrss survives exec: it would report the
        # parent pytest's peak, which a whole suite run raises past any bound)
        _hwm = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM:"))
        print(_j.dumps({**RESULT, "peak_mb": _hwm / 1024}))
    """)
    try:
        out = subprocess.run([sys.executable, "-c", wrapped], capture_output=True, text=True,
                             timeout=CHILD_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        pytest.fail(f"the child did not finish within {CHILD_TIMEOUT} s (a hang)")
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def _scene(**claim):
    from attnviz.lessons.scene import scene_from_dict

    return scene_from_dict({"model": "shapes", "image": "sample:shapes-star", "claim": claim})


# -- 6. a claim label outside the classes: refused, and the probe search is bounded ------------------------
def test_a_rollout_label_outside_the_classes_is_refused_when_the_scene_is_read():
    with pytest.raises(InputError, match="label"):
        _scene(kind="rollout-pointing", label=5000000)
    with pytest.raises(InputError, match="layout"):
        _scene(kind="rollout-pointing", label=1, layout="sideways")
    assert _scene(kind="rollout-pointing", label=4, layout="offcentre").claim["label"] == 4  # control


def test_the_shapes_probe_never_loops_forever():
    got = run_child("""
        from attnviz.errors import InputError
        from attnviz.tasks.shapes import ShapesTask
        RESULT = {}
        try:
            ShapesTask._probe(5)
        except InputError as exc:
            RESULT["error"] = str(exc)
        RESULT["control"] = list(ShapesTask._probe(4)[1].shape)
    """)
    assert "class 5" in got["error"] and got["control"] == [32, 32]


# -- 7. layer counts bounded before anything is built -----------------------------------------------------
def _weights(path, tensors: dict | None = None) -> None:
    header = json.dumps(tensors or {"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 4)


@pytest.mark.parametrize("doc", [
    {"model_type": "bert", "architectures": ["BertModel"], "num_hidden_layers": 10_000_000},
    {"model_type": "t5", "architectures": ["T5Model"], "num_layers": 100_000, "num_decoder_layers": 2},
    {"model_type": "llava", "text_config": {"model_type": "llama", "num_hidden_layers": 10**7}},
    {"model_type": "bert", "architectures": ["BertModel"], "hidden_size": "768"},
])
def test_a_config_with_absurd_sizes_is_refused_before_the_skeleton(tmp_path, doc):
    (tmp_path / "config.json").write_text(json.dumps(doc))
    _weights(tmp_path / "model.safetensors")
    got = run_child(f"""
        from attnviz.errors import ModelLoadError
        from attnviz.hf.loader import load_hf_model
        RESULT = {{}}
        try:
            load_hf_model({str(tmp_path)!r}, device="cpu")
        except ModelLoadError as exc:
            RESULT["error"] = str(exc)
        import sys
        RESULT["transformers"] = "transformers" in sys.modules
    """)
    assert "config.json" in got["error"] and "\n" not in got["error"], got
    assert not got["transformers"]  # refused before transformers (and its skeleton) was even imported
    assert got["peak_mb"] < 1500, got


def test_real_sizes_pass_the_config_bounds():
    from attnviz.hf.config_bounds import check_config_sizes

    check_config_sizes({"num_hidden_layers": 80, "hidden_size": 8192, "intermediate_size": 28672,
                        "vocab_size": 128256, "max_position_embeddings": 131072, "num_key_value_heads": 8,
                        "text_config": {"num_hidden_layers": 32.0}, "head_dim": None}, "llama")


# -- 8. in-memory images bounded as files are ---------------------------------------------------------------
def test_an_in_memory_image_is_bounded_as_a_file_is():
    from PIL import Image

    from attnviz.vision.preprocess import ImageTooLargeError, load_image

    with pytest.raises(ImageTooLargeError, match="20000×20000"):
        load_image(Image.new("1", (20000, 20000)))  # 1 bit per pixel: 50 MB here, GBs once converted
    with pytest.raises(ImageTooLargeError):
        load_image(np.broadcast_to(np.uint8(0), (20000, 20000)))
    assert load_image(Image.new("RGB", (32, 32))).size == (32, 32)  # control


# -- 9. claim parameters typed and ranged --------------------------------------------------------------------
@pytest.mark.parametrize("claim, words", [
    ({"kind": "attends-to", "target": "animal", "min_share": "abc"}, "min_share"),
    ({"kind": "attends-to", "target": "animal", "min_weight": {"a": 1}}, "min_weight"),
    ({"kind": "attends-to", "target": "animal", "max_others": True}, "max_others"),
    ({"kind": "attends-to", "target": "animal", "min_share": 1.5}, "0..1"),
    ({"kind": "attends-to"}, "target"),
    ({"kind": "sinusoidal", "offsets": math.inf}, "offsets"),
    ({"kind": "sinusoidal", "offsets": "x"}, "offsets"),
    ({"kind": "sinusoidal", "offsets": 0}, "offsets"),
    ({"kind": "filters-pca", "k": 2.5}, "whole number"),
    ({"kind": "six-steps", "max_top": math.nan}, "finite"),
    ({"kind": "word-order", "with_positions": 7}, "with_positions"),
    ({"kind": "matrix-form", "min_tv": 0.3}, "takes no parameter"),
    ({"kind": "no-such-claim"}, "unknown claim kind"),
])
def test_claim_parameters_are_typed_and_ranged(claim, words):
    from attnviz.lessons.scene import scene_from_dict

    with pytest.raises(InputError, match=words):
        scene_from_dict({"model": "coref", "text": SENTENCE, "claim": claim})


def test_every_builtin_lesson_claim_passes_the_checks():
    from attnviz.lessons.lesson import lesson_names, load_lesson

    for name in lesson_names():
        assert all(s.claim for s in load_lesson(name).scenes if s.claim)  # loads: every claim checked


def test_a_non_finite_claim_parameter_in_a_lesson_is_one_line_and_exit_2(tmp_path, capsys):
    path = tmp_path / "l.json"
    path.write_text('{"format": "attnviz-lesson", "scenes": [{"title": "t", "model": "coref", "text": "it", '
                    '"claim": {"kind": "sinusoidal", "offsets": Infinity}}]}')
    code, _, err = run_cli(capsys, "lesson", "check", path)
    assert code == 2 and err.count("\n") == 1 and "offsets" in err, err


# -- 10. text is valid Unicode; a byte-order mark is accepted ---------------------------------------------
def test_a_lone_surrogate_is_refused_in_one_line(tmp_path, capsys):
    path = tmp_path / "l.json"
    path.write_text('{"format": "attnviz-lesson", "scenes": [{"title": "bad \\ud800 title", "model": "coref", '
                    '"text": "it"}]}', encoding="utf-8")
    code, _, err = run_cli(capsys, "lesson", "check", path)
    assert code == 2 and err.count("\n") == 1 and "Unicode" in err, err


def test_a_scene_with_a_byte_order_mark_is_read(tmp_path):
    from attnviz.lessons.scene import is_scene_file, load_scene

    path = tmp_path / "s.attnviz-scene.json"
    doc = {"format": "attnviz-scene", "version": 1, "model": "coref", "text": SENTENCE, "title": "é"}
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    assert load_scene(path).title == "é" and is_scene_file(path)
    path.write_bytes(b"\xff\xfe" + json.dumps(doc).encode("utf-16-le"))  # control: UTF-16 is still refused
    with pytest.raises(InputError, match="UTF-8"):
        load_scene(path)


# -- 11. weight files through the bounded reader; shards inside the folder -------------------------------------
def _folder(tmp_path, index=None, header=None):
    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertModel"]}))
    if index is not None:
        (tmp_path / "model.safetensors.index.json").write_text(index if isinstance(index, str) else json.dumps(index))
    else:
        raw = header if isinstance(header, bytes) else json.dumps(header).encode()
        (tmp_path / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * 64)
    from attnviz.hf.detect import detect_hf_folder

    return detect_hf_folder(tmp_path)


@pytest.mark.parametrize("header, words", [
    (b"[" * 100_000 + b"]" * 100_000, "nested"),
    ([1, 2, 3], "not an object"),
    ({"w": {"dtype": "F32", "shape": [1e300], "data_offsets": [0, 4]}}, "bad header entry"),
    ({"w": {"dtype": "F32", "shape": "12", "data_offsets": [0, 4]}}, "bad header entry"),
    ({"w": ["dtype"]}, "bad header entry"),
    (b'{"w": "\\ud800"}', "Unicode"),
])
def test_a_hostile_safetensors_header_is_one_line(tmp_path, header, words):
    from attnviz.hf.loader import weights_numel

    with pytest.raises(ModelLoadError, match=words) as exc:
        weights_numel(_folder(tmp_path, header=header))
    assert "\n" not in str(exc.value)


def test_a_good_safetensors_header_is_counted(tmp_path):
    from attnviz.hf.loader import weights_numel

    header = {"__metadata__": {"format": "pt"}, "w": {"dtype": "F32", "shape": [4, 4], "data_offsets": [0, 64]}}
    assert weights_numel(_folder(tmp_path, header=header)) == 16  # control


@pytest.mark.parametrize("index, words", [
    ("[" * 100_000, "nested"),
    ({"weight_map": ["a.safetensors"]}, "weight_map"),
    ([], "weight_map"),
    ({"weight_map": {"w": "../../../../etc/passwd"}}, "outside the model folder"),
    ({"weight_map": {"w": "/etc/passwd"}}, "outside the model folder"),
    ({"weight_map": {"w": 5}}, "not a file name"),
])
def test_a_hostile_shard_index_is_one_line_and_nothing_outside_is_opened(tmp_path, index, words, monkeypatch):
    from attnviz.hf import loader

    folder = _folder(tmp_path, index=index)
    opened = []
    real_open = open
    monkeypatch.setattr("builtins.open", lambda f, *a, **k: opened.append(str(f)) or real_open(f, *a, **k))
    with pytest.raises(ModelLoadError, match=words):
        loader.weights_numel(folder)
    assert not any("passwd" in f for f in opened)


def test_a_huge_shard_index_is_refused_before_it_is_read(tmp_path):
    from attnviz.hf.loader import MAX_INDEX_BYTES, weights_numel

    folder = _folder(tmp_path, index={"weight_map": {}})
    with open(tmp_path / "model.safetensors.index.json", "r+b") as fh:
        fh.truncate(MAX_INDEX_BYTES + 1)  # sparse: costs no disk
    with pytest.raises(ModelLoadError, match="more than"):
        weights_numel(folder)


# -- 12. non-finite weights named; what-if temperature bounded ---------------------------------------------
@pytest.mark.parametrize("t", [1e-308, 1e308, math.nan, -1.0, 0.0])
def test_a_temperature_that_would_draw_nan_is_refused(t):
    from attnviz.whatif import WhatIf

    with pytest.raises(InputError, match="temperature"):
        WhatIf(temperature=t)
    assert WhatIf(temperature=0.05).temperature == 0.05  # control: a sharp but drawable temperature


def test_a_scene_with_a_tiny_temperature_is_refused_when_read():
    from attnviz.lessons.scene import scene_from_dict

    with pytest.raises(InputError, match="temperature"):
        scene_from_dict({"model": "coref", "text": SENTENCE, "whatif": {"temperature": 1e-308}})


def test_the_error_classes_are_attnviz_errors():
    assert issubclass(ModelLoadError, AttnvizError) and issubclass(InputError, AttnvizError)


def test_a_non_finite_weight_is_named_in_the_one_line_notice(tmp_path, capsys):
    from safetensors.torch import load_file, save_file

    from tests._robust_models import save_text_model

    folder = save_text_model(tmp_path / "nan")
    weights = load_file(folder / "model.safetensors")
    name = "stack.blocks.0.attn.q_proj.weight"
    weights[name][0, 0] = float("nan")
    save_file(weights, folder / "model.safetensors")
    code, _, err = run_cli(capsys, "export", "--model", folder, "--text", SENTENCE, "--view", "head-map",
                           "-o", tmp_path / "f.png")
    assert code == 0 and err.count("\n") == 1 and f"weight {name} holds 1 NaN" in err, err
    clean = save_text_model(tmp_path / "clean")  # control: a finite model has no such notice
    code, _, err = run_cli(capsys, "export", "--model", clean, "--text", SENTENCE, "--view", "head-map",
                           "-o", tmp_path / "g.png")
    assert code == 0 and "NaN" not in err


def test_a_config_far_larger_than_its_weights_is_refused_before_they_load(tmp_path):
    doc = {"model_type": "bert", "architectures": ["BertModel"], "num_hidden_layers": 100, "hidden_size": 256,
           "num_attention_heads": 4, "intermediate_size": 1024, "vocab_size": 1000}
    (tmp_path / "config.json").write_text(json.dumps(doc))
    _weights(tmp_path / "model.safetensors")
    got = run_child(f"""
        import transformers
        from attnviz.errors import ModelLoadError
        from attnviz.hf.loader import load_hf_model
        RESULT = {{"loaded": False}}
        def spy(*a, **k):
            RESULT["loaded"] = True
            raise RuntimeError("from_pretrained reached")
        transformers.BertModel.from_pretrained = spy
        try:
            load_hf_model({str(tmp_path)!r}, device="cpu")
        except ModelLoadError as exc:
            RESULT["error"] = str(exc)
    """)
    assert "describes" in got["error"] and "do not match its config.json" in got["error"], got
    assert not got["loaded"]


def test_a_pickle_shard_index_is_held_to_the_same_rules(tmp_path):
    from attnviz.hf.detect import detect_hf_folder
    from attnviz.hf.loader import _check_files

    (tmp_path / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertModel"]}))
    (tmp_path / "pytorch_model.bin.index.json").write_text(json.dumps({"weight_map": {"w": "../../etc/passwd"}}))
    with pytest.raises(ModelLoadError, match="outside the model folder"):
        _check_files(detect_hf_folder(tmp_path), allow_pickle=True)
    with pytest.raises(ModelLoadError, match="pickle"):  # control: without the permission it is refused anyway
        _check_files(detect_hf_folder(tmp_path), allow_pickle=False)
