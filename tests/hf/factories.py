"""Tiny Hugging Face model folders made in the tests: config, random weights, locally built tokenizers.

Each factory writes ``config.json`` + ``model.safetensors`` (``save_pretrained``) and a tokenizer (a
WordPiece vocabulary written here, or byte-level BPE trained on a few sentences) or an image-processor
config into a temporary folder. Nothing is downloaded.
"""

from __future__ import annotations

import json
import os

import pytest
import torch

# transformers is optional: every factory asks for it, so only the tests that need it skip
os.environ["HF_HUB_OFFLINE"] = "1"


def hf():
    """The transformers module, or skip the calling test."""
    return pytest.importorskip("transformers")


SENTENCES = ["the animal didn't cross the street because it was too tired",
             "the cat sat on the mat and it was happy", "a dog ran in the park", "hello world"]
WORDS = sorted({w for s in SENTENCES for w in s.replace("'", " ' ").split()})
WORDPIECE = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS, "##s", "##ed", "##n", "##t"]
TEXT = "the cat sat on the mat because it was tired"
SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64)
FAMILY_IDS = ["bert", "roberta", "distilbert", "albert", "gpt2", "vit", "deit"]
LABELS = {0: "cat", 1: "dog", 2: "bird"}


def save_quietly(obj, path) -> None:
    from attnviz.hf.loader import quiet_transformers

    with quiet_transformers(hf()):  # save_pretrained logs config quirks of tiny models, draws progress bars
        obj.save_pretrained(str(path))


def _randomise(model, seed: int):
    """Weights spread wider than the init, so heads attend visibly differently."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (0.3 if p.dim() >= 2 else 0.1))
    return model.eval()


def wordpiece_tokenizer(cls=None):
    cls = cls or hf().BertTokenizer
    return cls(vocab={t: i for i, t in enumerate(WORDPIECE)})


def bpe_parts(specials: list[str]):
    """Byte-level BPE trained on SENTENCES: (vocab dict, merges as tuples)."""
    from tokenizers import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(SENTENCES, vocab_size=320, min_frequency=1, special_tokens=specials,
                            show_progress=False)
    model = json.loads(bpe._tokenizer.to_str())["model"]
    return model["vocab"], [tuple(m) for m in model["merges"]]


def write_processor(path, size: int, crop: int | None = None) -> None:
    """preprocessor_config.json written by hand (ViT: resize; DeiT: resize then centre crop)."""
    doc = {"image_processor_type": "DeiTImageProcessor" if crop else "ViTImageProcessor",
           "do_resize": True, "size": {"height": size, "width": size}, "resample": 3 if crop else 2,
           "do_rescale": True, "rescale_factor": 1 / 255, "do_normalize": True,
           "image_mean": [0.485, 0.456, 0.406], "image_std": [0.229, 0.224, 0.225]}
    if crop:
        doc.update(do_center_crop=True, crop_size={"height": crop, "width": crop})
    (path / "preprocessor_config.json").write_text(json.dumps(doc), encoding="utf-8")


def make_model(family: str, path, seed: int = 0, layers: int = 2, max_pos: int = 24):
    """Write a tiny model folder of ``family`` into ``path``; returns the path."""
    tf = hf()
    path.mkdir(parents=True, exist_ok=True)
    small = {**SMALL, "num_hidden_layers": layers}
    tok = None
    if family in ("bert", "albert"):
        tok = wordpiece_tokenizer()
        if family == "bert":
            model = tf.BertForMaskedLM(tf.BertConfig(vocab_size=len(WORDPIECE), max_position_embeddings=max_pos,
                                                     **small))
        else:  # ALBERT: every layer shares one set of weights
            model = tf.AlbertForMaskedLM(tf.AlbertConfig(vocab_size=len(WORDPIECE), embedding_size=16,
                                                         max_position_embeddings=max_pos, **small))
    elif family == "distilbert":
        tok = wordpiece_tokenizer(tf.DistilBertTokenizer)
        model = tf.DistilBertForSequenceClassification(tf.DistilBertConfig(
            vocab_size=len(WORDPIECE), dim=32, n_layers=layers, n_heads=4, hidden_dim=64,
            max_position_embeddings=max_pos, num_labels=3, id2label=LABELS, label2id={v: k for k, v in LABELS.items()}))
    elif family == "roberta":
        vocab, merges = bpe_parts(["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
        tok = tf.RobertaTokenizer(vocab=vocab, merges=merges)
        model = tf.RobertaForMaskedLM(tf.RobertaConfig(vocab_size=len(vocab), max_position_embeddings=max_pos + 2,
                                                       pad_token_id=1, bos_token_id=0, eos_token_id=2, **small))
    elif family in ("gpt2", "llama"):
        vocab, merges = bpe_parts(["<|endoftext|>"])
        tok = tf.GPT2Tokenizer(vocab=vocab, merges=merges)
        if family == "gpt2":
            model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=len(vocab), n_embd=32, n_layer=layers, n_head=4,
                                                     n_positions=max_pos, bos_token_id=0, eos_token_id=0))
        else:  # RoPE and grouped K/V
            model = tf.LlamaForCausalLM(tf.LlamaConfig(vocab_size=len(vocab), num_key_value_heads=2,
                                                       max_position_embeddings=max_pos, bos_token_id=0,
                                                       eos_token_id=0, pad_token_id=0, **small))
    elif family in ("vit", "deit"):
        kw = dict(image_size=16, patch_size=4, num_labels=3, id2label=LABELS,
                  label2id={v: k for k, v in LABELS.items()}, **small)
        if family == "vit":
            model = tf.ViTForImageClassification(tf.ViTConfig(**kw))
            write_processor(path, 16)
        else:
            model = tf.DeiTForImageClassificationWithTeacher(tf.DeiTConfig(**kw))
            write_processor(path, 20, crop=16)
    else:
        from .tiny_models import build  # any family of tests/hf/tiny_models.py, with a byte-level BPE tokenizer

        model, _ = build(family, seed)
        vocab, merges = bpe_parts(["<|endoftext|>"])
        tok = tf.GPT2Tokenizer(vocab=vocab, merges=merges)
        model.resize_token_embeddings(len(vocab))
        model.config.architectures = [type(model).__name__]
    save_quietly(_randomise(model, seed), path)
    if tok is not None:
        save_quietly(tok, path)
    return path


def prepare(loaded, text=TEXT, picture=None, truncate=False):
    """The runtime's preparation, through the adapter that owns the Hugging Face model."""
    from attnviz.runtime import prepare_image, prepare_text

    if loaded.config.kind == "vit":
        return prepare_image(loaded, picture if picture is not None else sample_image())
    return prepare_text(loaded, text, truncate=truncate)


def trace_of(loaded, grad=False, **kw):
    prep = prepare(loaded, **kw)
    from attnviz.runtime import adapter_for
    from attnviz.runtime.adapter import CaptureOptions

    return adapter_for(loaded).capture(loaded, prep, prep.meta, CaptureOptions(grad=grad)), prep


def sample_image():
    """A 24×30 RGB picture with structure (gradient + a red square), uint8."""
    import numpy as np

    y, x = np.mgrid[0:24, 0:30]
    img = np.stack([x * 8, y * 10, (x + y) * 4], axis=-1) % 256
    img[6:14, 8:18] = [250, 20, 30]
    return img.astype(np.uint8)
