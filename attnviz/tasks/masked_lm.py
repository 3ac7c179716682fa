"""``masked-lm``: BERT-style masked-token pre-training on the project's own generated sentences.

The text is what two other tasks generate: the coref sentences ("the animal didn't cross the street
because it was too tired") and the order-sentiment sentences ("the food was good , not bad at all"),
half each, from their *training* combinations; held out are the sentences of their held-out
(noun, adjective) and (thing, adjective pair) combinations, which training never generates.

The recipe of BERT (Devlin et al., 2019): in every training sentence 15 % of the word positions are
chosen (at least one); of those 80 % are replaced by [MASK], 10 % by a random word, 10 % kept; the
loss is the cross-entropy of the original word at the chosen positions only. Nothing else is taught:
no labels, no attention loss. The held-out metrics mask the chosen positions with [MASK] only.

What the model has to find out by itself, and :meth:`MaskedLMTask.evaluate` measures on held-out
sentences: which word fills a [MASK] (top-1 accuracy at masked positions, next to the best
context-free guess, the most frequent training word, on the same positions); that a masked pronoun
is "it" (the template word no neighbour fixes alone); and that the asserted adjective of a
"good, not bad" sentence has the polarity opposite to the denied one (which only the other
adjective tells).
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np
import torch

from attnviz.models.config import ModelConfig
from attnviz.tasks.base import IGNORE, Batch, Task, TextInput
from attnviz.tasks.text_data import pad_ids
from attnviz.text.fit import fit_tokens
from attnviz.text.tokenizer import CLS, MASK, SEP, SPECIALS, Tokenizer

__all__ = ["MaskedLMTask", "mask_positions", "MASK_SHARE"]

MASK_SHARE = 0.15  # of the word positions of a sentence (BERT)
SPLIT_80_10_10 = (0.8, 0.1, 0.1)  # of the chosen positions: [MASK], a random word, kept
UNIGRAM_SAMPLE = 4000  # training sentences counted for the frequency baseline
PROBES = ["the animal didn't cross the street because [MASK] was too hungry",
          "the meal was [MASK] , not bad at all"]
_MASK_RE = re.compile(r"\[mask\]", re.IGNORECASE)


def mask_positions(lengths: list[int], rng: np.random.Generator, share: float = MASK_SHARE) -> list[np.ndarray]:
    """For each sentence of ``lengths`` words: the chosen word indices (each with probability ``share``,
    at least one), sorted."""
    out = []
    for n in lengths:
        chosen = np.flatnonzero(rng.random(n) < share)
        if chosen.size == 0:
            chosen = np.array([int(rng.integers(n))])
        out.append(chosen)
    return out


class MaskedLMTask(Task):
    name = "masked-lm"
    kind = "encoder"
    description = ("BERT-style pre-training: 15 % of the words of generated sentences are hidden (80 % [MASK], "
                   "10 % a random word, 10 % kept) and the encoder guesses them from both sides. Type [MASK] "
                   "for a word to see what each [MASK] looks at and what it guesses.")
    steps = 2000  # ~80 ms of CPU per step (one thread): under 3 min of CPU; train accuracy plateaus by ~1,500
    batch_size = 64
    lr = 2e-3
    warmup = 100
    # checked by make_assets and the tests: the guess beats the frequency baseline clearly, and the two
    # things only context can tell emerged
    targets = {"masked_accuracy": (">=", 0.5), "gap_to_unigram": (">=", 0.25), "it_accuracy": (">=", 0.9),
               "it_elsewhere": ("<=", 0.05), "polarity_accuracy": (">=", 0.9)}

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        from attnviz.tasks.coref import CorefTask
        from attnviz.tasks.order_sentiment import OrderSentimentTask

        self.coref, self.sentiment = CorefTask(seed), OrderSentimentTask(seed)
        words = [" ".join(t for t in task.tokenizer.vocab if t not in SPECIALS) for task in (self.coref, self.sentiment)]
        self.tokenizer = Tokenizer.build("word", words, prefix=[CLS], suffix=[SEP])
        self.mask_id = self.tokenizer.id_of(MASK)
        self.word_ids = np.array([i for i, t in enumerate(self.tokenizer.vocab) if t not in SPECIALS])
        self._unigram: int | None = None

    def model_config(self, **overrides) -> ModelConfig:
        cfg = dict(kind="encoder", vocab_size=len(self.tokenizer.vocab), n_layers=2, n_heads=4, d_model=64,
                   max_len=32, head="mlm")
        return ModelConfig(**{**cfg, **overrides})

    # -- data ----------------------------------------------------------------------------------
    def sentences(self, split: str, n: int, rng: np.random.Generator) -> list[tuple[str, str]]:
        """``n`` (text, source) pairs of ``split`` ("train" or "test"), alternating (a coref sentence first).

        ``source`` is "coref", or "positive" / "negative" for a sentiment sentence: which polarity it asserts
        (every one has one adjective of each polarity, and asserts one of them)."""
        split = "train" if split == "train" else "test"
        n_coref = (n + 1) // 2
        coref = [t for t, _ in self.coref.sentences(split, n_coref, rng)]
        senti = [(t, "positive" if y else "negative") for t, y in self.sentiment.sentences(split, n - n_coref, rng)]
        return [(coref[i // 2], "coref") if i % 2 == 0 else senti[i // 2] for i in range(n)]

    def words(self, text: str) -> list[str]:
        return self.tokenizer.tokenize(text)

    def encode_masked(self, word_lists: list[list[str]], chosen: list[np.ndarray], rng: np.random.Generator | None):
        """Ids with the ``chosen`` word indices hidden, and targets (the original ids there, IGNORE elsewhere).

        ``rng`` given: the training corruption, 80 % [MASK] / 10 % a random word / 10 % kept; None: every
        chosen position becomes [MASK] (how held-out accuracy is measured)."""
        index, pre, suf = self.tokenizer.index, self.tokenizer.prefix, self.tokenizer.suffix
        seqs, tgts = [], []
        for words, where in zip(word_lists, chosen):
            ids = [index[t] for t in pre + words + suf]
            tgt = [IGNORE] * len(ids)
            for w in where:
                pos = len(pre) + int(w)
                tgt[pos] = ids[pos]
                r = 0.0 if rng is None else rng.random()
                if r < SPLIT_80_10_10[0]:
                    ids[pos] = self.mask_id
                elif r < SPLIT_80_10_10[0] + SPLIT_80_10_10[1]:
                    ids[pos] = int(rng.choice(self.word_ids))
            seqs.append(ids)
            tgts.append(tgt)
        ids, pad = pad_ids(seqs, self.tokenizer.pad_id)
        target = torch.full(ids.shape, IGNORE, dtype=torch.long)  # (B, T)
        for i, t in enumerate(tgts):
            target[i, : len(t)] = torch.tensor(t)
        return Batch({"ids": ids, "key_pad": pad}, target, len(word_lists))

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        words = [self.words(t) for t, _ in self.sentences(split, batch_size, rng)]
        chosen = mask_positions([len(w) for w in words], rng)
        return self.encode_masked(words, chosen, rng if split == "train" else None)

    # -- metrics -------------------------------------------------------------------------------
    def unigram_id(self) -> int:
        """The most frequent word of ``UNIGRAM_SAMPLE`` training sentences: the best guess without context."""
        if self._unigram is None:
            rng = np.random.default_rng(7)
            counts = Counter(w for t, _ in self.sentences("train", UNIGRAM_SAMPLE, rng) for w in self.words(t))
            self._unigram = self.tokenizer.index[counts.most_common(1)[0][0]]
        return self._unigram

    def predict(self, loaded, batch: Batch) -> torch.Tensor:
        """Logits (B, T, V) of ``batch`` (on the model's device), in chunks of 256."""
        outs = []
        with torch.no_grad():
            for s in range(0, batch.n_items, 256):
                inputs = {k: v[s : s + 256].to(loaded.device) for k, v in batch.inputs.items()}
                outs.append(loaded.model(**inputs).float().cpu())
        return torch.cat(outs)

    def evaluate(self, loaded, seed: int = 12345, n: int = 1000) -> dict:
        """On ``n`` held-out sentences (seed ``seed``): top-1 accuracy at [MASK] positions next to the most
        frequent training word's, and ``it_elsewhere``, the share of other hidden words guessed "it"; with "it"
        alone masked in the coref half, the share guessed "it"; with the
        asserted adjective alone masked in the sentiment half, the share whose guess has its polarity."""
        from attnviz.tasks.order_sentiment import NEGATIVE, POSITIVE

        rng = np.random.default_rng(seed)
        items = self.sentences("test", n, rng)
        words = [self.words(t) for t, _ in items]
        batch = self.encode_masked(words, mask_positions([len(w) for w in words], rng), None)
        pred = self.predict(loaded, batch).argmax(-1)
        keep = batch.targets != IGNORE
        acc = float((pred[keep] == batch.targets[keep]).float().mean())
        unigram = float((batch.targets[keep] == self.unigram_id()).float().mean())
        # guessing "it" everywhere would pass the pronoun check: how often "it" is guessed for another word
        it_id = self.tokenizer.index["it"]
        not_it = keep & (batch.targets != it_id)
        it_elsewhere = float((pred[not_it] == it_id).float().mean())
        # "it" hidden: the coref half
        coref = [w for w, (_, src) in zip(words, items) if src == "coref"]
        it_batch = self.encode_masked(coref, [np.array([w.index("it")]) for w in coref], None)
        it_pred = self.predict(loaded, it_batch).argmax(-1)[it_batch.targets != IGNORE]
        it_acc = float((it_pred == self.tokenizer.index["it"]).float().mean())
        # the asserted adjective hidden (the one of the asserted polarity): right when the guess has that polarity
        lists = {"positive": POSITIVE, "negative": NEGATIVE}
        senti = [(w, src) for w, (_, src) in zip(words, items) if src in lists]
        where = [np.array([next(i for i, x in enumerate(w) if x in lists[src])]) for w, src in senti]
        s_batch = self.encode_masked([w for w, _ in senti], where, None)
        s_pred = self.predict(loaded, s_batch).argmax(-1)[s_batch.targets != IGNORE].tolist()
        right = [self.tokenizer.vocab[p] in lists[src] for p, (_, src) in zip(s_pred, senti)]
        return {"masked_accuracy": acc, "unigram_accuracy": unigram, "gap_to_unigram": acc - unigram,
                "it_accuracy": it_acc, "it_elsewhere": it_elsewhere, "polarity_accuracy": float(np.mean(right)), "n_sentences": n,
                "n_masked": int(keep.sum())}

    # -- app -----------------------------------------------------------------------------------
    def read_text(self, tokenizer, text: str, max_len: int, truncate: bool = False) -> TextInput:
        """Words, with ``[MASK]`` (any case) read as the mask token; the trace's ``labels`` are the
        vocabulary, so every position's prediction is read as words."""
        from attnviz.errors import InputError

        tok = tokenizer or self.tokenizer
        if not text or not text.strip():
            raise InputError("the text is empty: type a sentence, with [MASK] for a hidden word")
        words: list[str] = []
        parts = _MASK_RE.split(text)
        for i, part in enumerate(parts):
            words += tok.tokenize(part)
            if i < len(parts) - 1:
                words.append(MASK)
        if not words:
            raise InputError("the text has no words: type a sentence, with [MASK] for a hidden word")
        tokens = tok.prefix + words + tok.suffix
        ids, tokens, notice = fit_tokens([tok.id_of(t) for t in tokens], tokens, max_len, truncate, "the text")
        notices = [notice] if notice else []
        unk = tok.id_of("[UNK]")
        unknown = sorted({t for t, i in zip(tokens, ids) if i == unk})
        if unknown:
            notices.append(f"words the model never saw (read as [UNK]): {', '.join(unknown)}")
        if MASK not in tokens:
            notices.append("no [MASK] in the text: type [MASK] for a word to see what the model guesses there")
        meta = {"labels": list(tok.vocab)}
        if MASK in tokens:
            meta["query_index"] = tokens.index(MASK)
        if notices:
            meta["notice"] = "; ".join(notices)
        return TextInput(tokens, ids, meta=meta)

    def probe_inputs(self) -> list:
        return list(PROBES)

    def info(self) -> dict:
        return {"corpus": "the coref and order-sentiment tasks' generated training sentences, half each",
                "masking": {"share": MASK_SHARE, "mask_random_keep": list(SPLIT_80_10_10)},
                "unigram_word": self.tokenizer.vocab[self.unigram_id()]}
