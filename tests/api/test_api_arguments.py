"""The Python API's surface: discoverable names, runnable docstring examples, one-line refusals of bad
arguments, arrays that cannot change a trace, and no library warning in the user's output."""

from __future__ import annotations

import doctest
import warnings

import numpy as np
import pytest

import attnviz
from attnviz.errors import AttnvizError

TEXT = "The animal didn't cross the street because it was too tired"


@pytest.fixture(scope="module")
def traced():
    return attnviz.load("coref").trace(TEXT)


def test_views_and_models_are_lists_of_str():
    views, models = attnviz.views(), attnviz.models()
    assert isinstance(views, list) and all(isinstance(v, str) for v in views) and "head-map" in views
    assert isinstance(models, list) and all(isinstance(m, str) for m in models) and "coref" in models
    from attnviz.figures.registry import FIGURES

    assert views == list(FIGURES)  # the registry itself, not a copy kept by hand
    import subprocess
    import sys

    # before anything imported the attnviz.models package (no torch), and after (the package answers the call)
    code = ("import sys, attnviz; a = attnviz.models(); light = 'torch' not in sys.modules; import attnviz.models; "
            "print(a == attnviz.models() == sorted(a) and 'coref' in a and light)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"


@pytest.mark.parametrize("module", ["attnviz.api.catalog", "attnviz.api.from_attentions", "attnviz.api.model",
                                    "attnviz.api.compare"])
def test_docstring_examples_run(module):
    import importlib

    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.attempted > 0 and result.failed == 0


@pytest.mark.parametrize("call, needle", [
    (lambda t: attnviz.load(None), "cannot load None"),
    (lambda t: t.figure(layer="a"), "layer must be an int, not 'a'"),
    (lambda t: t.figure(head=1.5), "head must be an int, not 1.5"),
    (lambda t: t.figure(layer=True), "layer must be an int, not True"),
    (lambda t: t.figure(part="decoder"), "part must be one of"),
    (lambda t: t.probs("1"), "layer must be an int"),
    (lambda t: t["no.such"], "no array 'no.such'"),
    (lambda t: t.model.trace("a b", precision="float8"), "precision must be one of 'auto', 'float32', 'float16'"),
    (lambda t: t.model.trace(text=12345), "text must be a str, not a int"),
    (lambda t: t.model.trace(text=["a b", "c d"]), "text must be a str, not a list: trace each text on its own"),
    (lambda t: t.figure("word-order"), None),  # coref is an encoder: this view applies (control below)
    (lambda t: t.figure("filters-pca"), "view does not apply to encoder models"),
])
def test_bad_arguments_are_one_line_attnviz_errors(traced, call, needle):
    if needle is None:
        call(traced)  # negative control: a good argument passes the same checks
        return
    with pytest.raises(AttnvizError) as err:
        call(traced)
    msg = str(err.value)
    assert needle in msg and "\n" not in msg and " a encoder" not in msg


def test_the_issues_example_cannot_change_the_trace(traced):
    before = traced.probs(1).copy()
    p = traced["L1.probs"]
    with pytest.raises(ValueError):
        p /= p.max(-1, keepdims=True)
    with pytest.raises(ValueError):  # nor made writeable again (its base is frozen)
        p.flags.writeable = True
    for got in (traced.arrays["L1.probs"], traced.probs(1), traced.probs(1, heads=0, rows=[1, 2])):
        with pytest.raises(ValueError):
            got[...] = 0
    q = np.array(traced["L1.probs"])  # a copy is the user's to change
    q /= q.max(-1, keepdims=True)
    np.testing.assert_array_equal(traced.probs(1), before)
    np.testing.assert_allclose(traced.probs(1).sum(-1), 1, atol=1e-5)
    meta = traced.meta
    meta["model_name"] = "changed"
    assert traced.meta["model_name"] != "changed"
    r = traced["rollout"]  # a deferred array, stored when first read: frozen too
    with pytest.raises(ValueError):
        r[...] = 0


def test_a_base_model_trace_warns_nothing(tmp_path):
    """A base model (no logits) asked for gradients (the rollout figure asks) said PyTorch's "grad of a
    non-leaf Tensor" into the notebook: it is no longer asked for gradients it cannot have."""
    tf = pytest.importorskip("transformers")
    from tests.hf.factories import SMALL, TEXT as HF_TEXT, WORDPIECE, save_quietly, wordpiece_tokenizer

    path = tmp_path / "bert-base"
    save_quietly(tf.BertModel(tf.BertConfig(vocab_size=len(WORDPIECE), max_position_embeddings=24, **SMALL)), path)
    save_quietly(wordpiece_tokenizer(), path)
    model = attnviz.load(path, device="cpu")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        t = model.trace(HF_TEXT, grad=True)
    assert [str(w.message)[:60] for w in caught] == []
    assert "L0.grad" not in t.names and "L0.q" in t.names
    import torch

    with warnings.catch_warnings(record=True) as caught:  # negative control: PyTorch's warning is caught here
        warnings.simplefilter("always")
        (torch.ones(1, requires_grad=True) * 2).grad  # noqa: B018
    assert any("not a leaf" in str(w.message) for w in caught)
