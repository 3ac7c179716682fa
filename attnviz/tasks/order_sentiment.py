"""``order-sentiment`` and ``order-sentiment-nopos``: the same words, opposite meanings.

"the food was good, not bad at all" is positive; "the food was bad, not good at all" is negative.
Every sentence has a positive and a negative adjective and which one is asserted depends only on
word order, so a model without positional encoding (``order-sentiment-nopos``) sees the two
sentences of a swapped pair as the same bag of words and cannot do better than chance on them —
the lecture point of positional encodings. Held out: (thing, adjective pair) combinations.

The position-free model also trains on one-adjective sentences ("the food was good"), which a bag of
words can answer. Without them its attention has nothing to learn and stays uniform (measured:
|P − 1/T| ≤ 0.014), so the permutation-equivariance figure would show two flat squares; with them
its [CLS] attention finds the sentiment words — content-dependent attention that a permutation
visibly moves — while the swapped pairs stay at chance.
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.models.config import ModelConfig
from attnviz.tasks.base import Batch, Task
from attnviz.tasks.text_data import held_out, pad_ids
from attnviz.text.tokenizer import CLS, Tokenizer

__all__ = ["OrderSentimentTask", "OrderSentimentNoPosTask", "THINGS", "POSITIVE", "NEGATIVE", "TEMPLATES",
           "swap"]

THINGS = ["food", "movie", "service", "hotel", "room", "book", "music", "weather", "game", "show", "coffee",
          "staff", "plot", "ending", "price", "trip", "view", "meal", "concert", "class", "lecture", "song",
          "car", "app"]
POSITIVE = ["good", "great", "nice", "fine", "lovely", "excellent", "superb", "pleasant", "wonderful",
            "brilliant", "perfect", "decent"]
NEGATIVE = ["bad", "awful", "poor", "terrible", "boring", "dull", "horrible", "bland", "weak", "nasty",
            "dreadful", "mediocre"]
# {x}: the thing; {a}: the adjective the sentence asserts (it decides the label); {b}: the one it denies
TEMPLATES = [
    "the {x} was {a} , not {b} at all",
    "the {x} was {a} and not {b}",
    "the {x} was not {b} but {a}",
    "{a} , not {b} : that is how the {x} was",
    "i expected the {x} to be {b} , but it was {a}",
    "the {x} seemed {b} at first , yet it was {a}",
]
# one adjective, so a bag of words decides the label (training mix of the position-free model only)
SINGLE_TEMPLATES = [
    "the {x} was {a}",
    "{a} : that is how the {x} was",
    "the {x} was {a} at all",
]
HELD_OUT = 0.2
LABELS = ["negative", "positive"]


def swap(text: str, a: str, b: str) -> str:
    """The same sentence with adjectives ``a`` and ``b`` exchanged (same words, opposite label)."""
    return " ".join(b if w == a else a if w == b else w for w in text.split(" "))


def _display(text: str) -> str:
    # templates keep punctuation as separate words (so splitting on spaces gives the tokens);
    # probes and examples read naturally
    return text.replace(" ,", ",").replace(" :", ":")


class OrderSentimentTask(Task):
    name = "order-sentiment"
    kind = "encoder"
    description = ('"good, not bad" vs "bad, not good": the same words with opposite meanings. Only word order '
                   "tells them apart, so the model needs positional encodings.")
    steps = 400  # held-out accuracy reaches 1.0 by step ~150
    batch_size = 64
    lr = 2e-3
    warmup = 50
    labels = LABELS
    pos = "learned"
    single_share = 0.0  # share of one-adjective sentences in a training batch
    targets = {"accuracy": (">=", 0.99), "swapped_pair_accuracy": (">=", 0.99)}  # checked by make_assets, tests

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        words = " ".join(THINGS + POSITIVE + NEGATIVE)
        self.tokenizer = Tokenizer.build("word", [" ".join(TEMPLATES).replace("{", " ").replace("}", " "), words],
                                         prefix=[CLS])
        self._test_combo = {(x, p, n): held_out(f"{x}|{p}|{n}", HELD_OUT, salt="order-sentiment")
                            for x in THINGS for p in POSITIVE for n in NEGATIVE}

    def model_config(self, **overrides) -> ModelConfig:
        cfg = dict(kind="encoder", vocab_size=len(self.tokenizer.vocab), n_layers=2, n_heads=2, d_model=32,
                   max_len=32, head="classify", pool="cls", n_classes=2, pos=self.pos)
        return ModelConfig(**{**cfg, **overrides})

    # -- data ----------------------------------------------------------------------------------
    def sentences(self, split: str, n: int, rng: np.random.Generator, pairs: bool = False) -> list[tuple[str, int]]:
        """``n`` (sentence, label) items from ``split``; with ``pairs`` every sentence is followed by its swap.

        Swapping the adjectives keeps the (thing, positive, negative) combination, so a pair never
        straddles the train/held-out boundary.
        """
        want_test = split != "train"
        out: list[tuple[str, int]] = []
        while len(out) < n:
            m = 2 * (n - len(out)) + 8
            x, t = rng.integers(len(THINGS), size=m), rng.integers(len(TEMPLATES), size=m)
            p, q = rng.integers(len(POSITIVE), size=m), rng.integers(len(NEGATIVE), size=m)
            positive = rng.integers(2, size=m)
            for i in range(m):
                thing, good, bad = THINGS[x[i]], POSITIVE[p[i]], NEGATIVE[q[i]]
                if self._test_combo[thing, good, bad] != want_test:
                    continue
                a, b = (good, bad) if positive[i] else (bad, good)
                text = TEMPLATES[t[i]].format(x=thing, a=a, b=b)
                out.append((text, int(positive[i])))
                if pairs:
                    out.append((swap(text, a, b), 1 - int(positive[i])))
                if len(out) >= n:
                    break
        return out[:n]

    def single_sentences(self, split: str, n: int, rng: np.random.Generator) -> list[tuple[str, int]]:
        """``n`` one-adjective (sentence, label) items from ``split``: the adjective alone decides."""
        want_test = split != "train"
        out: list[tuple[str, int]] = []
        while len(out) < n:
            x, t = int(rng.integers(len(THINGS))), int(rng.integers(len(SINGLE_TEMPLATES)))
            p, q, positive = int(rng.integers(len(POSITIVE))), int(rng.integers(len(NEGATIVE))), int(rng.integers(2))
            if self._test_combo[THINGS[x], POSITIVE[p], NEGATIVE[q]] != want_test:
                continue
            word = POSITIVE[p] if positive else NEGATIVE[q]
            out.append((SINGLE_TEMPLATES[t].format(x=THINGS[x], a=word), positive))
        return out

    def encode(self, items: list[tuple[str, int]]) -> Batch:
        index, prefix = self.tokenizer.index, self.tokenizer.prefix
        # generated sentences are lowercase words and punctuation between single spaces: splitting on
        # spaces gives the tokenizer's tokens (a test checks this)
        ids, pad = pad_ids([[index[w] for w in prefix + text.split(" ")] for text, _ in items], self.tokenizer.pad_id)
        return Batch({"ids": ids, "key_pad": pad}, torch.tensor([y for _, y in items]), len(items))

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        n_single = int(round(self.single_share * batch_size)) if split == "train" else 0
        items = self.sentences(split, batch_size - n_single, rng)
        if n_single:
            items += self.single_sentences(split, n_single, rng)
        return self.encode(items)

    # -- metrics -------------------------------------------------------------------------------
    def _accuracy(self, loaded, items) -> np.ndarray:
        batch = self.encode(items).to(loaded.device)
        with torch.no_grad():
            pred = loaded.model(**batch.inputs).argmax(-1)
        return (pred == batch.targets).cpu().numpy()

    def evaluate(self, loaded, seed: int = 12345, n: int = 1000) -> dict:
        """Held-out accuracy, and accuracy on held-out swapped pairs (both sentences of each pair scored).

        ``pair_both_correct`` is the share of pairs where both sentences are right: 0 for a model that
        cannot see order (it gives a pair's two sentences the same answer).
        """
        rng = np.random.default_rng(seed)
        plain = self._accuracy(loaded, self.sentences("test", n, rng))
        paired = self._accuracy(loaded, self.sentences("test", n, rng, pairs=True))
        both = paired[0::2] & paired[1::2]
        return {"accuracy": float(plain.mean()), "swapped_pair_accuracy": float(paired.mean()),
                "pair_both_correct": float(both.mean()), "n_sentences": n}

    # -- app -----------------------------------------------------------------------------------
    def probe_inputs(self) -> list:
        return [_display(TEMPLATES[0].format(x="food", a="good", b="bad")),
                _display(TEMPLATES[0].format(x="food", a="bad", b="good"))]


class OrderSentimentNoPosTask(OrderSentimentTask):
    """The same data for a model without positional encoding: it sees a bag of words."""

    name = "order-sentiment-nopos"
    description = ("The same sentences for a model without positional encoding: \"good, not bad\" and "
                   "\"bad, not good\" look identical to it.")
    pos = "none"
    steps = 800  # its [CLS] attention sharpens on the adjectives later than the plain task is learned
    single_share = 0.5
    # it must NOT tell a swapped pair apart, yet its attention must depend on content: one-adjective
    # sentences right, and [CLS] looking at the sentiment word rather than spreading evenly
    targets = {"swapped_pair_accuracy": ("<=", 0.60), "single_accuracy": (">=", 0.95),
               "cls_on_adjective": (">=", 0.5)}

    def evaluate(self, loaded, seed: int = 12345, n: int = 1000) -> dict:
        """The parent's metrics plus ``single_accuracy`` (held-out one-adjective sentences) and
        ``cls_on_adjective``: the mean attention [CLS] gives the adjective, in the head that gives it most
        (uniform attention would give 1/T ≈ 0.2), and ``max_deviation``, the mean over sentences of
        max |P − 1/T| over heads and rows of the last layer."""
        from attnviz.tasks.text_data import batched_probs

        out = super().evaluate(loaded, seed=seed, n=n)
        items = self.single_sentences("test", n, np.random.default_rng(seed + 1))
        batch = self.encode(items).to(loaded.device)
        logits, probs = batched_probs(loaded.model, batch.inputs)
        out["single_accuracy"] = float((logits.argmax(-1) == batch.targets).float().mean())
        words = [self.tokenizer.prefix + t.split(" ") for t, _ in items]
        adj = torch.tensor([next(i for i, w in enumerate(ws) if w in POSITIVE or w in NEGATIVE) for ws in words],
                           device=batch.targets.device)
        rows = torch.arange(len(items), device=adj.device)
        best = 0.0
        for p in probs:  # (B, H, T, T)
            cls_rows = p[:, :, 0]  # (B, H, T): what [CLS] looks at in each head
            heads = torch.arange(p.shape[1], device=adj.device)
            share = cls_rows[rows[:, None], heads[None, :], adj[:, None]].mean(0)  # (H,)
            best = max(best, float(share.max()))
        out["cls_on_adjective"] = best
        keep = ~batch.inputs["key_pad"]  # (B, T)
        length = keep.sum(1).float()  # (B,)
        last = probs[-1]
        dev = (last - 1.0 / length[:, None, None, None]).abs() * keep[:, None, :, None] * keep[:, None, None, :]
        out["max_deviation"] = float(dev.amax(dim=(1, 2, 3)).mean())
        return out
