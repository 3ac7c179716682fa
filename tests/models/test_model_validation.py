"""Issue 14, items 1, 2 and 9: a model folder is validated completely before anything is built.

Every bad folder is one line on stderr, exit 2, no output file; the error's ``details`` hold the full list.
"""

from __future__ import annotations

import json

import pytest

from tests._robust_models import SENTENCE, edited_copy, run_cli, save_text_model, save_vit_model
from attnviz.errors import ModelLoadError
from attnviz.models import validate
from attnviz.models.checkpoint import load_checkpoint


@pytest.fixture(scope="module")
def text_dir(tmp_path_factory):
    return save_text_model(tmp_path_factory.mktemp("v") / "tiny")


@pytest.fixture(scope="module")
def vit_dir(tmp_path_factory):
    return save_vit_model(tmp_path_factory.mktemp("v") / "vit")


def _model(**kv):
    return lambda d: d["model"].update(kv)


TEXT_CASES = {
    # item 1: configs that used to pass validation and end in tracebacks
    "max_len changed (shape)": (_model(max_len=32), "embed.pos.table"),
    "n_layers as a word": (_model(n_layers="three"), "n_layers must be a whole number"),
    "d_model changed (shape)": (_model(d_model=32), "do not match its config.json"),
    "vocab_size + 1": (lambda d: d["model"].update(vocab_size=d["model"]["vocab_size"] + 1), "embedding has"),
    "mlp_ratio changed (shape)": (_model(mlp_ratio=4.0), "mlp.fc1.weight"),
    "mlp_ratio negative": (_model(mlp_ratio=-2.0), "mlp_ratio"),
    "n_kv_heads negative": (_model(n_kv_heads=-2), "n_kv_heads=-2"),
    "dropout 2": (_model(dropout=2), "dropout=2"),
    "model null": (lambda d: d.update(model=None), "'model' section is null"),
    "model a list": (lambda d: d.update(model=[1, 2]), "'model' section is list"),
    "tokenizer missing": (lambda d: d.pop("tokenizer") and None, "has no tokenizer"),
    "empty vocabulary": (lambda d: d["tokenizer"].update(vocab=[]), "vocabulary is empty"),
    "vocabulary without [UNK]": (lambda d: d["tokenizer"]["vocab"].remove("[UNK]"), "lacks [UNK]"),
    "tokenizer kind": (lambda d: d["tokenizer"].update(kind="sentencepiece"), "not char, word or bpe"),
    "broken bpe": (lambda d: d["tokenizer"].update(kind="bpe", bpe_json="{"), "invalid BPE tokenizer"),
    "task of another kind": (lambda d: d.update(task="digits"), "trains a vit model"),
    "labels vs classes": (lambda d: d.update(labels=["a", "b", "c"]), "3 labels"),
    "history not lists": (lambda d: d.update(history={"step": 1}), "history"),
    "unknown key": (_model(n_experts=4), "unknown keys n_experts"),
    "bool as int": (_model(n_heads=True), "n_heads must be a whole number"),
    "newer format": (lambda d: d.update(format=2), "format 2"),
    # item 2: huge sizes are refused before anything is allocated
    "d_model 1e9": (_model(d_model=10**9), "d_model=1,000,000,000 is outside"),
    "vocab_size 1e12": (_model(vocab_size=10**12), "vocab_size=1,000,000,000,000 is outside"),
    "d_head 1e8": (_model(d_head=10**8), "d_head=100,000,000"),
    "max_len 1e12": (_model(max_len=10**12), "max_len="),
    "n_layers 1e9": (_model(n_layers=10**9), "n_layers=1,000,000,000"),
    "n_layers 1e9 as float": (_model(n_layers=1e9), "n_layers=1e+09 is outside"),
    # item 9: a NaN scale is refused, not traced into NaN probabilities
    "attn_scale NaN": (_model(attn_scale=float("nan")), "attn_scale=nan"),
    "attn_scale inf": (_model(attn_scale=float("inf")), "attn_scale=inf"),
    "d_model 1e400": (lambda d: json.dumps(d).replace('"d_model": 16', '"d_model": 1e400'),
                      "d_model must be a whole number"),
    # JSON bounds
    "deeply nested": (lambda d: "[" * 100_000 + "]" * 100_000, "nested more than"),
    "nested object": (lambda d: d.update(extra=json.loads("[" * 70 + "]" * 70)), "nested more than"),
    "not JSON": (lambda d: "{model: 1", "not valid JSON"),
    "a JSON list": (lambda d: [1, 2, 3], "not an object"),
}


@pytest.mark.parametrize("name", list(TEXT_CASES))
def test_bad_text_config_is_one_line_exit_2_and_no_output(name, text_dir, tmp_path, capsys):
    edit, expected = TEXT_CASES[name]
    bad = edited_copy(text_dir, tmp_path / "bad", edit)
    out = tmp_path / "t.npz"
    code, stdout, err = run_cli(capsys, "trace", "--model", bad, "--text", SENTENCE, "-o", out, "--device", "cpu")
    assert code == 2 and stdout == ""
    assert err.startswith("attnviz: error: ") and err.count("\n") == 1, err
    assert expected in err
    assert not out.exists()


