"""``reverse``: an encoder–decoder reads "a b c d" and writes "d c b a [EOS]".

The lecture figure: to write its k-th letter the decoder must look at the mirrored source letter, so
its cross-attention over (output × input) draws an anti-diagonal.

Why an encoder–decoder and not a decoder over "a b c d | d c b a": a causal decoder can copy by
content only from the position *after* the one it needs (a key cannot see its successor), so it
learns a shifted, letter-matching pattern that breaks on repeated letters; the bidirectional encoder
can store "my right neighbour" at each position, and both the positional and the content route land
on the mirrored letter itself.
"""

from __future__ import annotations

import string

import numpy as np
import torch

from attnviz.models.config import ModelConfig
from attnviz.tasks.base import Batch, Task, TextInput
from attnviz.tasks.seq_data import (
    alignment_hits, batch_attention, best_head, check_vocab, encode_pairs, greedy_scores, parse_symbols,
    sample_split,
)
from attnviz.text.tokenizer import BOS, EOS, Tokenizer

__all__ = ["ReverseTask", "mirror_position"]

ALPHABET = list(string.ascii_lowercase)
MIN_N, MAX_N = 2, 12  # letters per input sequence


def mirror_position(row: int, n: int) -> int:
    """Source position the decoder row ``row`` must read: row k writes y_k = x_{n-1-k}."""
    return n - 1 - row


class ReverseTask(Task):
    name = "reverse"
    kind = "encoder-decoder"
    description = "Encoder–decoder that reverses a sequence of letters: 'a b c d' → 'd c b a'."
    steps = 600
    batch_size = 64
    lr = 3e-3
    warmup = 100
    n_eval = 1000
    targets = {"exact": (">=", 0.99), "anti_diagonal": (">=", 0.90)}  # checked by make_assets and the tests

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        # one vocabulary for both sides; encode() appends [EOS] to the source
        self.tokenizer = Tokenizer.build("char", [], suffix=[EOS], extra=ALPHABET)
        self.letter_ids = np.array([self.tokenizer.id_of(c) for c in ALPHABET])
        self.bos_id, self.eos_id = self.tokenizer.id_of(BOS), self.tokenizer.id_of(EOS)

    def model_config(self, **overrides) -> ModelConfig:
        cfg = dict(kind="encoder-decoder", vocab_size=len(self.tokenizer.vocab), n_layers=2, n_heads=2,
                   d_model=32, mlp_ratio=2.0, max_len=MAX_N + 2, head="lm", pos="learned")
        cfg.update(overrides)
        return ModelConfig(**cfg)

    # -- data ------------------------------------------------------------------------------------
    def _draw(self, rng: np.random.Generator, k: int) -> list[tuple[int, ...]]:
        lengths = rng.integers(MIN_N, MAX_N + 1, k)
        letters = self.letter_ids[rng.integers(0, len(ALPHABET), (k, MAX_N))].tolist()  # (k, MAX_N)
        return [tuple(row[:n]) for row, n in zip(letters, lengths)]

    def sample_letters(self, split: str, n: int, rng: np.random.Generator) -> list[tuple[int, ...]]:
        """``n`` input sequences (letter ids) of the given split."""
        return sample_split(self._draw, lambda ex: ex, split, n, rng)

    def encode(self, seqs) -> tuple[dict, torch.Tensor, list]:
        """Inputs, targets and the gold outputs (reversed letters) of a list of letter-id sequences."""
        gold = [list(s)[::-1] for s in seqs]
        pad = self.tokenizer.pad_id
        inputs, targets = encode_pairs([list(s) + [self.eos_id] for s in seqs], gold, pad, pad,
                                       self.bos_id, self.eos_id)
        return inputs, targets, gold

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        inputs, targets, _ = self.encode(self.sample_letters(split, batch_size, rng))
        return Batch(inputs, targets, batch_size)

    # -- metrics ---------------------------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self, loaded, seed: int = 12345) -> dict:
        """Greedy exact-sequence accuracy and the cross-attention anti-diagonal on held-out sequences.

        ``anti_diagonal``: share of output letters whose decoder row, in the best single
        (layer, head) of the cross-attention, puts its largest weight on the mirrored source letter
        (``anti_diagonal_layer_mean``: the same for the best layer's head average).
        """
        check_vocab(self.tokenizer, loaded.tokenizer)
        model, dev = loaded.model, loaded.device
        model.eval()
        seqs = self.sample_letters("test", self.n_eval, np.random.default_rng(seed))
        inputs, _, gold = self.encode(seqs)
        inputs = {k: v.to(dev) for k, v in inputs.items()}
        exact, ok, total = greedy_scores(model, inputs, gold, self.bos_id, self.eos_id, loaded.config.max_len - 1)
        _, probs = batch_attention(model, inputs)
        triples = [(b, r, mirror_position(r, len(s))) for b, s in enumerate(seqs) for r in range(len(s))]
        per_head, per_layer = alignment_hits(probs["cross"], triples)
        layer, head, share = best_head(per_head)
        return {"exact": exact / len(seqs), "token_accuracy": ok / total, "anti_diagonal": share,
                "anti_diagonal_layer": layer, "anti_diagonal_head": head,
                "anti_diagonal_layer_mean": float(per_layer.max()), "n_eval": len(seqs)}

    # -- inputs for the app ----------------------------------------------------------------------
    def probe_inputs(self) -> list[str]:
        return ["attention", "lecture", "abcdefgh", "transformer"]

    def info(self) -> dict:
        return {"alphabet": "".join(ALPHABET), "max_letters": MAX_N,
                "format": "source x1 … xn [EOS] → target xn … x1 [EOS]; decoder row k should attend to "
                          "source position n-1-k (the anti-diagonal)"}

    def read_text(self, tokenizer, text: str, max_len: int, truncate: bool = False) -> TextInput:
        """Letters (spaces ignored) as the source; the adapter reverses them greedily and traces the decoder."""
        letters, notice = parse_symbols(text, ALPHABET, MAX_N, truncate, "letters a–z, e.g. 'attention'")
        tok = tokenizer or self.tokenizer
        src = letters + [EOS]
        return TextInput(src, [tok.id_of(t) for t in src], meta={"notice": notice} if notice else {}, seq2seq=True)

    def describe_output(self, source: TextInput, meta: dict) -> None:
        expected = "".join(t for t in source.tokens if t != EOS)[::-1]
        meta.update(expected_text=expected, correct=meta["output_text"] == expected)
