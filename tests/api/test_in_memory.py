"""attnviz.load(<a transformers model object>): the same trace as its saved folder, and the model left as it was."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attnviz
from attnviz.errors import AttnvizError, ModelLoadError

tf = pytest.importorskip("transformers")

from tests.hf.factories import TEXT, make_model, sample_image  # noqa: E402
from tests.hf_encdec.factories import SOURCE, make_encdec  # noqa: E402


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("mem")
    made = {f: make_model(f, root / f, seed=i) for i, f in enumerate(("bert", "gpt2", "distilbert", "vit", "llama"))}
    made["bart"] = make_encdec("bart", root / "bart", seed=7)
    return made


def _object(path):
    """What a notebook user holds: from_pretrained with transformers' defaults (sdpa), in training mode."""
    cls = getattr(tf, tf.AutoConfig.from_pretrained(path).architectures[0])
    model = cls.from_pretrained(str(path))
    model.train()
    return model


def _same_trace(a, b):
    assert a.tokens == b.tokens and sorted(a.names) == sorted(b.names)
    for k in a.names:
        x, y = np.asarray(a[k]), np.asarray(b[k])
        if x.dtype.kind == "f":
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-6, err_msg=k)  # ±inf of masks compare equal
        else:
            np.testing.assert_array_equal(x, y, err_msg=k)


@pytest.mark.parametrize("family", ["bert", "gpt2", "distilbert", "vit", "llama", "bart"])
def test_a_model_in_memory_traces_as_its_folder(family, folders):
    path = folders[family]
    model = _object(path)
    if family == "vit":
        mem = attnviz.load(model, processor=tf.AutoImageProcessor.from_pretrained(str(path)))
        kw = {"image": sample_image()}
    else:
        mem = attnviz.load(model, tokenizer=tf.AutoTokenizer.from_pretrained(str(path)))
        kw = {"text": SOURCE if family == "bart" else TEXT}
    got, want = mem.trace(**kw), attnviz.load(path, device="cpu").trace(**kw)
    _same_trace(got, want)
    if family != "bart":  # the full trace: q, k, v, what the walkthrough reads
        assert {"L0.q", "L0.k", "L0.v", "L1.probs"} <= set(got.names)
    # negative control: the comparison tells another input's trace apart
    other = mem.trace(image=np.flipud(sample_image()).copy()) if family == "vit" else mem.trace(text="hello world")
    with pytest.raises(AssertionError):
        _same_trace(other, want)


def _hook_counts(model):
    return [(n, len(m._forward_hooks), len(m._forward_pre_hooks), len(m._backward_hooks))
            for n, m in model.named_modules()]


def test_the_model_is_left_exactly_as_it_was(folders):
    from attnviz.hf.in_memory import model_state

    path = folders["distilbert"]  # a small classifier: traced with gradients by default
    model = _object(path)
    model.to(torch.float64)
    seen = []
    model.distilbert.transformer.layer[0].register_forward_hook(lambda *a: seen.append(1))
    for p in model.parameters():  # the user's own accumulated gradients
        p.grad = torch.full_like(p, 0.5)
    grads = [p.grad.clone() for p in model.parameters()]
    before = model_state(model)
    hooks = _hook_counts(model)
    loaded = attnviz.load(model, tokenizer=tf.AutoTokenizer.from_pretrained(str(path)))
    t = loaded.trace(TEXT)
    assert "L0.grad" in t.names and len(seen) >= 1  # the user's hook ran during the capture
    assert model_state(model) == before  # implementation, dtype, device, modes, grads by identity, attributes
    assert _hook_counts(model) == hooks and model.training and model.config._attn_implementation == "sdpa"
    assert next(model.parameters()).dtype == torch.float64
    for p, g in zip(model.parameters(), grads):
        assert torch.equal(p.grad, g)
    # negative control: the state check sees a change
    model.eval()
    assert model_state(model) != before


@pytest.mark.parametrize("bad, needle", [
    (None, "cannot load None: pass a transformers model, a folder or a bundled name"),
    (12, "cannot load a int"),
    (torch.nn.Linear(2, 2), "cannot load a Linear"),
])
def test_a_bad_object_is_one_line_with_a_hint(bad, needle):
    with pytest.raises(ModelLoadError) as err:
        attnviz.load(bad)
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_a_text_model_object_needs_its_tokenizer(folders):
    model = _object(folders["gpt2"])
    with pytest.raises(AttnvizError, match="pass its tokenizer too"):
        attnviz.load(model)
    with pytest.raises(AttnvizError, match="stays on its own device"):
        attnviz.load(model, tokenizer=tf.AutoTokenizer.from_pretrained(str(folders["gpt2"])), device="cpu")
    with pytest.raises(AttnvizError, match="tokenizer= must be a transformers tokenizer"):
        attnviz.load(model, tokenizer="gpt2")


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_a_half_precision_model_in_memory_is_traced_in_its_dtype(dtype, folders):
    """A model the user cast to float16 / bfloat16 runs in that dtype (never cast back), and the trace's
    probabilities are the model's own: equal to its eager output_attentions in that dtype."""
    path = folders["llama"]
    model = _object(path).to(dtype).eval()
    tok = tf.AutoTokenizer.from_pretrained(str(path))
    t = attnviz.load(model, tokenizer=tok).trace(TEXT)
    assert next(model.parameters()).dtype == dtype  # left as it was
    assert t["L0.q"].dtype == (np.float16 if dtype == torch.float16 else np.float32)  # NumPy has no bfloat16
    ids = tok(TEXT, return_tensors="pt")["input_ids"]
    model.set_attn_implementation("eager")  # the model's own probabilities, in its dtype
    with torch.no_grad():
        own = model(ids, output_attentions=True).attentions
    for i, a in enumerate(own):
        want = a[0].float().numpy()
        np.testing.assert_allclose(t.probs(i).astype(np.float32), want, atol=1e-3 if dtype == torch.float16 else 8e-3)
    # negative control: the float32 model's probabilities differ from the half-precision ones by more than 0
    t32 = attnviz.load(_object(path).eval(), tokenizer=tok).trace(TEXT)
    assert np.abs(t32.probs(1) - t.probs(1).astype(np.float32)).max() > 0