VIT_CASES = {
    "patch_size 0": (_model(patch_size=0), "patch_size=0"),
    "patch larger than image": (_model(patch_size=16), "patch_size=16"),
    "in_chans 1e6": (_model(in_chans=10**6), "in_chans"),
    "image_size changed (shape)": (_model(image_size=16), "embed.pos.table"),
    "task of another kind": (lambda d: d.update(task="coref"), "trains an encoder model"),
}


@pytest.mark.parametrize("name", list(VIT_CASES))
def test_bad_vit_config_is_one_line(name, vit_dir, tmp_path, capsys):
    from tests._robust_models import write_image

    edit, expected = VIT_CASES[name]
    bad = edited_copy(vit_dir, tmp_path / "bad", edit)
    out = tmp_path / "t.npz"
    code, _, err = run_cli(capsys, "trace", "--model", bad, "--image", write_image(tmp_path / "i.png"), "-o", out)
    assert code == 2 and err.count("\n") == 1 and expected in err, err
    assert not out.exists()


def test_weight_shape_mismatch_is_one_line_with_every_weight_in_details(text_dir, tmp_path):
    bad = edited_copy(text_dir, tmp_path / "bad", _model(d_model=32, n_heads=2))
    with pytest.raises(ModelLoadError) as info:
        load_checkpoint(bad, device="cpu")
    assert "\n" not in str(info.value) and "more)" in str(info.value)
    details = info.value.details.splitlines()
    assert len(details) > 10 and all("implies" in line for line in details)  # every weight, one per line


def test_truncated_weights_are_refused_from_the_header(text_dir, tmp_path):
    bad = edited_copy(text_dir, tmp_path / "bad", lambda d: None)
    data = (bad / "model.safetensors").read_bytes()
    (bad / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelLoadError, match="truncated"):
        load_checkpoint(bad, device="cpu")
    (bad / "model.safetensors").write_bytes(b"\xff" * 8 + b"junk")
    with pytest.raises(ModelLoadError, match="not a readable safetensors file"):
        load_checkpoint(bad, device="cpu")


def test_memory_estimate_is_checked_before_allocating(text_dir, monkeypatch):
    monkeypatch.setattr(validate, "available_memory", lambda: 1000)  # 1 kB free
    with pytest.raises(ModelLoadError, match="of memory is available"):
        load_checkpoint(text_dir, device="cpu")


def test_the_meta_build_gives_exactly_the_shapes_of_the_real_model(text_dir):
    loaded = load_checkpoint(text_dir, device="cpu")
    real = {k: tuple(v.shape) for k, v in loaded.model.state_dict().items()}
    assert validate.expected_shapes(loaded.config) == real


@pytest.mark.parametrize("kind", ["encoder", "decoder", "encoder-decoder", "vit"])
def test_the_cpu_shape_build_matches_the_meta_build_and_draws_no_random_numbers(kind):
    import importlib

    import torch

    from attnviz.models.config import ModelConfig

    expected_shapes_module = importlib.import_module("attnviz.models.expected_shapes")
    cfg = ModelConfig(kind=kind, vocab_size=11, tgt_vocab_size=13 if kind == "encoder-decoder" else 0,
                      n_layers=2, n_heads=2, d_model=16, max_len=12, pos="learned", image_size=16, patch_size=4)
    expected_shapes_module._SHAPES_CACHE.clear()
    meta = validate.expected_shapes(cfg)
    expected_shapes_module._SHAPES_CACHE.clear()
    state = torch.random.get_rng_state()
    cpu = validate.expected_shapes(cfg, n_params_hint=1000)
    assert torch.equal(torch.random.get_rng_state(), state)  # a training run in another thread keeps its draws
    assert cpu == meta and len(cpu) > 5


def test_a_big_json_file_is_refused_by_size(tmp_path):
    f = tmp_path / "config.json"
    f.write_text(json.dumps({"model": {}, "pad": "x" * 2000}))
    with pytest.raises(ModelLoadError, match="more than a config file may hold"):
        validate.read_json_bounded(f, max_bytes=1000)


def test_hf_detection_survives_a_deeply_nested_config(tmp_path):
    from attnviz.hf.detect import is_hf_folder

    (tmp_path / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    assert is_hf_folder(tmp_path) is False


def test_bundled_models_pass_validation():
    from attnviz.io import bundled_models
    from attnviz.models.checkpoint import resolve_model_path

    for name in bundled_models():
        doc, cfg, header = validate.validate_model_folder(resolve_model_path(name))
        assert header  # weights checked against the config


def test_loading_a_bundled_model_does_not_import_torch_dynamo():
    # torch._dynamo costs ~2 s to import and two threads importing it at once have failed; reading shapes
    # must not pull it in (a fresh interpreter: this suite's own process may have imported it already)
    import subprocess
    import sys

    code = ("import sys; from attnviz.runtime.pipeline import load_model, run_trace; "
            "m = load_model('coref'); run_trace(m, text=\"The animal didn't cross the street because it was "
            "too tired\", grad=True); "
            "print('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"
