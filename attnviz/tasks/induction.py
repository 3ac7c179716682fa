"""``induction``: a two-layer decoder continues a repeated random sequence "x1..xn x1..xn".

After the first copy nothing is predictable; in the second copy the next letter is the one that
followed the current letter last time. Two layers learn it with an *induction head*: a layer-0 head
copies each position's previous letter, and a layer-1 head whose query (the current letter) matches
that copied letter attends to "the token after the previous occurrence" and copies it.

Choices that make the textbook circuit (rather than an equally accurate fuzzy one) appear within a
minute of CPU training: sinusoidal positions, so "one position back" is the same rotation everywhere
(with learned positions the tiny model settles on heads that look 2–4 tokens back and a layer-1 head
whose aim drifts with the copy length); 0–3 unrelated letters before the first copy, so absolute
positions are no shortcut; copy lengths n = 1..10 drawn with P(n) ∝ 1/n, so short copies — where
only "the token after the previous occurrence" is already visible — are frequent.
"""

from __future__ import annotations

import string

import numpy as np
import torch

from attnviz.models.config import ModelConfig
from attnviz.tasks.base import IGNORE, Batch, Task, TextInput
from attnviz.tasks.seq_data import batch_attention, best_head, check_vocab, pad_rows, parse_symbols, sample_split
from attnviz.text.tokenizer import BOS, Tokenizer

__all__ = ["InductionTask", "induction_target"]

ALPHABET = list(string.ascii_lowercase)
MIN_N, MAX_N = 1, 10  # letters in the first copy (distinct, so every continuation is unambiguous)
MAX_PREFIX = 3  # random letters before the first copy, so its absolute position is no shortcut


def induction_target(query: int, n: int) -> int:
    """Key position an induction head reads at ``query`` in "[BOS] p1..pm x1..xn x1..xn".

    The query m + n + i holds the second copy of x_i (1 ≤ i ≤ n); the token after its previous
    occurrence sits at position m + i + 1 = query - n + 1 whatever the prefix length m (for i = n it
    is the second copy's x_1, for n = 1 the query itself).
    """
    return query - n + 1


