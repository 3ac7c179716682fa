"""Tiny Hugging Face encoder–decoder folders made in the tests: config, random weights, a word-level tokenizer.

Each factory writes ``config.json`` + ``model.safetensors`` + ``generation_config.json``
(``save_pretrained``) and a ``tokenizer.json`` built here with the ``tokenizers`` library (WordLevel over
a few dozen words, the family's special tokens and its template: T5/Marian/Pegasus "x </s>", BART/mBART
"<s> x </s>"). Nothing is downloaded and no sentencepiece model is needed.
"""

from __future__ import annotations

import os

import pytest
import torch

os.environ["HF_HUB_OFFLINE"] = "1"

FAMILIES = ["t5", "bart", "marian", "mbart", "pegasus", "m2m_100"]
WORDS = ("the cat sat on mat dog ran in park a small house is red le chat est sur tapis chien court dans "
         "une petite maison rouge hello world it was tired because").split()
SOURCE = "the cat sat on the mat"
TARGET = "le chat est sur le tapis"
# the family's special tokens in id order, and whether a sentence opens with <s>
SPECIALS = {
    "t5": (["<pad>", "</s>", "<unk>"], False),
    "pegasus": (["<pad>", "</s>", "<unk>"], False),
    "marian": (["</s>", "<unk>", "<pad>"], False),
    "bart": (["<s>", "<pad>", "</s>", "<unk>"], True),
    "mbart": (["<s>", "<pad>", "</s>", "<unk>"], True),
    "m2m_100": (["<s>", "<pad>", "</s>", "<unk>"], True),
}


def hf():
    return pytest.importorskip("transformers")


def save_quietly(obj, path) -> None:
    from attnviz.hf.loader import quiet_transformers

    with quiet_transformers(hf()):
        obj.save_pretrained(str(path))


def word_tokenizer(family: str):
    """A transformers fast tokenizer over WORDS with the family's specials and sentence template."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors

    specials, opens = SPECIALS[family]
    vocab = {t: i for i, t in enumerate(specials + list(dict.fromkeys(WORDS)))}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    tk.decoder = decoders.WordPiece(prefix="##")  # joins words with spaces
    template = ("<s> $A </s>" if opens else "$A </s>")
    used = [t for t in ("<s>", "</s>") if t in template]
    tk.post_processor = processors.TemplateProcessing(single=template, special_tokens=[(t, vocab[t]) for t in used])
    kw = dict(pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    if opens:
        kw["bos_token"] = "<s>"
    return hf().PreTrainedTokenizerFast(tokenizer_object=tk, **kw), vocab


def _randomise(model, seed: int):
    """Weights spread wider than the init, so heads attend visibly differently (fixed tables, such as
    Marian's sinusoids, are left alone)."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            if p.requires_grad:
                p.copy_(torch.randn(p.shape, generator=g) * (0.3 if p.dim() >= 2 else 0.1) + (p.dim() < 2) * 0.5)
    return model.eval()


def make_encdec(family: str, path, seed: int = 0, layers: int = 2, max_pos: int = 40):
    """Write a tiny encoder–decoder folder of ``family`` into ``path``; returns the path."""
    tf = hf()
    path.mkdir(parents=True, exist_ok=True)
    tok, vocab = word_tokenizer(family)
    ids = {t: vocab[t] for t in SPECIALS[family][0]}
    size = dict(d_model=32, vocab_size=len(vocab))
    bartlike = dict(encoder_layers=layers, decoder_layers=layers, encoder_attention_heads=4,
                    decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64,
                    max_position_embeddings=max_pos, pad_token_id=ids["<pad>"], eos_token_id=ids["</s>"],
                    forced_eos_token_id=None)
    if family == "t5":
        model = tf.T5ForConditionalGeneration(tf.T5Config(
            d_kv=8, d_ff=64, num_layers=layers, num_decoder_layers=layers, num_heads=4,
            relative_attention_num_buckets=8, relative_attention_max_distance=16, pad_token_id=ids["<pad>"],
            eos_token_id=ids["</s>"], decoder_start_token_id=ids["<pad>"], **size))
    elif family == "bart":
        model = tf.BartForConditionalGeneration(tf.BartConfig(
            bos_token_id=ids["<s>"], decoder_start_token_id=ids["</s>"], forced_bos_token_id=None,
            **bartlike, **size))
    elif family == "mbart":
        model = tf.MBartForConditionalGeneration(tf.MBartConfig(
            bos_token_id=ids["<s>"], decoder_start_token_id=ids["</s>"], scale_embedding=True, **bartlike, **size))
    elif family == "marian":
        model = tf.MarianMTModel(tf.MarianConfig(decoder_start_token_id=ids["<pad>"], scale_embedding=True,
                                                 **bartlike, **size))
    elif family == "pegasus":
        model = tf.PegasusForConditionalGeneration(tf.PegasusConfig(
            decoder_start_token_id=ids["<pad>"], scale_embedding=True, **bartlike, **size))
    elif family == "m2m_100":  # sinusoidal positions computed in the model (NLLB's family)
        model = tf.M2M100ForConditionalGeneration(tf.M2M100Config(
            bos_token_id=ids["<s>"], decoder_start_token_id=ids["</s>"], scale_embedding=True, **bartlike, **size))
    else:
        raise ValueError(family)
    save_quietly(_randomise(model, seed), path)
    save_quietly(tok, path)
    return path
