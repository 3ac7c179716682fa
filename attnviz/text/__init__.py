"""Tokenizers (character, word, BPE) — Qt-free."""

from attnviz.text.fit import fit_tokens
from attnviz.text.tokenizer import SPECIALS, Encoding, Tokenizer

__all__ = ["Tokenizer", "Encoding", "SPECIALS", "fit_tokens"]
