"""``coref``: which noun does "it" refer to? The adjective decides.

"the animal didn't cross the street because it was too tired" → it = animal;
"... too wide" → it = street. The encoder classifies at the "it" token (``pool="index"``) and must
name the noun itself (one class per noun), so the only way to answer is for "it" to attend to the
noun the adjective points at — which is what the lecture wants to show. Held out: every
(referent noun, adjective) combination whose hash falls in the held-out fraction is never trained on;
a further slice of combinations is the validation split, also never trained on.

The head the lecture shows (the ``focus`` the app opens on) is chosen on validation sentences — the
head whose attention from "it" peaks on the right noun most often — and only then measured on the
test sentences (``it_attention``) and on the two sentences of the lecture (``probes_right``).
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.models.config import ModelConfig
from attnviz.tasks.base import Batch, Task, TextInput
from attnviz.tasks.text_data import batched_probs, find_token, held_out, pad_ids
from attnviz.text.fit import fit_tokens
from attnviz.text.tokenizer import CLS, Tokenizer

__all__ = ["CorefTask", "ANIMATE", "PLACES", "ANIMATE_ADJ", "PLACE_ADJ", "TEMPLATES"]

ANIMATE = ["animal", "dog", "cat", "horse", "cow", "sheep", "goat", "fox", "deer", "rabbit", "child", "boy",
           "girl", "man", "woman", "farmer", "soldier", "tourist", "donkey", "pig", "bear", "wolf", "mouse",
           "duck"]
PLACES = ["street", "road", "river", "bridge", "field", "hill", "valley", "lake", "path", "track", "square",
          "park", "forest", "desert", "canal", "highway", "stream", "lane", "yard", "beach", "mountain",
          "tunnel", "garden", "ditch"]
ANIMATE_ADJ = ["tired", "scared", "lazy", "weak", "sleepy", "afraid", "hungry", "old", "slow", "nervous", "sick",
               "timid", "exhausted", "frightened", "injured", "cautious"]
PLACE_ADJ = ["wide", "busy", "long", "steep", "icy", "wet", "narrow", "dangerous", "crowded", "deep", "muddy",
             "slippery", "dark", "far", "rough", "flooded"]
VERBS = [("cross", "crossed"), ("climb", "climbed"), ("enter", "entered"), ("reach", "reached"),
         ("leave", "left"), ("pass", "passed"), ("explore", "explored"), ("visit", "visited"), ("use", "used"),
         ("follow", "followed"), ("approach", "approached"), ("search", "searched")]
# {a}: the animate noun, {p}: the place, {v}/{vpp}: verb and participle, {adj}: the deciding adjective
TEMPLATES = [
    "the {a} didn't {v} the {p} because it was too {adj}",
    "the {a} did not {v} the {p} as it was too {adj}",
    "the {p} was not {vpp} by the {a} because it was too {adj}",
    "the {a} refused to {v} the {p} since it was so {adj}",
    "the {p} wasn't {vpp} by the {a} since it was very {adj}",
]
HELD_OUT = 0.2
VALIDATION = 0.1  # the next slice of the same hash: validation combinations, never trained on
PROBES = ["The animal didn't cross the street because it was too tired",
          "The animal didn't cross the street because it was too wide"]


def _vocab_text() -> list[str]:
    words = ANIMATE + PLACES + ANIMATE_ADJ + PLACE_ADJ + [w for pair in VERBS for w in pair]
    return [" ".join(t.replace("{", " ").replace("}", " ") for t in TEMPLATES), " ".join(words)]


class CorefTask(Task):
    name = "coref"
    kind = "encoder"
    description = ('Which noun does "it" refer to? The adjective decides: tired → the animal, wide → the street. '
                   'The model classifies at "it", so "it" has to attend to the right noun.')
    # lr 1e-3 for 800 steps: with 2e-3 "it" often split its attention between the noun and the "the"
    # before it (it_attention 0.7-0.93 depending on the seed); at 1e-3 seeds 0-3 gave 0.95-1.0
    # seed 1 (measured, 800 steps, validation split): seed 0 → focus L1H3, right on 89 % of validation and
    # 97 % of test sentences; seed 1 → focus L1H0, 100 % and 100 %, and on both lecture sentences. (Before
    # the validation split, seed 0's last-layer heads looked at the "the" before "animal" on the
    # lecture's own "…too tired" sentence: 0.42 vs 0.36.)
    asset_seed = 1
    steps = 800
    batch_size = 64
    lr = 1e-3
    warmup = 80
    labels = ANIMATE + PLACES
    # checked by make_assets and the tests; probes_right: the focus head is right on both lecture sentences
    targets = {"accuracy": (">=", 0.99), "it_attention": (">=", 0.90), "probes_right": (">=", 1.0)}

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.tokenizer = Tokenizer.build("word", _vocab_text(), prefix=[CLS])
        self.label_of = {w: i for i, w in enumerate(self.labels)}
        self._split_of = {(n, a): self.split_of(n, a) for nouns, adjs in ((ANIMATE, ANIMATE_ADJ), (PLACES, PLACE_ADJ))
                          for n in nouns for a in adjs}

    def model_config(self, **overrides) -> ModelConfig:
        cfg = dict(kind="encoder", vocab_size=len(self.tokenizer.vocab), n_layers=2, n_heads=4, d_model=64,
                   max_len=32, head="classify", pool="index", n_classes=len(self.labels))
        return ModelConfig(**{**cfg, **overrides})

    # -- data ----------------------------------------------------------------------------------
    @staticmethod
    def is_held_out(referent: str, adjective: str) -> bool:
        return held_out(f"{referent}|{adjective}", HELD_OUT, salt="coref")

    @staticmethod
    def split_of(referent: str, adjective: str) -> str:
        """"test", "val" or "train" for a (referent, adjective) combination (one hash, two thresholds)."""
        key = f"{referent}|{adjective}"
        if held_out(key, HELD_OUT, salt="coref"):
            return "test"
        return "val" if held_out(key, HELD_OUT + VALIDATION, salt="coref") else "train"

    def sentences(self, split: str, n: int, rng: np.random.Generator) -> list[tuple[str, str]]:
        """``n`` (sentence, referent noun) pairs from ``split`` ("train", "val" or "test")."""
        want = split if split in ("train", "val") else "test"
        out: list[tuple[str, str]] = []
        while len(out) < n:
            # draw candidates in bulk (one rng call per field, not per sentence), keep those of the split
            m = 2 * (n - len(out)) + 8
            a, p = rng.integers(len(ANIMATE), size=m), rng.integers(len(PLACES), size=m)
            v, t = rng.integers(len(VERBS), size=m), rng.integers(len(TEMPLATES), size=m)
            animate, adj = rng.integers(2, size=m), rng.integers(len(ANIMATE_ADJ), size=m)
            for i in range(m):
                word = (ANIMATE_ADJ if animate[i] else PLACE_ADJ)[adj[i]]
                referent = ANIMATE[a[i]] if animate[i] else PLACES[p[i]]
                if self._split_of[referent, word] != want:
                    continue
                verb, participle = VERBS[v[i]]
                text = TEMPLATES[t[i]].format(a=ANIMATE[a[i]], p=PLACES[p[i]], v=verb, vpp=participle, adj=word)
                out.append((text, referent))
                if len(out) == n:
                    break
        return out

    def encode(self, items: list[tuple[str, str]]) -> Batch:
        """Sentences → ids, padding mask, the position of "it", and the referent's class."""
        seqs, it_pos, targets = [], [], []
        index, prefix = self.tokenizer.index, self.tokenizer.prefix
        for text, referent in items:
            # generated sentences are lowercase words between single spaces, so splitting on spaces
            # gives exactly the tokenizer's tokens (a test checks this) at a fraction of the cost
            tokens = prefix + text.split()
            seqs.append([index[t] for t in tokens])
            it_pos.append(tokens.index("it"))
            targets.append(self.label_of[referent])
        ids, pad = pad_ids(seqs, self.tokenizer.pad_id)
        inputs = {"ids": ids, "key_pad": pad, "pool_index": torch.tensor(it_pos)}
        return Batch(inputs, torch.tensor(targets), len(items))

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        return self.encode(self.sentences(split, batch_size, rng))

    # -- metrics -------------------------------------------------------------------------------
    def it_hits(self, loaded, items) -> tuple[np.ndarray, float]:
        """(L, H) share of ``items`` whose attention from "it" peaks (argmax over keys) on the referent,
        and the classification accuracy."""
        n = len(items)
        batch = self.encode(items).to(loaded.device)
        logits, probs = batched_probs(loaded.model, batch.inputs)
        accuracy = float((logits.argmax(-1) == batch.targets).float().mean())
        rows = torch.arange(n, device=batch.targets.device)
        it_pos = batch.inputs["pool_index"]
        ref_pos = torch.tensor([(self.tokenizer.prefix + t.split()).index(r) for t, r in items],
                               device=batch.targets.device)
        shares = []
        for p in probs:  # p: (B, H, T, T)
            peaks = p[rows, :, it_pos].argmax(-1)  # (B, H): the key each head looks at most from "it"
            shares.append((peaks == ref_pos[:, None]).float().mean(0).cpu().numpy())
        return np.stack(shares), accuracy

    def evaluate(self, loaded, seed: int = 12345, n: int = 1000) -> dict:
        """Held-out accuracy and the focus head.

        The focus head is the one whose attention from "it" most often peaks on the referent over ``n``
        validation sentences; ``it_attention`` is that head's share over ``n`` test sentences and
        ``probes_right`` the share of the two lecture sentences (``PROBES``) it gets right.
        """
        val, _ = self.it_hits(loaded, self.sentences("val", n, np.random.default_rng(seed + 1)))
        layer, head = (int(i) for i in np.unravel_index(int(np.argmax(val)), val.shape))
        test, accuracy = self.it_hits(loaded, self.sentences("test", n, np.random.default_rng(seed)))
        return {"accuracy": accuracy, "it_attention": float(test[layer, head]), "focus_layer": layer,
                "focus_head": head, "focus_val_share": float(val[layer, head]),
                "probes_right": self.probes_right(loaded, layer, head), "n_sentences": n}

    def probes_right(self, loaded, layer: int, head: int) -> float:
        """Share of the lecture sentences on which head (layer, head) looks from "it" at the right noun."""
        from attnviz.capture.batch import batch_attention

        tok = loaded.tokenizer or self.tokenizer
        right = 0
        for text, referent in zip(PROBES, ("animal", "street")):
            enc = tok.encode(text)  # the lecture sentences hold "didn't": the tokenizer's reading, not split()
            tokens = [t.lower() for t in enc.tokens]
            ids = torch.tensor([enc.ids], device=loaded.device)
            it = tokens.index("it")
            _, probs = batch_attention(loaded.model, {"ids": ids, "pool_index": torch.tensor([it], device=loaded.device)})
            row = probs["self"][layer][0, head, it]  # (T,) from "it"
            right += int(tokens[int(np.argmax(row))] == referent)
        return right / len(PROBES)

    # -- app -----------------------------------------------------------------------------------
    def focus(self, info: dict) -> dict | None:
        """The head chosen on validation data (recorded in the metrics): where the app and exports open."""
        metrics = info.get("metrics") or {}
        if "focus_layer" not in metrics:
            return None
        return {"layer": int(metrics["focus_layer"]), "head": int(metrics["focus_head"])}

    def probe_inputs(self) -> list:
        return list(PROBES)

    def read_text(self, tokenizer, text: str, max_len: int, truncate: bool = False) -> TextInput:
        """Tokenize user text and classify at its first "it" (at [CLS], with a notice, when there is none)."""
        tokenizer = tokenizer or self.tokenizer
        enc = tokenizer.encode(text)
        ids, tokens, notice = fit_tokens(enc.ids, enc.tokens, max_len, truncate, "the text")
        notices = [notice] if notice else []
        unknown = sorted({t for t, i in zip(tokens, ids) if i == tokenizer.id_of("[UNK]")})
        if unknown:
            notices.append(f"words the model never saw (read as [UNK]): {', '.join(unknown)}")
        idx = find_token(tokens, "it", 1)
        if idx is None:
            idx = 0
            notices.append('no "it" in the text: the prediction is read at [CLS], where this model was never '
                           'trained to answer, so it means little')
        meta = {"query_index": idx}
        if notices:
            meta["notice"] = "; ".join(notices)
        return TextInput(tokens, ids, extras={"pool_index": [idx]}, meta=meta)
