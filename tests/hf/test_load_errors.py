"""Bad folders give one clear ModelLoadError line; nothing is downloaded; pickles are refused by default."""

from __future__ import annotations

import json
import shutil
import socket
import sys

import pytest

from attnviz.errors import ModelLoadError
from attnviz.hf.detect import detect_hf_folder, is_hf_folder

from .factories import hf, save_quietly, trace_of


def _copy(hf_folders, name, tmp_path):
    return shutil.copytree(hf_folders[name], tmp_path / name)


def _edit_config(folder, **changes):
    cfg = folder / "config.json"
    doc = json.loads(cfg.read_text(encoding="utf-8"))
    doc.update(changes)
    cfg.write_text(json.dumps(doc), encoding="utf-8")


def _load(folder, **kw):
    from attnviz.hf.loader import load_hf_model

    return load_hf_model(folder, device="cpu", **kw)


def test_detect_tells_hf_folders_from_attnviz_checkpoints(hf_folders, tmp_path):
    found = detect_hf_folder(hf_folders["gpt2"])
    assert found.architecture == "GPT2LMHeadModel" and found.family.name == "GPT-2"
    assert found.safetensors.name == "model.safetensors" and found.pickle is None
    assert detect_hf_folder(hf_folders["llama"]).family is None  # readable, no per-family facts needed
    ours = tmp_path / "ours"
    ours.mkdir()
    (ours / "config.json").write_text(json.dumps({"format": 1, "model": {"kind": "encoder"}}), encoding="utf-8")
    assert not is_hf_folder(ours) and not is_hf_folder(tmp_path / "absent") and not is_hf_folder(tmp_path)


def test_without_transformers_the_message_says_how_to_install(tmp_path, monkeypatch):
    import torch
    from safetensors.torch import save_file

    folder = tmp_path / "bert"  # made without transformers, so this test runs where it is missing
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert", "architectures": ["BertForMaskedLM"]}),
                                        encoding="utf-8")
    save_file({"w": torch.zeros(2)}, str(folder / "model.safetensors"))
    assert is_hf_folder(folder)
    monkeypatch.setitem(sys.modules, "transformers", None)  # as if the optional extra were not installed
    with pytest.raises(ModelLoadError, match=r"needs the optional transformers package: pip install 'attnviz\[hf\]'"):
        _load(folder)


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("attnviz tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_nothing_touches_the_network(hf_folders, no_network):
    loaded = _load(hf_folders["distilbert"])
    trace, _ = trace_of(loaded)
    assert trace.n_layers == 2


def test_missing_weights(hf_folders, tmp_path):
    folder = _copy(hf_folders, "bert", tmp_path)
    (folder / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError, match="has config.json but no model.safetensors"):
        _load(folder)


def test_missing_tokenizer(hf_folders, tmp_path):
    folder = _copy(hf_folders, "bert", tmp_path)
    (folder / "tokenizer.json").unlink()
    with pytest.raises(ModelLoadError, match="has no tokenizer files"):
        _load(folder)


def test_pickled_weights_are_refused_unless_allowed(hf_folders, tmp_path, no_network):
    import torch
    from safetensors.torch import load_file

    folder = _copy(hf_folders, "bert", tmp_path)  # the same weights, stored the old way (a pickle)
    torch.save(load_file(str(folder / "model.safetensors")), folder / "pytorch_model.bin")
    (folder / "model.safetensors").unlink()
    with pytest.raises(ModelLoadError, match="pytorch_model.bin is a pickle.*refuses it"):
        _load(folder)
    loaded = _load(folder, allow_pickle=True)  # the restricted unpickler (weights_only=True)
    trace, _ = trace_of(loaded)
    assert trace.meta["qkv_available"]


@pytest.mark.parametrize("changes,match", [
    ({"architectures": ["BertForNoSuchThing"]}, "unsupported architecture 'BertForNoSuchThing'"),
    ({"model_type": "no-such-model", "architectures": []}, "unsupported architecture in"),
])
def test_unsupported_architecture(changes, match, hf_folders, tmp_path):
    folder = _copy(hf_folders, "bert", tmp_path)
    _edit_config(folder, **changes)
    with pytest.raises(ModelLoadError, match=match):
        _load(folder)


def test_models_without_attention_are_refused(tmp_path):
    tf = hf()
    resnet = tmp_path / "resnet"
    tf.ResNetForImageClassification(tf.ResNetConfig(embedding_size=8, hidden_sizes=[8, 8], depths=[1, 1])) \
        .save_pretrained(str(resnet))
    with pytest.raises(ModelLoadError, match="ResNetForImageClassification has no attention layers"):
        _load(resnet)
    mamba = tmp_path / "mamba"
    save_quietly(tf.MambaForCausalLM(tf.MambaConfig(vocab_size=40, hidden_size=16, num_hidden_layers=1,
                                                    state_size=4)), mamba)
    with pytest.raises(ModelLoadError, match=r"^MambaForCausalLM has no attention layers \(a convolutional, "
                                             r"recurrent or state-space model\): attnviz shows attention$"):
        _load(mamba)
    t5 = tmp_path / "t5"
    tf.T5ForConditionalGeneration(tf.T5Config(vocab_size=40, d_model=16, d_ff=32, d_kv=4, num_layers=1,
                                              num_heads=2)).save_pretrained(str(t5))
    # encoder–decoders open (tests/hf_encdec); this folder lacks a tokenizer, which is said in one line
    with pytest.raises(ModelLoadError, match="has no tokenizer files"):
        _load(t5)


@pytest.mark.parametrize("changes,match", [
    ({"num_hidden_layers": 3}, r"do not match its config.json \(\d+ tensors; missing bert.encoder.layer.2"),
    ({"hidden_size": 64, "intermediate_size": 64},
     r"do not match its config.json .*bert.embeddings.LayerNorm.bias \(32,\) in the file, \(64,\) in config"),
])
def test_config_and_weights_that_disagree(changes, match, hf_folders, tmp_path):
    folder = _copy(hf_folders, "bert", tmp_path)
    _edit_config(folder, **changes)
    with pytest.raises(ModelLoadError, match=match):
        _load(folder)


def test_truncated_weights_file(hf_folders, tmp_path):
    folder = _copy(hf_folders, "bert", tmp_path)
    weights = folder / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])
    with pytest.raises(ModelLoadError, match="model.safetensors is truncated"):
        _load(folder)


