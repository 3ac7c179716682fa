"""``translate``: an encoder–decoder learns a made-up language with a different word order.

English (SVO, adjective before noun)   "the big dog sees a small cat"
Target  (SOV, adjective after noun,    "lo wufa grano un miro pika na vidas"
         object particle "na")
Every target word except the particle translates exactly one source word, so the gold word alignment
is known and the decoder's cross-attention can be checked against it: the crossing lines (verb to the
end, adjectives after their nouns) are what the lecture figure shows.
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.errors import InputError
from attnviz.models.config import ModelConfig
from attnviz.tasks.base import Batch, Task, TextInput
from attnviz.tasks.seq_data import (
    alignment_hits, batch_attention, best_head, check_vocab, encode_pairs, greedy_scores,
    sample_split,
)
from attnviz.text.tokenizer import BOS, EOS, Tokenizer

__all__ = ["TranslateTask", "LEXICON", "render", "parse_source"]

DETS = {"the": "lo", "a": "un"}
ADJS = {"big": "grano", "small": "pika", "red": "ruja", "old": "vela", "young": "nova", "happy": "feli",
        "black": "nira", "white": "blanka", "fast": "rapa", "lazy": "lenta"}
NOUNS = {"dog": "wufa", "cat": "miro", "bird": "pitu", "fox": "rakel", "horse": "hesta", "mouse": "pimi",
         "fish": "sulo", "cow": "muka", "frog": "kwako", "bear": "bruno"}
VERBS = {"sees": "vidas", "chases": "kasas", "likes": "amas", "follows": "sekvas", "bites": "mordas",
         "helps": "helpas", "finds": "trovas", "hears": "audas"}
INTRANSITIVE = {"sleeps": "dormas", "runs": "kuras", "sings": "kantas"}
PARTICLE = "na"  # marks the object; it translates no source word
LEXICON = {**DETS, **ADJS, **NOUNS, **VERBS, **INTRANSITIVE}
_CLASSES = (("determiners", DETS), ("adjectives", ADJS), ("nouns", NOUNS), ("verbs", VERBS),
            ("intransitive verbs", INTRANSITIVE))
KNOWN_WORDS = "; ".join(f"{what}: {', '.join(words)}" for what, words in _CLASSES)


def _noun_phrase(words: list[str], at: int):
    """Parse det (adj) noun at ``at``: ((det, adj or None, noun), next index) or None."""
    if at < len(words) and words[at] in DETS:
        adj = words[at + 1] if at + 1 < len(words) and words[at + 1] in ADJS else None
        noun_at = at + (2 if adj else 1)
        if noun_at < len(words) and words[noun_at] in NOUNS:
            return (words[at], adj, words[noun_at]), noun_at + 1
    return None


def parse_source(words: list[str]):
    """(subject, verb, object or None) when ``words`` is a sentence of the source grammar, else None."""
    subj = _noun_phrase(words, 0)
    if subj is None or subj[1] >= len(words):
        return None
    (np_s, at), verb = subj, words[subj[1]]
    if verb in INTRANSITIVE:
        return (np_s, verb, None) if at + 1 == len(words) else None
    if verb not in VERBS:
        return None
    obj = _noun_phrase(words, at + 1)
    if obj is None or obj[1] != len(words):
        return None
    return np_s, verb, obj[0]


def render(subj, verb, obj) -> tuple[list[str], list[str], list[int | None]]:
    """Source words, target words, and for each target word the index of its source word (None: none)."""
    src: list[str] = []
    tgt: list[str] = []
    align: list[int | None] = []

    def put_np(phrase) -> None:
        det, adj, noun = phrase
        i_det = len(src)
        src.extend([det] + ([adj] if adj else []) + [noun])
        i_noun = len(src) - 1
        tgt.extend([DETS[det], NOUNS[noun]] + ([ADJS[adj]] if adj else []))
        align.extend([i_det, i_noun] + ([i_det + 1] if adj else []))

    put_np(subj)
    i_verb = len(src)
    src.append(verb)
    if obj is not None:
        put_np(obj)
        tgt.append(PARTICLE)
        align.append(None)
    tgt.append(LEXICON[verb])
    align.append(i_verb)
    return src, tgt, align


class TranslateTask(Task):
    name = "translate"
    kind = "encoder-decoder"
    description = "Encoder–decoder translating English SVO into a made-up SOV language with post-nominal adjectives."
    steps = 400
    batch_size = 64
    lr = 3e-3
    warmup = 100
    n_eval = 1000
    targets = {"exact": (">=", 0.95), "alignment": (">=", 0.85)}  # checked by make_assets and the tests

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.tokenizer = Tokenizer.build("word", [], suffix=[EOS], extra=list(LEXICON))
        self.tgt_tokenizer = Tokenizer.build("word", [], extra=list(LEXICON.values()) + [PARTICLE])
        self.bos_id, self.eos_id = self.tgt_tokenizer.id_of(BOS), self.tgt_tokenizer.id_of(EOS)

    def model_config(self, **overrides) -> ModelConfig:
        cfg = dict(kind="encoder-decoder", vocab_size=len(self.tokenizer.vocab),
                   tgt_vocab_size=len(self.tgt_tokenizer.vocab), n_layers=2, n_heads=2, d_model=32,
                   mlp_ratio=2.0, max_len=16, head="lm", pos="learned")
        cfg.update(overrides)
        return ModelConfig(**cfg)

    # -- data ------------------------------------------------------------------------------------
    @staticmethod
    def _draw(rng: np.random.Generator, k: int) -> list[tuple]:
        dets, adjs, nouns, verbs, intr = (list(d) for d in (DETS, ADJS, NOUNS, VERBS, INTRANSITIVE))
        # (k, 2) per noun phrase: subject and object; an adjective half of the time
        det = rng.integers(0, len(dets), (k, 2))
        adj = np.where(rng.random((k, 2)) < 0.5, rng.integers(0, len(adjs), (k, 2)), -1)
        noun = rng.integers(0, len(nouns), (k, 2))
        transitive = rng.random(k) >= 0.2
        verb = rng.integers(0, len(verbs), k)
        verb_i = rng.integers(0, len(intr), k)
        phrases = [[(dets[det[r, j]], adjs[adj[r, j]] if adj[r, j] >= 0 else None, nouns[noun[r, j]]) for j in (0, 1)]
                   for r in range(k)]
        return [(p[0], verbs[verb[r]], p[1]) if transitive[r] else (p[0], intr[verb_i[r]], None)
                for r, p in enumerate(phrases)]

    def _key(self, example) -> list[int]:
        return [self.tokenizer.index[w] for w in render(*example)[0]]

    def sample_sentences(self, split: str, n: int, rng: np.random.Generator) -> list[tuple]:
        """``n`` rendered examples (src words, tgt words, alignment) of the split (hashed on the source)."""
        return [render(*ex) for ex in sample_split(self._draw, self._key, split, n, rng)]

    def encode(self, examples) -> tuple[dict, torch.Tensor, list]:
        """Inputs, targets and gold target ids of rendered examples."""
        src = [[self.tokenizer.id_of(w) for w in s] + [self.tokenizer.id_of(EOS)] for s, _, _ in examples]
        gold = [[self.tgt_tokenizer.id_of(w) for w in t] for _, t, _ in examples]
        inputs, targets = encode_pairs(src, gold, self.tokenizer.pad_id, self.tgt_tokenizer.pad_id,
                                       self.bos_id, self.eos_id)
        return inputs, targets, gold

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        inputs, targets, _ = self.encode(self.sample_sentences(split, batch_size, rng))
        return Batch(inputs, targets, batch_size)

    # -- metrics ---------------------------------------------------------------------------------
    @torch.no_grad()
    def evaluate(self, loaded, seed: int = 12345) -> dict:
        """Greedy exact-sentence accuracy and cross-attention agreement with the gold alignment.

        For every aligned target word, the decoder row that writes it (its input is the previous
        word) should put its largest cross-attention weight on the gold source word. ``alignment``
        averages the heads of the best decoder layer; ``alignment_best_head`` is the best single head.
        """
        check_vocab(self.tokenizer, loaded.tokenizer, "source vocabulary")
        check_vocab(self.tgt_tokenizer, loaded.tgt_tokenizer, "target vocabulary")
        model, dev = loaded.model, loaded.device
        model.eval()
        examples = self.sample_sentences("test", self.n_eval, np.random.default_rng(seed))
        inputs, _, gold = self.encode(examples)
        inputs = {k: v.to(dev) for k, v in inputs.items()}
        exact, ok, total = greedy_scores(model, inputs, gold, self.bos_id, self.eos_id, loaded.config.max_len - 1)
        _, probs = batch_attention(model, inputs)
        triples = [(b, t, s) for b, (_, _, al) in enumerate(examples) for t, s in enumerate(al) if s is not None]
        per_head, per_layer = alignment_hits(probs["cross"], triples)
        layer, head, share = best_head(per_head)
        return {"exact": exact / len(examples), "token_accuracy": ok / total,
                "alignment": float(per_layer.max()), "alignment_layer": int(per_layer.argmax()),
                "alignment_best_head": share, "alignment_best_head_layer": layer,
                "alignment_best_head_index": head, "n_eval": len(examples)}

    # -- inputs for the app ----------------------------------------------------------------------
    def probe_inputs(self) -> list[str]:
        return ["the big dog sees a small cat", "a lazy fox follows the old horse", "the happy bird sings"]

    def gold(self, text: str) -> dict | None:
        """Reference translation and alignment of a grammatical sentence, in trace coordinates.

        ``pairs`` are [row, src]: decoder row ``row`` (input ``tgt_tokens[row]``, writing
        ``tgt_tokens[row + 1]``) should attend to source token ``src_tokens[src]``.
        """
        words = self.tokenizer.tokenize(text)
        parsed = parse_source(words)
        if parsed is None:
            return None
        src, tgt, align = render(*parsed)
        return {"text": " ".join(src), "src_tokens": src + [EOS], "tgt_tokens": [BOS] + tgt + [EOS],
                "reference": " ".join(tgt), "pairs": [[t, s] for t, s in enumerate(align) if s is not None]}

    def info(self) -> dict:
        return {
            "gold_alignment": [self.gold(t) for t in self.probe_inputs()],
            "alignment_metric": "alignment: heads of the best decoder cross-attention layer averaged, argmax on the "
                                "gold source word; alignment_best_head: the best single head",
            "source_words": list(LEXICON), "grammar": "det (adj) noun verb [det (adj) noun]",
        }

    def read_text(self, tokenizer, text: str, max_len: int, truncate: bool = False) -> TextInput:
        """Check every word is known; the adapter translates greedily and traces the decoder over its output."""
        # punctuation carries nothing in this grammar: drop it rather than refuse the sentence
        pieces = self.tokenizer.tokenize(str(text or ""))
        words = [w for w in pieces if w[0].isalnum()]
        # say what was left out: an emoji or a control character vanishing without a word confuses
        left_out = list(dict.fromkeys(w for w in pieces if not w[0].isalnum()))
        left_out += [c for c in dict.fromkeys(str(text or "")) if not c.isspace() and not c.isprintable()
                     and c not in "".join(left_out)]
        if not words:
            raise InputError("the text is empty: type a sentence such as 'the big dog sees a small cat'")
        unknown = [w for w in dict.fromkeys(words) if w not in LEXICON]
        if unknown:
            listed = ", ".join(repr(w) for w in unknown[:6])
            plural = "s" if len(unknown) > 1 else ""
            raise InputError(f"unknown word{plural} {listed}; this model knows only {KNOWN_WORDS}")
        meta = {}
        if left_out:
            shown = ", ".join(repr(w) for w in left_out[:8]) + (" …" if len(left_out) > 8 else "")
            meta["notice"] = f"left out (not words of this grammar): {shown}"
        limit = max_len - 1  # room for [EOS]
        if len(words) > limit:
            if not truncate:
                raise InputError(f"the sentence has {len(words)} words but this model takes at most {limit}; "
                                 "shorten it")
            meta["notice"] = "; ".join(filter(None, [meta.get("notice"), f"the sentence was truncated to {limit} "
                                                     f"words (it had {len(words)})"]))
            words = words[:limit]
        tok = tokenizer or self.tokenizer
        src = words + [EOS]
        return TextInput(src, [tok.id_of(t) for t in src], meta=meta, seq2seq=True)

    def describe_output(self, source: TextInput, meta: dict) -> None:
        ref = self.gold(" ".join(t for t in source.tokens if t != EOS))
        if ref is None:
            meta["notice"] = "; ".join(filter(None, [meta.get("notice"), "not a sentence of the training grammar "
                                                     "(det (adj) noun verb det (adj) noun): no reference alignment"]))
        else:
            meta.update(reference_text=ref["reference"], alignment=ref["pairs"],
                        correct=meta["output_text"] == ref["reference"])
