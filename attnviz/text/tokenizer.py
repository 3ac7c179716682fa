"""Character, word and BPE tokenizers with explicit special tokens.

BPE is trained with the ``tokenizers`` library; its merges are kept so the app can show them.
A tokenizer is saved inside a model's ``config.json`` (``to_dict`` / ``from_dict``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from attnviz.errors import InputError, ModelLoadError

__all__ = ["Tokenizer", "Encoding", "SPECIALS", "PAD", "UNK", "CLS", "SEP", "MASK", "BOS", "EOS"]

PAD, UNK, CLS, SEP, MASK, BOS, EOS = "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "[BOS]", "[EOS]"
SPECIALS = [PAD, UNK, CLS, SEP, MASK, BOS, EOS]  # ids 0..6 in every attnviz vocabulary
_WORD_RE = re.compile(r"\[[A-Z]+\]|\w+(?:'\w+)?|[^\w\s]")


@dataclass
class Encoding:
    ids: list[int]
    tokens: list[str]


@dataclass
class Tokenizer:
    """``kind`` is "char", "word" or "bpe"; ``prefix``/``suffix`` are special tokens added by encode()."""

    kind: str
    vocab: list[str]
    prefix: list[str] = field(default_factory=list)
    suffix: list[str] = field(default_factory=list)
    lowercase: bool = True
    bpe_json: str = ""  # the `tokenizers` serialisation for kind == "bpe"

    def __post_init__(self) -> None:
        if self.kind not in ("char", "word", "bpe"):
            raise ModelLoadError(f"unknown tokenizer kind {self.kind!r}")
        self.index = {t: i for i, t in enumerate(self.vocab)}
        self._bpe = None
        if self.kind == "bpe":
            from tokenizers import Tokenizer as HFTokenizer

            try:
                self._bpe = HFTokenizer.from_str(self.bpe_json)
            except Exception as exc:  # the Rust library raises plain Exception on a bad serialisation
                raise ModelLoadError(f"invalid BPE tokenizer in config: {str(exc).splitlines()[0]}") from None

    # -- construction ----------------------------------------------------------------------------
    @classmethod
    def build(cls, kind: str, texts, prefix=(), suffix=(), lowercase=True, vocab_size=400, extra=()):
        """Build the vocabulary from example texts (BPE: train merges up to ``vocab_size``)."""
        if kind == "bpe":
            from tokenizers import Tokenizer as HFTokenizer
            from tokenizers import models, normalizers, pre_tokenizers, trainers

            tok = HFTokenizer(models.BPE(unk_token=UNK))
            tok.normalizer = normalizers.Lowercase() if lowercase else None
            tok.pre_tokenizer = pre_tokenizers.Whitespace()
            trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=SPECIALS, show_progress=False)
            tok.train_from_iterator(list(texts), trainer=trainer)
            vocab = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
            return cls("bpe", [t for t, _ in vocab], list(prefix), list(suffix), lowercase, tok.to_str())
        seen: dict[str, None] = dict.fromkeys(SPECIALS)
        for token in extra:
            seen.setdefault(token)
        for text in texts:
            for token in cls._split(kind, text.lower() if lowercase else text):
                seen.setdefault(token)
        return cls(kind, list(seen), list(prefix), list(suffix), lowercase)

    @staticmethod
    def _split(kind: str, text: str) -> list[str]:
        if kind == "char":
            return list(text)
        return _WORD_RE.findall(text)

    # -- use -----------------------------------------------------------------------------------
    @property
    def pad_id(self) -> int:
        return self.index[PAD]

    def id_of(self, token: str) -> int:
        return self.index.get(token, self.index[UNK])

    def tokenize(self, text: str) -> list[str]:
        """Split text into vocabulary tokens (no special tokens added)."""
        if self.kind == "bpe":
            return self._bpe.encode(text, add_special_tokens=False).tokens
        body = text.lower() if self.lowercase else text
        return self._split(self.kind, body)

    def encode(self, text: str, specials: bool = True) -> Encoding:
        if not text or not text.strip():
            raise InputError("the text is empty: type a sentence")
        tokens = self.tokenize(text)
        if specials:
            tokens = self.prefix + tokens + self.suffix
        return Encoding([self.id_of(t) for t in tokens], tokens)

    def decode(self, ids) -> str:
        tokens = [self.vocab[i] for i in ids if self.vocab[i] not in SPECIALS]
        if self.kind == "char":
            return "".join(tokens)
        if self.kind == "bpe":
            return self._bpe.decode(list(ids))
        return " ".join(tokens)

    @property
    def merges(self) -> list[tuple[str, str]]:
        """BPE merge rules in the order they were learned (empty for char/word)."""
        if self.kind != "bpe":
            return []
        merges = json.loads(self.bpe_json)["model"]["merges"]
        return [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in merges]

    def to_dict(self) -> dict:
        return {"kind": self.kind, "vocab": self.vocab, "prefix": self.prefix, "suffix": self.suffix,
                "lowercase": self.lowercase, "bpe_json": self.bpe_json}

    @classmethod
    def from_dict(cls, data: dict) -> "Tokenizer":
        try:
            return cls(**data)
        except TypeError as exc:
            raise ModelLoadError(f"invalid tokenizer in config: {exc}") from None