def test_model_larger_than_free_memory(hf_folders, monkeypatch):
    from attnviz.hf import loader

    monkeypatch.setattr(loader, "available_memory", lambda: 100_000_000)  # 0.1 GB free
    with pytest.raises(ModelLoadError, match=r"needs about 0\.3 GB of memory but only 0\.1 GB are free"):
        _load(hf_folders["bert"])


def test_custom_code_and_tensorflow_only_folders(hf_folders, tmp_path):
    folder = _copy(hf_folders, "bert", tmp_path)
    _edit_config(folder, auto_map={"AutoModel": "modeling_x.XModel"})
    with pytest.raises(ModelLoadError, match="never runs"):
        _load(folder)
    _edit_config(folder, auto_map=None)
    (folder / "model.safetensors").rename(folder / "tf_model.h5")
    with pytest.raises(ModelLoadError, match="holds only tf_model.h5"):
        _load(folder)


def test_loaded_model_fits_the_rest_of_attnviz(hf_loaded):
    loaded = hf_loaded["roberta"]
    cfg = loaded.config
    shape = (cfg.kind, cfg.n_layers, cfg.n_heads, cfg.d_model, cfg.head_dim, cfg.norm)
    assert shape == ("encoder", 2, 4, 32, 8, "post")
    assert cfg.head == "mlm" and loaded.task is None and loaded.name == "roberta" and loaded.n_params > 0
    assert loaded.info["family"] == "RoBERTa" and loaded.info["source"] == "huggingface"
    vit = hf_loaded["vit"].config
    assert (vit.kind, vit.grid, vit.image_size, vit.patch_size) == ("vit", (4, 4), 16, 4)
    assert hf_loaded["vit"].tokenizer is None and hf_loaded["gpt2"].config.causal


def test_a_model_too_large_for_the_machine_is_refused_from_its_config(tmp_path):
    """The config promises ~100 B parameters: refused before anything is allocated (the skeleton is built on
    torch's meta device), although the weights file itself is tiny."""
    import torch
    from safetensors.torch import save_file

    tf = hf()
    folder = tmp_path / "huge"
    folder.mkdir()
    tf.LlamaConfig(vocab_size=32000, hidden_size=16384, intermediate_size=53248, num_hidden_layers=30,
                   num_attention_heads=128, num_key_value_heads=8,
                   architectures=["LlamaForCausalLM"]).save_pretrained(str(folder))
    save_file({"lm_head.weight": torch.zeros(2, 2)}, str(folder / "model.safetensors"))
    with pytest.raises(ModelLoadError, match=r"^huge needs about \d+\.\d GB of memory but only .* are free"):
        _load(folder)
