"""Random-weight Hugging Face models of real models' shapes (layers × heads), built from configs in a
temporary folder — nothing downloaded. Hidden sizes are kept small (the views under test lay out layers
and heads; d_head is the real models' where a figure draws it). Used by the real-size layout tests.

SHAPES: a 30-layer × 9-head decoder with 3 key/value heads (SmolLM-135M's grid), a 24 × 14 one
(Qwen2-0.5B's heads), a 32 × 32 one with 8 key/value heads (Llama-2/3-8B's grid).
"""

from __future__ import annotations

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"

SHAPES = {"30x9": (30, 9, 3), "24x14": (24, 14, 2), "32x32": (32, 32, 8)}  # layers, heads, kv heads
TEXT = "the cat sat on the mat because it was tired"


def build(name: str, folder, d_head: int = 4):
    """Write a Llama-family model of shape ``SHAPES[name]`` into ``folder``; return the folder."""
    import pytest
    import torch

    tf = pytest.importorskip("transformers")
    from tokenizers import ByteLevelBPETokenizer

    from attnviz.hf.loader import quiet_transformers

    layers, heads, kv = SHAPES[name]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([TEXT, "a dog ran in the park"], vocab_size=300, min_frequency=1,
                            special_tokens=["<|endoftext|>"], show_progress=False)
    model = json.loads(bpe._tokenizer.to_str())["model"]
    vocab = model["vocab"]
    tok = tf.GPT2Tokenizer(vocab=vocab, merges=[tuple(m) for m in model["merges"]])
    cfg = tf.LlamaConfig(vocab_size=len(vocab), hidden_size=heads * d_head, intermediate_size=32,
                         num_hidden_layers=layers, num_attention_heads=heads, num_key_value_heads=kv,
                         max_position_embeddings=64, bos_token_id=0, eos_token_id=0, pad_token_id=0)
    torch.manual_seed(0)
    model = tf.LlamaForCausalLM(cfg).eval()
    with torch.no_grad():  # weights spread wider than the init, so heads attend visibly differently
        for p in model.parameters():
            p.mul_(3.0 if p.dim() >= 2 else 1.0)
    folder.mkdir(parents=True, exist_ok=True)
    with quiet_transformers(tf):
        model.save_pretrained(str(folder))
        tok.save_pretrained(str(folder))
    return folder


def trace_of(folder):
    """The app's trace of TEXT through the model in ``folder`` (as the app opens it)."""
    from attnviz.runtime import load_model, run_trace

    return run_trace(load_model(str(folder), device="cpu"), text=TEXT)
