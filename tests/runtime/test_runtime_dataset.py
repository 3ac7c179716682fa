"""The data-set runner's batches against single-input traces: same queries and keys, same padding."""

import numpy as np
import pytest

from attnviz.errors import InputError


@pytest.fixture(scope="module")
def coref():
    from attnviz.runtime import load_model

    return load_model("coref", device="cpu")


def test_collected_queries_and_keys_equal_each_inputs_own_trace(coref):
    from attnviz.runtime import run_trace
    from attnviz.runtime.dataset_inputs import task_batches
    from attnviz.runtime.qk_collect import collect_qk

    data = collect_qk(coref, task_batches(coref, 6, batch_size=4))
    assert len(data.items) == 6
    for i in (0, 5):  # one input of each batch; lengths differ, so padding is exercised
        tr = run_trace(coref, text=data.items[i], precision="float32", rollout=False)
        rows = data.input_index["self"] == i
        assert list(np.array(data.token["self"])[rows]) == tr.tokens
        for layer in (0, 1):
            q, k = data.head_vectors("self", layer, 2)
            np.testing.assert_allclose(q[rows], tr[f"L{layer}.q"][2], atol=1e-5)
            np.testing.assert_allclose(k[rows], tr[f"L{layer}.k"][2], atol=1e-5)
    j = int(np.nonzero(data.input_index["self"] == 0)[0][3])
    assert "⟦" in data.context("self", j)


def test_task_batches_pad_and_mask_like_the_task(coref):
    from attnviz.runtime.dataset_inputs import task_batches

    batch = next(task_batches(coref, 16, batch_size=16))
    ids, valid = batch.parts["self"].ids, batch.parts["self"].q_valid
    assert ids.shape == valid.shape and not valid.all()  # sentences differ in length
    np.testing.assert_array_equal(batch.inputs["key_pad"].numpy(), ~valid)
    assert len(batch.items) == 16 and all(isinstance(t, str) and t for t in batch.items)


def test_repeated_sequences_repeat_distinct_tokens():
    from attnviz.runtime import load_model
    from attnviz.runtime.dataset_inputs import repeated_batches

    loaded = load_model("induction", device="cpu")
    batch = next(repeated_batches(loaded, 4))
    for row, ok in zip(batch.parts["self"].ids, batch.parts["self"].q_valid):
        body = row[ok][1:]  # after [BOS]
        half = len(body) // 2
        assert len(set(body[:half].tolist())) == half and (body[:half] == body[half:]).all()


def test_hf_style_models_are_refused_with_a_clear_message(coref):
    from attnviz.runtime.batch_scores import forward_batch

    class Hooked:  # what the Hugging Face adapter owns: info["source"] == "huggingface"
        info = {"source": "huggingface"}
        name = "bert-folder"

    with pytest.raises(InputError, match="attnviz model"):
        forward_batch(Hooked(), {})


@pytest.mark.parametrize("name", ["coref", "order-sentiment", "induction", "charlm", "reverse", "translate"])
def test_each_generated_input_opens_as_text_that_gives_the_same_ids(name):
    """What the data-set views open in the app is the very input that was scored."""
    from attnviz.runtime import load_model, prepare_text
    from attnviz.runtime.dataset_inputs import task_batches

    loaded = load_model(name, device="cpu")
    batch = next(task_batches(loaded, 6, 6))
    for i, text in enumerate(batch.items):
        prep = prepare_text(loaded, text)
        key = "src" if "src" in prep.inputs else "ids"
        row = batch.inputs[key][i].numpy()
        np.testing.assert_array_equal(row[row != loaded.tokenizer.pad_id], prep.inputs[key][0].numpy())
