"""``charlm``: a character-level language model of Python's own documentation.

The text is ``pydoc_data.topics.topics`` (the help pages of the ``help()`` function), which every
Python installation ships, so nothing is downloaded. Whole documents are held out (chosen by a hash
of their name). The metric is the held-out loss in nats per character next to the loss of an
add-one smoothed bigram model fitted on the same training text: a decoder that uses its context
must beat it clearly.
"""

from __future__ import annotations

import platform

import numpy as np
import torch

from attnviz.models.config import ModelConfig
from attnviz.tasks.base import Batch, Task
from attnviz.tasks.text_data import held_out
from attnviz.text.tokenizer import Tokenizer

__all__ = ["CharLMTask", "load_corpus", "bigram_loss"]

HELD_OUT = 0.12
SEQ_LEN = 128  # the context: long enough for the positional table to show its waves (issue 16)
PROBES = ["If an expression list is present, it is evaluated.", "for item in items:\n    print(item)"]


def load_corpus() -> tuple[dict[str, str], dict[str, str]]:
    """(train, held-out) documents of ``pydoc_data.topics``, split by a hash of each topic's name."""
    from pydoc_data.topics import topics

    train, test = {}, {}
    for name in sorted(topics):
        (test if held_out(name, HELD_OUT, salt="charlm") else train)[name] = topics[name]
    return train, test


def bigram_loss(train_ids: np.ndarray, prev: np.ndarray, nxt: np.ndarray, vocab: int) -> float:
    """Mean -log p(next | prev) in nats of an add-one smoothed bigram model counted on ``train_ids``."""
    counts = np.ones((vocab, vocab), dtype=np.float64)
    np.add.at(counts, (train_ids[:-1], train_ids[1:]), 1.0)
    logp = np.log(counts / counts.sum(1, keepdims=True))  # (V, V): row = previous character
    return float(-logp[prev, nxt].mean())


class CharLMTask(Task):
    name = "charlm"
    kind = "decoder"
    description = ("A character-level language model of Python's help pages: each character attends to the "
                   "ones before it to guess the next.")
    steps = 1600  # ~150 ms of CPU per step (one thread, 128 characters): 4 min; held-out loss ~0.8 nats below bigram
    batch_size = 32
    lr = 3e-3
    warmup = 100
    seq_len = SEQ_LEN
    # "clearly below the bigram baseline": at least 0.3 nats per character better (checked by make_assets, tests)
    targets = {"gap_to_bigram": (">=", 0.3)}

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        train, test = load_corpus()
        self.train_docs, self.test_docs = sorted(train), sorted(test)
        train_text, test_text = "\n\n".join(train.values()), "\n\n".join(test.values())
        self.tokenizer = Tokenizer.build("char", [train_text], lowercase=False)
        self.train_ids = self._ids(train_text)
        self.test_ids = self._ids(test_text)
        self.n_train = len(self.train_ids) // self.seq_len  # windows per epoch

    def _ids(self, text: str) -> np.ndarray:
        """Character ids of ``text`` ([UNK] for characters outside the vocabulary).

        A lookup table indexed by code point, not a Python list of a million ids: building that list
        and its array held the interpreter lock for ~40 ms on every load of charlm in the app, a visible
        freeze of the window (issue 18)."""
        index, unk = self.tokenizer.index, self.tokenizer.id_of("[UNK]")
        codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        lut = np.full(int(codes.max()) + 1 if codes.size else 1, unk, dtype=np.int64)
        for token, i in index.items():
            if len(token) == 1 and ord(token) < lut.size:  # the specials ("[UNK]", ...) are not characters
                lut[ord(token)] = i
        return lut[codes]

    def model_config(self, **overrides) -> ModelConfig:
        # sinusoidal positions: the lesson's positional-encoding figure shows this 128 x 64 table of waves
        cfg = dict(kind="decoder", vocab_size=len(self.tokenizer.vocab), n_layers=2, n_heads=4, d_model=64,
                   max_len=self.seq_len, head="lm", pos="sinusoidal")
        return ModelConfig(**{**cfg, **overrides})

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        ids = self.train_ids if split == "train" else self.test_ids
        starts = rng.integers(0, len(ids) - self.seq_len - 1, size=batch_size)
        windows = ids[starts[:, None] + np.arange(self.seq_len + 1)]  # (B, T+1)
        w = torch.from_numpy(windows)
        return Batch({"ids": w[:, :-1]}, w[:, 1:], batch_size)

    def held_out_windows(self) -> np.ndarray:
        """The held-out text cut into consecutive windows of T+1 characters (T predictions each)."""
        T = self.seq_len
        n = (len(self.test_ids) - 1) // T
        return np.stack([self.test_ids[i * T : i * T + T + 1] for i in range(n)])  # (n, T+1)

    def evaluate(self, loaded, seed: int = 12345) -> dict:
        """Held-out loss and next-character accuracy over every held-out character, and the bigram loss
        on the same predictions. The held-out text is fixed, so ``seed`` does not change the result."""
        windows = torch.from_numpy(self.held_out_windows())
        total, correct, count = 0.0, 0, 0
        with torch.no_grad():
            for chunk in windows.split(256):
                chunk = chunk.to(loaded.device)
                logits = loaded.model(ids=chunk[:, :-1])  # (b, T, V)
                tgt = chunk[:, 1:]
                total += float(torch.nn.functional.cross_entropy(logits.transpose(1, 2), tgt, reduction="sum"))
                correct += int((logits.argmax(-1) == tgt).sum())
                count += tgt.numel()
        w = windows.numpy()
        base = bigram_loss(self.train_ids, w[:, :-1].ravel(), w[:, 1:].ravel(), len(self.tokenizer.vocab))
        loss = total / count
        return {"loss": loss, "bigram_loss": base, "gap_to_bigram": base - loss, "accuracy": correct / count,
                "n_chars": count}

    def probe_inputs(self) -> list:
        return list(PROBES)

    def info(self) -> dict:
        return {"corpus": f"pydoc_data.topics of Python {platform.python_version()}",
                "held_out_docs": self.test_docs}
