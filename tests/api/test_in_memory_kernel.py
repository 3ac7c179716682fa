"""In a real Jupyter kernel (nbclient, in a child process as tests/docs does): a model in memory traces as its
saved folder, ``output_attentions`` draw the model's own figure, arrays stay read-only, and nothing but the
notebook's own prints reaches the output (no library warning, no progress bar)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

USER = """import os
os.environ["HF_HUB_OFFLINE"] = "1"
import numpy as np, torch, transformers as tf, attnviz
from pathlib import Path
from tests.hf.factories import TEXT, make_model
folder = make_model("gpt2", Path(FOLDER))
# what a notebook user holds: the model object, on transformers' default attention, in training mode
model = tf.GPT2LMHeadModel.from_pretrained(str(folder)); model.train()
tok = tf.AutoTokenizer.from_pretrained(str(folder))
eager = tf.GPT2LMHeadModel.from_pretrained(str(folder), attn_implementation="eager").eval()
with torch.no_grad():
    out = eager(tok(TEXT, return_tensors="pt")["input_ids"], output_attentions=True)"""

# attnviz's own cells: whatever they print to stderr reached the user from attnviz or a library it called
CELLS = [
    """mem = attnviz.load(model, tokenizer=tok).trace(TEXT)
ref = attnviz.load(folder, device="cpu").trace(TEXT)
same = mem.tokens == ref.tokens and sorted(mem.names) == sorted(ref.names) and all(
    np.array_equal(mem[k], ref[k]) for k in ref.names)
print("in-memory equals folder:", same, "| left as it was:", model.training, model.config._attn_implementation)""",
    """given = attnviz.from_attentions(out.attentions, ref.tokens, name=ref.meta["model_name"])
a = given.figure("head-map", layer=1, head=2, size=(640, 360)).to_bytes("png")
b = ref.figure("head-map", layer=1, head=2, size=(640, 360)).to_bytes("png")
print("attentions draw the model's figure:", a == b, "| another head differs:",
      given.figure("head-map", layer=1, head=1, size=(640, 360)).to_bytes("png") != b)""",
    """p = mem["L1.probs"]
try:
    p /= p.max(-1, keepdims=True)
    print("read-only: False")
except ValueError:
    print("read-only:", bool(np.allclose(mem.probs(1).sum(-1), 1, atol=1e-5)))""",
]


def test_in_memory_models_in_a_real_kernel(tmp_path):
    nbformat = pytest.importorskip("nbformat", reason="the test extra installs nbformat")
    pytest.importorskip("nbclient", reason="the test extra installs nbclient")
    pytest.importorskip("transformers")
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(USER.replace("FOLDER", repr(str(tmp_path / "gpt2"))))]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in CELLS]
    src, done = tmp_path / "in_memory.ipynb", tmp_path / "done.ipynb"
    nbformat.write(nb, src)
    code = ("import sys, nbformat, nbclient; nb = nbformat.read(sys.argv[1], as_version=4); "
            "nbclient.NotebookClient(nb, timeout=600, kernel_name='python3', "
            "resources={'metadata': {'path': sys.argv[2]}}).execute(); nbformat.write(nb, sys.argv[3])")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(ROOT), PYTHONWARNINGS="default")
    run = subprocess.run([sys.executable, "-c", code, str(src), str(tmp_path), str(done)], env=env,
                         capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, run.stderr[-3000:]
    cells = nbformat.read(done, as_version=4).cells
    assert not [o for o in cells[0].outputs if o.output_type == "error"]
    outputs = [o for c in cells[1:] for o in c.outputs]
    streams = [(o.name, o.text) for o in outputs if o.output_type == "stream"]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(t for name, t in streams if name == "stdout")
    assert "in-memory equals folder: True | left as it was: True sdpa" in text
    assert "attentions draw the model's figure: True | another head differs: True" in text
    assert "read-only: True" in text
    # nothing on stderr: no library warning (PYTHONWARNINGS=default shows each once) and no progress bar
    assert [t for name, t in streams if name == "stderr"] == []