class InductionTask(Task):
    name = "induction"
    kind = "decoder"
    description = "Two-layer decoder that continues a repeated random sequence: an induction head."
    steps = 1200
    batch_size = 64
    lr = 3e-3
    warmup = 100
    n_eval = 1000
    targets = {"repeat_accuracy": (">=", 0.90), "induction_score": (">=", 0.50)}  # make_assets checks these
    # data knobs (the bundled model uses these defaults)
    max_prefix = MAX_PREFIX
    min_n = MIN_N
    length_power = 1.0  # P(n) ∝ n^-length_power

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.tokenizer = Tokenizer.build("char", [], prefix=[BOS], extra=ALPHABET)
        self.letter_ids = np.array([self.tokenizer.id_of(c) for c in ALPHABET])
        self.bos_id = self.tokenizer.id_of(BOS)

    def model_config(self, **overrides) -> ModelConfig:
        cfg = dict(kind="decoder", vocab_size=len(self.tokenizer.vocab), n_layers=2, n_heads=2, d_model=64,
                   mlp_ratio=2.0, max_len=1 + self.max_prefix + 2 * MAX_N, head="lm", pos="sinusoidal")
        cfg.update(overrides)
        return ModelConfig(**cfg)

    # -- data ------------------------------------------------------------------------------------
    def _draw(self, rng: np.random.Generator, k: int) -> list[tuple]:
        lengths = np.arange(self.min_n, MAX_N + 1)
        weights = lengths ** -float(self.length_power)
        n_all = rng.choice(lengths, k, p=weights / weights.sum())
        m_all = rng.integers(0, self.max_prefix + 1, k)
        order = np.argsort(rng.random((k, len(ALPHABET))), axis=1)  # (k, 26): a random permutation per row
        # prefix letters come from the letters not used by the repeated part (order[n:]), so every
        # query in the second copy has exactly one previous occurrence
        pick = (rng.random((k, self.max_prefix)) * (len(ALPHABET) - n_all)[:, None]).astype(int) + n_all[:, None]
        letters = self.letter_ids[order]  # (k, 26)
        prefixes = np.take_along_axis(letters, pick, axis=1).tolist()  # (k, max_prefix)
        return [(tuple(p[:m]), tuple(row[:n])) for p, row, n, m in zip(prefixes, letters.tolist(), n_all, m_all)]

    def sample_examples(self, split: str, n: int, rng: np.random.Generator) -> list[tuple]:
        """``n`` (prefix, half) pairs of letter ids; the split hashes the repeated half only."""
        return sample_split(self._draw, lambda ex: ex[1], split, n, rng)

    def encode_example(self, prefix, half) -> tuple[list[int], list[int]]:
        """"[BOS] prefix x x" and its targets: inside the second copy the next letter of the repetition
        (at its last letter x_1 again, as a third copy would go on), IGNORE elsewhere."""
        ids = [self.bos_id, *prefix, *half, *half]
        n = len(half)
        start = 1 + len(prefix) + n  # position of the second copy's first letter
        targets = [IGNORE] * len(ids)
        for q in range(start, len(ids)):
            targets[q] = ids[induction_target(q, n)]
        return ids, targets

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        return self.sample_batch_of(self.sample_examples(split, batch_size, rng))

    def sample_batch_of(self, examples) -> Batch:
        """The padded batch of given (prefix, half) examples."""
        rows = [self.encode_example(*ex) for ex in examples]
        ids = pad_rows([r[0] for r in rows], self.tokenizer.pad_id)  # (B, T)
        tgt = pad_rows([r[1] for r in rows], IGNORE)  # (B, T)
        # right padding needs no key mask: causal attention never looks at later (padded) positions
        return Batch({"ids": torch.from_numpy(ids)}, torch.from_numpy(tgt), len(rows))

    # -- metrics ---------------------------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self, loaded, seed: int = 12345) -> dict:
        """Next-letter accuracy on the repeated half and the induction score of the best head.

        ``induction_score``: mean attention weight, over the second-copy positions, from the query
        to the token after its previous occurrence, for the (layer, head) where that mean is largest.
        ``previous_token_score``: the same for the layer-0 head that best attends one token back.
        """
        check_vocab(self.tokenizer, loaded.tokenizer)
        model, dev = loaded.model, loaded.device
        model.eval()
        examples = self.sample_examples("test", self.n_eval, np.random.default_rng(seed))
        batch = self.sample_batch_of(examples)
        logits, probs = batch_attention(model, {"ids": batch.inputs["ids"].to(dev)})
        b, q = np.nonzero(batch.targets.numpy() != IGNORE)  # every scored (example, query)
        n = np.array([len(ex[1]) for ex in examples])[b]
        correct = logits.argmax(-1).cpu().numpy()[b, q] == batch.targets.numpy()[b, q]
        mass = np.stack([p[b, :, q, induction_target(q, n)].mean(0) for p in probs["self"]])  # (L, H)
        layer, head, score = best_head(mass)
        # the other half of the circuit: the layer-0 head that looks one token back
        prev = probs["self"][0][b, :, q, q - 1].mean(0)  # (H,)
        return {"repeat_accuracy": float(correct.mean()), "induction_score": score, "induction_layer": layer,
                "induction_head": head, "previous_token_score": float(prev.max()),
                "previous_token_head": int(prev.argmax()), "n_eval": len(examples)}

    # -- inputs for the app ----------------------------------------------------------------------
    def probe_inputs(self) -> list[str]:
        return ["blackhorseblackhorse", "dragonflydragonfly", "zqlemonlemon"]

    def info(self) -> dict:
        return {"alphabet": "".join(ALPHABET), "max_letters": self.max_prefix + 2 * MAX_N,
                "format": "[BOS] p1 … pm x1 … xn x1 … xn: up to 3 random letters, then distinct letters twice; "
                          "type letters, e.g. 'dragonflydrag'"}

    def read_text(self, tokenizer, text: str, max_len: int, truncate: bool = False) -> TextInput:
        """Typed letters (spaces ignored) after [BOS]; the trace's prediction is the next letter."""
        letters, notice = parse_symbols(text, ALPHABET, max_len - 1, truncate,
                                        "letters a–z, e.g. 'dragonflydrag'")
        tok = tokenizer or self.tokenizer
        ids = [tok.id_of(BOS)] + [tok.id_of(c) for c in letters]
        return TextInput([tok.vocab[i] for i in ids], ids, meta={"notice": notice} if notice else {})
