"""Every private transformers name attnviz reads (attnviz.hf.private_names) exists and means what attnviz reads it
for, at both ends of the supported versions: the installed transformers here, and the lowest that pyproject.toml
declares (5.18) in a subprocess; each test fails on a transformers that renamed its name. And attnviz
changes nothing in the process's environment: no import, load or trace sets os.environ (the loader used to
set HF_HUB_OFFLINE for the whole process; every load passes local_files_only=True instead)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest
import torch

from attnviz.hf import private_names as pn
from tests.version_ends import run_at_lowest

tf = pytest.importorskip("transformers")


def test_every_accessor_is_listed():
    names = {attr for _, attr in pn.NAMES}
    assert names == {"_model_mapping", "_can_record_outputs", "_attn_implementation", "_split_heads", "_reshape"}


def test_auto_model_mapping():
    assert pn.model_class_for(tf.AutoModel, tf.BertConfig()) is tf.BertModel
    with pytest.raises(KeyError):  # a config no model class is registered for
        pn.model_class_for(tf.AutoModel, object())


def test_auto_seq2seq_mapping():
    assert pn.model_class_for(tf.AutoModelForSeq2SeqLM, tf.T5Config()) is tf.T5ForConditionalGeneration
    assert pn.model_class_for(tf.AutoModelForSeq2SeqLM, tf.BartConfig()) is tf.BartForConditionalGeneration


def test_can_record_outputs():
    assert pn.records_attentions(tf.BertModel)
    assert not pn.records_attentions(torch.nn.Linear)  # negative control: a class without the table


def test_attn_implementation():
    model = tf.BertModel(tf.BertConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                       intermediate_size=16, vocab_size=20))
    model.set_attn_implementation("eager")
    assert pn.attn_implementation(model.config) == "eager"
    model.set_attn_implementation("sdpa")
    assert pn.attn_implementation(model.config) == "sdpa"


def _module(cls_name: str, config):
    mod = getattr(tf, cls_name)(config)
    return next(m for m in mod.modules() if "Attention" in type(m).__name__ and hasattr(m, "num_heads"))


def test_falcon_split_heads():
    attn = _module("FalconModel", tf.FalconConfig(hidden_size=16, num_hidden_layers=1, num_attention_heads=4,
                                                  vocab_size=20, new_decoder_architecture=False, multi_query=False))
    fused = torch.arange(3 * 16, dtype=torch.float32).view(1, 1, -1)  # (B, T, 3·H·dh)
    q, k, v = pn.falcon_split_heads(attn)(fused)
    assert q.shape[-1] == k.shape[-1] == v.shape[-1] == 4 and {int(q.max()), int(v.min())} <= set(range(48))


def test_bloom_reshape():
    attn = _module("BloomModel", tf.BloomConfig(hidden_size=16, n_layer=1, n_head=4, vocab_size=20))
    q, k, v = pn.bloom_reshape(attn)(torch.arange(3 * 16, dtype=torch.float32).view(1, 1, -1))
    assert q.shape[-1] == k.shape[-1] == v.shape[-1] == 4


def test_gpt_neo_split_heads():
    attn = _module("GPTNeoModel", tf.GPTNeoConfig(hidden_size=16, num_layers=1, num_heads=4, vocab_size=20,
                                                  attention_types=[[["global"], 1]], max_position_embeddings=32))
    x = torch.arange(2 * 16, dtype=torch.float32).view(1, 2, 16)  # (B, T, H·dh)
    out = pn.gpt_neo_split_heads(attn)(x, 4, 4)
    assert out.shape == (1, 4, 2, 4) and float(out[0, 1, 0, 0]) == 4.0  # head 1 starts at column 4


def test_every_name_at_the_lowest_supported_version():
    run_at_lowest("transformers", "transformers", __file__, deselect="environment")


# -- the process's environment ---------------------------------------------------------------------------------
_SCRIPT = """
import os, socket, sys
before = dict(os.environ)
def refuse(*a, **k):
    raise AssertionError("a network connection was attempted")
socket.socket.connect = refuse
socket.create_connection = refuse
{body}
changed = sorted(k for k in set(before) | set(os.environ) if before.get(k) != os.environ.get(k))
print("CHANGED=" + ",".join(changed))
"""

_ATTNVIZ = """
import attnviz
from attnviz.hf.loader import load_hf_model
from attnviz.runtime import run_trace
loaded = load_hf_model(sys.argv[1], device="cpu")
trace = run_trace(loaded, text="the cat sat on the mat", rollout=False)
assert trace.n_layers == 2
"""


def _changed(body: str, folder) -> list[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HF_HUB_OFFLINE")}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(_SCRIPT.format(body=body)), str(folder)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("CHANGED="))
    return [n for n in line[len("CHANGED="):].split(",") if n]


def test_no_import_or_load_sets_the_environment(hf_folders):
    assert _changed(_ATTNVIZ, hf_folders["gpt2"]) == []


def test_environment_check_sees_a_change(hf_folders):
    """Negative control: the loader's old line (HF_HUB_OFFLINE for the whole process) is seen."""
    assert _changed(_ATTNVIZ + "\nos.environ['HF_HUB_OFFLINE'] = '1'\n", hf_folders["gpt2"]) == ["HF_HUB_OFFLINE"]
