"""``coref``: which noun does "it" refer to? The adjective decides.

"the animal didn't cross the street because it was too tired" → it = animal;
"... too wide" → it = street. The model answers at every word (``pool="index"`` over all positions while
training): "it" names its referent, a noun names itself, every other word ``NONE``; the app reads the
answer at "it". Answering at every word is what keeps the other rows honest: a row that looked at the
answer noun would carry that noun's value and be pushed towards naming it, which is wrong for every
word but "it". (The earlier model answered at "it" alone and learned an answer broadcast: layer 1
copied the answer noun into every row, so every word "looked at animal", with or without "it".)

The last layer's head ``POINTER_HEAD`` is also trained as an antecedent pointer: −log of its weight
from "it" on the referent is added to the loss (:meth:`CorefTask.loss`), as end-to-end coreference
models score antecedents. Without it the model fetched both candidate nouns through two layer-0 heads
and let the output layer choose by the adjective, so no head resolved anything (measured: layer-0
heads on the animal / the place whatever the adjective). What the pointer cannot do on its own is
know the adjective: the model has to route it into the query of "it" through layer 0. The other
heads of the last layer learn to resolve too, without being told.

Held out: every (referent noun, adjective) combination whose hash falls in the held-out fraction is
never trained on; a further slice of combinations is the validation split, also never trained on.
The lecture head (the ``focus`` the app opens on) is the most specific head on validation sentences
(:mod:`attnviz.tasks.coref_metrics`) and only then measured on test sentences.
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.models.config import ModelConfig
from attnviz.tasks.base import IGNORE, Batch, Task, TextInput
from attnviz.tasks.coref_words import ANIMATE, ANIMATE_ADJ, PLACE_ADJ, PLACES, TEMPLATES, VERBS
from attnviz.tasks.text_data import batched_probs, find_token, held_out, pad_ids
from attnviz.text.fit import fit_tokens
from attnviz.text.tokenizer import CLS, Tokenizer

__all__ = ["CorefTask", "NONE", "ANIMATE", "PLACES", "ANIMATE_ADJ", "PLACE_ADJ", "TEMPLATES"]

HELD_OUT = 0.2
VALIDATION = 0.1  # the next slice of the same hash: validation combinations, never trained on
NONE = "(no referent)"  # the class of every word that is neither a noun nor "it"
POINTER_HEAD = 0  # the last layer's head trained as the antecedent pointer (see CorefTask.loss)
PROBES = ["The animal didn't cross the street because it was too tired",
          "The animal didn't cross the street because it was too wide"]


def _vocab_text() -> list[str]:
    words = ANIMATE + PLACES + ANIMATE_ADJ + PLACE_ADJ + [w for pair in VERBS for w in pair]
    return [" ".join(t.replace("{", " ").replace("}", " ") for t in TEMPLATES), " ".join(words)]


class CorefTask(Task):
    name = "coref"
    kind = "encoder"
    description = ('Which noun does "it" refer to? The adjective decides: tired → the animal, wide → the street. '
                   'The model names every word\'s referent ("it" → the noun, other words → none); one last-layer '
                   'head is also trained to point from "it" at the noun.')
    # seed 1, 800 steps at lr 1e-3 (measured on 400 validation sentences before bundling): every
    # last-layer head puts ≥ 0.99 from "it" on the referent, the other rows ≤ 0.08 on it; layer 0 is
    # near uniform (≤ 0.12 on the noun from any row)
    asset_seed = 1
    steps = 800
    batch_size = 64
    lr = 1e-3
    warmup = 80
    labels = ANIMATE + PLACES + [NONE]
    pointer_head = POINTER_HEAD  # of the last layer; the lesson's caption names it
    # checked by make_assets and the tests; probes_right: the focus head is right on both lecture sentences
    targets = {"accuracy": (">=", 0.99), "it_attention": (">=", 0.90), "it_weight_animate": (">=", 0.5),
               "it_weight_place": (">=", 0.5), "others_weight": ("<=", 0.3), "deleted_weight": ("<=", 0.3),
               "focus_margin": (">=", 1e-3), "probes_right": (">=", 1.0)}

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.tokenizer = Tokenizer.build("word", _vocab_text(), prefix=[CLS])
        self.label_of = {w: i for i, w in enumerate(self.labels)}
        # label index → the token id of that noun (NONE → the pad id, never in a sentence)
        self._label_token = torch.tensor([self.tokenizer.index.get(w, self.tokenizer.pad_id) for w in self.labels])
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

    def encode(self, items: list[tuple[str, str]], every: bool = False) -> Batch:
        """Sentences → ids, padding mask, the position of "it", and the referent's class.

        ``every``: the training form, an answer for every word (``pool_index`` and targets (B, T)):
        "it" → its referent, a noun → itself, any other word → ``NONE``, padding ignored.
        """
        seqs, it_pos, targets, tags = [], [], [], []
        index, prefix = self.tokenizer.index, self.tokenizer.prefix
        none = self.label_of[NONE]
        for text, referent in items:
            # generated sentences are lowercase words between single spaces, so splitting on spaces
            # gives exactly the tokenizer's tokens (a test checks this) at a fraction of the cost
            tokens = prefix + text.split()
            seqs.append([index[t] for t in tokens])
            it_pos.append(tokens.index("it"))
            targets.append(self.label_of[referent])
            tags.append([self.label_of[referent] if t == "it" else self.label_of.get(t, none)
                         for t in tokens])
        ids, pad = pad_ids(seqs, self.tokenizer.pad_id)
        if not every:
            inputs = {"ids": ids, "key_pad": pad, "pool_index": torch.tensor(it_pos)}
            return Batch(inputs, torch.tensor(targets), len(items))
        T = ids.shape[1]
        target = torch.full((len(items), T), IGNORE, dtype=torch.long)
        for i, row in enumerate(tags):
            target[i, : len(row)] = torch.tensor(row)
        pool = torch.arange(T).expand(len(items), T).contiguous()
        return Batch({"ids": ids, "key_pad": pad, "pool_index": pool}, target, len(items))

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        """Training batches answer at every word (see :meth:`encode`); held-out ones at "it" only."""
        return self.encode(self.sentences(split, batch_size, rng), every=split == "train")

    # -- training objective --------------------------------------------------------------------
    def prepare_model(self, model) -> None:
        """Watch the pointer head (last layer, head ``POINTER_HEAD``) while training: a forward hook
        (torch's public extension point) recomputes its attention weights with their gradient, which
        :meth:`loss` scores against the antecedent. In eval mode the hook does nothing."""
        attn = model.stack.blocks[-1].attn
        self._pointer_attn = attn

        def hook(module, args, kwargs, _out):
            if not module.training:
                return
            x, key_pad = args[0], kwargs.get("key_pad")
            B, T, _ = x.shape
            lo, hi = POINTER_HEAD * module.d_head, (POINTER_HEAD + 1) * module.d_head
            kv = POINTER_HEAD // module.group * module.d_head
            q = module.q_proj(x)[..., lo:hi]
            k = module.k_proj(x)[..., kv:kv + module.d_head]
            scores = (q @ k.transpose(-2, -1)) * module.scale  # (B, T, T)
            if key_pad is not None:
                scores = scores.masked_fill(key_pad[:, None, :], float("-inf"))
            module._pointer_logp = torch.log_softmax(scores, -1)

        attn.register_forward_hook(hook, with_kwargs=True)

    def loss(self, logits, batch: Batch):
        """Every word's answer (:meth:`encode` with ``every``) plus the pointer's: −log of the weight the
        pointer head puts from "it" on its antecedent (the antecedent score of end-to-end coreference
        models, here read from one attention head)."""
        loss, correct, counted = super().loss(logits, batch)
        logp = getattr(getattr(self, "_pointer_attn", None), "_pointer_logp", None)
        if logp is None or batch.targets.dim() != 2:
            return loss, correct, counted
        ids = batch.inputs["ids"]
        rows = torch.arange(ids.shape[0], device=ids.device)
        it = (ids == self.tokenizer.id_of("it")).int().argmax(1)
        noun_id = self._label_token.to(ids.device)[batch.targets[rows, it]]  # the referent's token id
        ref = (ids == noun_id[:, None]).int().argmax(1)
        self._pointer_attn._pointer_logp = None
        return loss - logp[rows, it, ref].mean(), correct, counted

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
        """Held-out accuracy at "it" and how specifically the lecture head resolves the pronoun.

        The lecture head (``focus``) is the head with the highest specificity (the pronoun row's weight
        on the referent minus the other rows', :mod:`attnviz.tasks.coref_metrics`) over ``n`` validation
        sentences; every other number is measured on ``n`` test sentences: ``it_weight`` / ``it_attention``
        (mean weight, share of argmax right), per referent kind (``it_weight_animate``: "tired" →
        animal, ``it_weight_place``: "wide" → street), ``others_weight`` (the other rows) and
        ``deleted_weight`` (the largest over all heads, with "it" deleted from the sentences) and
        ``deleted_row_max`` (with "it" deleted, the largest weight any single row of any head of the
        lecture head's layer puts on the noun, the noun's own row excepted).
        """
        from attnviz.tasks.coref_metrics import head_profile, pick_head

        val = head_profile(loaded, self, self.sentences("val", n, np.random.default_rng(seed + 1)))
        layer, head, margin = pick_head(val)
        items = self.sentences("test", n, np.random.default_rng(seed))
        _, accuracy = self.it_hits(loaded, items)
        test = head_profile(loaded, self, items)
        at = (layer, head)
        return {"accuracy": accuracy, "it_attention": float(test["it_hits"][at]),
                "it_weight": float(test["it_weight"][at]), "it_weight_animate": float(test["it_weight_animate"][at]),
                "it_weight_place": float(test["it_weight_place"][at]), "others_weight": float(test["others_weight"][at]),
                "deleted_weight": float(test["deleted_weight"].max()),
                "deleted_row_max": float(test["deleted_row_max"][layer].max()), "focus_layer": layer, "focus_head": head,
                "focus_margin": margin, "probes_right": self.probes_right(loaded, layer, head), "n_sentences": n}

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
