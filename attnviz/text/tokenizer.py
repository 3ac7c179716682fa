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
    """Token ids and labels; ``unknown`` are pieces of the text read as [UNK], ``dropped`` characters
    the tokenizer left out (both in the order they occur, each once)."""

    ids: list[int]
    tokens: list[str]
    unknown: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    @property
    def notice(self) -> str | None:
        """One sentence for the user about what the model will not see as typed, or None."""
        parts = []
        if self.unknown:
            parts.append(f"read as [UNK] (not in the model's vocabulary): {_show(self.unknown)}")
        if self.dropped:
            parts.append(f"left out by the tokenizer: {_show(self.dropped)}")
        return "; ".join(parts) or None


def _show(pieces: list[str], limit: int = 8) -> str:
    # repr shows control characters as escapes (a bell is '\x07', not an invisible nothing)
    shown = ", ".join(repr(p) for p in pieces[:limit])
    return shown + (f" and {len(pieces) - limit} more" if len(pieces) > limit else "")


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
        """Ids and tokens of ``text``, with what was read as [UNK] or left out (see :class:`Encoding`)."""
        if not text or not text.strip():
            raise InputError("the text is empty: type a sentence")
        unknown, dropped = self._losses(text)
        tokens = self.tokenize(text)
        if specials:
            tokens = self.prefix + tokens + self.suffix
        return Encoding([self.id_of(t) for t in tokens], tokens, unknown, dropped)

    def _losses(self, text: str) -> tuple[list[str], list[str]]:
        """Pieces of ``text`` read as [UNK] and non-space characters no token covers."""
        covered = [False] * len(text)
        unknown: list[str] = []
        if self.kind == "bpe":
            enc = self._bpe.encode(text, add_special_tokens=False)
            pieces = [(tok == UNK, a, b) for tok, (a, b) in zip(enc.tokens, enc.offsets)]
        else:
            body = text.lower() if self.lowercase else text
            if self.kind == "char":
                spans = [(i, i + 1) for i in range(len(body))]
            else:
                spans = [m.span() for m in _WORD_RE.finditer(body)]
            # lower() keeps the length of almost every string; where it does not, offsets are approximate
            pieces = [(body[a:b] not in self.index, a, b) for a, b in spans]
        for is_unknown, a, b in pieces:
            for i in range(a, min(b, len(text))):
                covered[i] = True
            if is_unknown and text[a:b] not in unknown:
                unknown.append(text[a:b])
        dropped = list(dict.fromkeys(c for c, seen in zip(text, covered) if not seen and not c.isspace()))
        return unknown, dropped

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
