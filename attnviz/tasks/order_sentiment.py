"""``order-sentiment`` and ``order-sentiment-nopos``: the same words, opposite meanings.

"the food was good, not bad at all" is positive; "the food was bad, not good at all" is negative.
Every sentence has a positive and a negative adjective and which one is asserted depends only on
word order, so a model without positional encoding (``order-sentiment-nopos``) sees the two
sentences of a swapped pair as the same bag of words and cannot do better than chance on them —
the lecture point of positional encodings. Held out: (thing, adjective pair) combinations.
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

    def encode(self, items: list[tuple[str, int]]) -> Batch:
        index, prefix = self.tokenizer.index, self.tokenizer.prefix
        # generated sentences are lowercase words and punctuation between single spaces: splitting on
        # spaces gives the tokenizer's tokens (a test checks this)
        ids, pad = pad_ids([[index[w] for w in prefix + text.split(" ")] for text, _ in items], self.tokenizer.pad_id)
        return Batch({"ids": ids, "key_pad": pad}, torch.tensor([y for _, y in items]), len(items))

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        return self.encode(self.sentences(split, batch_size, rng))

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
    targets = {"swapped_pair_accuracy": ("<=", 0.60)}  # it must NOT tell a swapped pair apart
