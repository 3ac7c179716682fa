"""A capture leaves no reference cycle behind: the model's tensors it read (a trace's arrays are views of them)
are freed when the trace is dropped, not when Python's cycle collector happens to run.

A cycle (the block recorder's end-of-block callback, a bound method of the converter holding the recorder) once
kept every layer's tensors of the previous capture alive: the next capture of the same model faulted fresh
pages in (33k more minor page faults a capture at 512 tokens on a 30-layer decoder) and a trace dropped by the
app kept its memory. The control: a cycle planted the same way is found by the same check."""

from __future__ import annotations

import gc

import pytest
import torch

from attnviz.hf.capture import capture_hf

T = 300  # above ON_DEMAND_T: the long path (converter, block recorder, spill store)


def _model():
    import transformers as tf

    torch.manual_seed(0)
    cfg = tf.LlamaConfig(vocab_size=97, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512)
    return tf.LlamaForCausalLM(cfg).eval()


def _attnviz_garbage(run) -> list[str]:
    """Type names of attnviz objects (and tensors) that only the cycle collector would free after ``run()``."""
    gc.collect()
    gc.disable()
    try:
        gc.set_debug(gc.DEBUG_SAVEALL)
        run()
        gc.collect()
        found = [type(o) for o in gc.garbage]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    return sorted({f"{t.__module__}.{t.__name__}" for t in found
                   if t.__module__.startswith("attnviz") or t is torch.Tensor})


@pytest.mark.parametrize("attention", ["on_demand", None])
def test_a_dropped_trace_leaves_no_cycle(attention):
    model = _model()
    ids = torch.randint(0, 97, (1, T), generator=torch.Generator().manual_seed(3))
    kwargs = {"attention": attention} if attention else {}

    def run():
        trace = capture_hf(model, {"input_ids": ids}, [str(i) for i in range(T)], **kwargs)
        trace.probs(1, heads=[0], rows=[T - 1])  # read once, as a view would
        del trace

    assert _attnviz_garbage(run) == []


def test_the_check_finds_a_planted_cycle():
    from attnviz.hf.block_record import BlockRecorder

    def run():
        class Holder:
            pass

        holder = Holder()
        rec = BlockRecorder.__new__(BlockRecorder)
        rec.on_end, holder.rec, holder.t = holder, rec, torch.zeros(3)
        del rec, holder

    assert "attnviz.hf.block_record.BlockRecorder" in _attnviz_garbage(run)



FAMILIES = ["llama", "gemma2", "gpt2", "bert", "vit", "falcon", "deberta-v2", "bloom", "gpt_neo"]


@pytest.mark.parametrize("name", FAMILIES + ["t5", "bart"])
def test_no_family_leaves_a_cycle(name, tmp_path):
    """Every capture path (the generic recorder, a family's own modules, encoder–decoders): nothing left for
    the cycle collector at the short length either."""
    if name in FAMILIES:
        from tests.hf.tiny_models import build, tokens_of

        model, inputs = build(name)
        tokens = tokens_of(inputs, model)
        run_one = lambda: capture_hf(model, inputs, tokens)  # noqa: E731
    else:
        import attnviz
        from tests.hf_encdec.factories import SOURCE, make_encdec

        model = attnviz.load(str(make_encdec(name, tmp_path / name)))
        run_one = lambda: model.trace(SOURCE)  # noqa: E731

    def run():
        trace = run_one()
        del trace

    run()  # first call: imports, caches and memos made once per process are not garbage of this capture
    assert _attnviz_garbage(run) == []
