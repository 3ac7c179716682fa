"""A Hugging Face tokenizer behind the small surface attnviz's own :class:`~attnviz.text.tokenizer.Tokenizer` has.

The token strip, the prediction panel and the pipeline read ``encode``, ``id_of``, ``vocab``, ``kind``,
``merges`` and ``decode``; this adapter gives them the model's own sub-word tokens and special tokens
(``[CLS]``/``[SEP]``, ``<s>``/``</s>``, ``Ġ``-prefixed byte-level pieces) unchanged.
"""

from __future__ import annotations

import json

from attnviz.errors import InputError
from attnviz.text.tokenizer import Encoding
from attnviz.text.vocab_rows import no_token_label

__all__ = ["HFTokenizer"]

# ``model_max_length`` of tokenizers saved without a limit is a huge sentinel (1e30)
_NO_LIMIT = 10**8


class HFTokenizer:
    """Wraps a ``transformers`` tokenizer.

    Parameters
    ----------
    tok : a loaded ``transformers`` tokenizer.
    vocab_size : the model's embedding rows; ``vocab`` is padded to it so a prediction over the
        model's outputs has a label for every row.
    """

    def __init__(self, tok, vocab_size: int = 0):
        self.hf = tok
        self.index: dict[str, int] = dict(tok.get_vocab())
        n = max(int(vocab_size), max(self.index.values(), default=-1) + 1)
        self.vocab = [no_token_label(i) for i in range(n)]  # rows without a token (padding) keep a label
        for token, i in self.index.items():
            self.vocab[i] = token
        self.lowercase = bool(getattr(tok, "do_lower_case", False))
        self._model_json: dict | None = None
        self._merges: list[tuple[str, str]] | None = None
        backend = getattr(tok, "backend_tokenizer", None)
        self.kind = self._model().get("type", "").lower() if backend is not None else "sentencepiece"

    def _model(self) -> dict:
        """The backend's model section (type, merges); parsed once, only when asked."""
        if self._model_json is None:
            try:
                self._model_json = json.loads(self.hf.backend_tokenizer.to_str()).get("model", {})
            except (AttributeError, ValueError):
                self._model_json = {}
        return self._model_json

    # -- the Tokenizer surface ---------------------------------------------------------------
    @property
    def max_length(self) -> int | None:
        """The tokenizer's own limit, when it states a real one."""
        n = getattr(self.hf, "model_max_length", None)
        return int(n) if n and n < _NO_LIMIT else None

    @property
    def pad_id(self) -> int:
        pad = self.hf.pad_token_id
        return int(pad) if pad is not None else 0

    def id_of(self, token: str) -> int:
        if token in self.index:
            return self.index[token]
        unk = self.hf.unk_token_id
        return int(unk) if unk is not None else -1

    def tokenize(self, text: str) -> list[str]:
        """Sub-word tokens without special tokens."""
        return list(self.hf.tokenize(text))

    def encode(self, text: str, specials: bool = True, max_length: int | None = None) -> Encoding:
        """IDs and token strings as the model sees them (special tokens included by default).

        ``max_length`` truncates with the tokenizer's own rule, which keeps the closing special token.
        """
        if not text or not str(text).strip():
            raise InputError("the text is empty: type a sentence")
        kw = {"truncation": True, "max_length": int(max_length)} if max_length else {"truncation": False}
        ids = list(self.hf(str(text), add_special_tokens=specials, verbose=False, **kw)["input_ids"])
        return Encoding(ids, list(self.hf.convert_ids_to_tokens(ids)))

    def decode(self, ids) -> str:
        return self.hf.decode(list(ids), skip_special_tokens=True)

    @property
    def merges(self) -> list[tuple[str, str]]:
        """BPE merge rules in learned order (empty for WordPiece, Unigram, SentencePiece)."""
        if self._merges is None:
            raw = self._model().get("merges", []) if self.kind == "bpe" else []
            self._merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m) for m in raw]
        return self._merges
