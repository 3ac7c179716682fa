"""``Trace.probs`` checks its block arguments against (heads, queries, keys): an index past an axis, a value that
is not a whole number, a 2-D list or a bool is an InputError (AttnvizError) naming the axis, on a trace that
keeps full maps and on one that recomputes them from q and k alike. An int past the last head once returned an
empty block, a key past the end of a long trace a column of zeros, a string a raw ValueError.

Valid arguments give what NumPy slicing of the full map gives (negative indices, stepped and clipped slices):
the control that the checks refuse only what is wrong."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.errors import AttnvizError
from attnviz.hf.capture import capture_hf

T = 300  # above ON_DEMAND_T: blocks recomputed from q, k and lse


@pytest.fixture(scope="module")
def traces():
    import transformers as tf

    torch.manual_seed(0)
    cfg = tf.LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    model = tf.LlamaForCausalLM(cfg).eval()
    ids = torch.randint(0, 97, (1, T), generator=torch.Generator().manual_seed(3))
    tokens = [str(i) for i in range(T)]
    long = capture_hf(model, {"input_ids": ids}, tokens, attention="on_demand")
    full = long.probs(1)  # the whole map, built once
    short = capture_hf(model, {"input_ids": ids[:, :40]}, tokens[:40])
    return {"long": (long, full), "short": (short, short.probs(1))}


BAD = [
    ({"heads": 4}, "heads=4 is out of range"),
    ({"heads": -5}, "heads=-5 is out of range"),
    ({"heads": "a"}, "heads takes an index, a slice or a list of whole-number indices, not 'a'"),
    ({"heads": [1.5]}, "not a list of fractions"),  # in a user's words, not NumPy's "float64 values shaped (1,)"
    ({"heads": ["a", "b"]}, "not a list of text"),
    ({"heads": True}, "heads takes"),
    ({"rows": [[0, 1]]}, "rows (queries) takes"),
    ({"cols": [0, 5000]}, "cols (keys) holds 5000, out of range"),
    ({"rows": -99999}, "rows (queries)=-99999 is out of range"),
]


@pytest.mark.parametrize("which", ["long", "short"])
@pytest.mark.parametrize("kwargs,message", BAD)
def test_a_wrong_block_is_refused_with_its_axis(traces, which, kwargs, message):
    trace, _ = traces[which]
    with pytest.raises(AttnvizError) as err:
        trace.probs(1, **kwargs)
    assert message in str(err.value)


GOOD = [
    {"heads": -1, "rows": [-1, 0], "cols": slice(None, None, -7)},
    {"heads": [3, 0], "rows": slice(5, 99999), "cols": slice(2, 30, 3)},
    {"heads": 2, "rows": np.array([7, 7, 1], dtype=np.int64), "cols": []},
    {"rows": 10, "cols": [-40, 39]},
]


@pytest.mark.parametrize("which", ["long", "short"])
@pytest.mark.parametrize("kwargs", GOOD)
def test_a_valid_block_is_numpy_slicing_of_the_full_map(traces, which, kwargs):
    trace, full = traces[which]
    want = full
    for axis, name in enumerate(("heads", "rows", "cols")):
        sel = kwargs.get(name)
        if sel is None:
            continue
        sel = slice(sel % full.shape[axis], sel % full.shape[axis] + 1) if isinstance(sel, int) else sel
        want = want[(slice(None),) * axis + (np.asarray(sel, dtype=np.intp) if isinstance(sel, list) else sel,)]
    got = trace.probs(1, **kwargs)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, atol=1e-6, rtol=0)
