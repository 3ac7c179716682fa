"""The numbers behind the lesson figures that compare two runs: what-if, permutation, word order, the mask.

Each function returns :class:`FigurePanels`: matrices side by side (each with its own title, axis labels
and colour range) and a few lines of measured numbers. Qt-free; :mod:`attnviz.gui.views.lesson_views`
draws them, the CLI writes them with ``--data``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from attnviz.errors import InputError
from attnviz.text.number_format import format_number
from attnviz.text.token_display import numbered_label, numbered_labels

__all__ = ["Panel", "FigurePanels", "whatif_panels", "permutation_panels", "word_order_panels", "mask_panels",
           "MODEL_FIGURES", "panels_data", "signed"]

# figures whose numbers need the model (a re-run), not only a trace
MODEL_FIGURES = ("what-if", "permutation", "word-order")


@dataclass
class Panel:
    title: str
    values: np.ndarray  # (R, C)
    rows: list[str]
    cols: list[str]
    vmin: float = 0.0
    vmax: float = 1.0
    label: str = "attention weight"
    masked: np.ndarray | None = None  # (R, C) bool: drawn hatched (e.g. −∞ in the mask)
    cell_text: list[list[str]] | None = None  # text written in every cell (small matrices only)


@dataclass
class FigurePanels:
    title: str
    panels: list[Panel]
    notes: list[str] = field(default_factory=list)
    numbers: dict = field(default_factory=dict)  # every number shown, for --data


def _entropy(row: np.ndarray) -> float:
    p = row[row > 0]
    return float(-(p * np.log(p)).sum())


def whatif_panels(loaded, whatif, state, text: str | None = None, image=None) -> FigurePanels:
    """Attention of (layer, head) and the prediction, as trained and with ``whatif``; row entropies.

    As the app's What if tab: the head is :func:`~attnviz.whatif.shown_head` (an ablated one when the
    selected head is left alone), the row is the one the prediction is read at (the default rule's query when
    none is given: never an encoder–decoder's "[EOS]" row, which wrote nothing), and masked cells are marked
    (hatched), not painted as weights of 0."""
    from attnviz.analysis.trace_parts import masked_cells
    from attnviz.analysis.walkthrough_default import default_query
    from attnviz.whatif import compare_whatif, shown_head

    cmp = compare_whatif(loaded, whatif, text=text, image=image, k=3, position=state.query)
    layer, head = shown_head(whatif, state.layer, state.head)
    key = f"L{layer}.probs"
    before = np.asarray(cmp.before[key], np.float64)[head]
    after = np.asarray(cmp.after[key], np.float64)[head]
    tokens = list(cmp.before.tokens)
    q = state.query if state.query is not None else (cmp.read_at if cmp.read_at is not None
                                                     else default_query(cmp.before))
    after_labels = numbered_labels(list(cmp.after.tokens))

    def mask(trace, probs):
        m = masked_cells(trace, f"L{layer}.")
        return m if m is not None and m.shape == probs.shape else None

    panels = [Panel("As trained", before, numbered_labels(tokens), numbered_labels(tokens),
                    masked=mask(cmp.before, before)),
              Panel(_sentence_case(whatif.describe()), after, after_labels, after_labels, masked=mask(cmp.after, after))]
    h_b, h_a = _entropy(before[q]), _entropy(after[q])

    def top(pairs):  # a runner-up of 0.0012 reads "0.001", as the app prints it, not "0.00"
        return ", ".join(f"{label} {format_number(p, 2)}" for label, p in pairs)

    notes = [f"Row “{tokens[q]}” (position {q}): entropy {h_b:.2f} → {h_a:.2f} nats; largest weight "
             f"{before[q].max():.2f} → {after[q].max():.2f}",
             f"Prediction {cmp.where}: {top(cmp.top_before)} → {top(cmp.top_after)}",
             f"Output changed by {format_number(cmp.changed, 3)} (total variation){' — the answer flips' if cmp.argmax_changed else ''}"]
    numbers = {"probs_before": before, "probs_after": after, "entropy_before": h_b, "entropy_after": h_a,
               "changed": cmp.changed, "query": q, "layer": layer, "head": head}
    part = " · decoder self-attention" if cmp.before.kind == "encoder-decoder" else ""
    return FigurePanels(f"What if: {whatif.describe()} · layer {layer}, head {head}{part}", panels, notes, numbers)


def permutation_panels(loaded, text: str, state, seed: int = 0) -> FigurePanels:
    """P(RX) beside R·P(X)·Rᵀ for one head, with their largest difference (the model as it is)."""
    from attnviz.whatif import WhatIf, permute_tokens

    res = permute_tokens(loaded, text, whatif=WhatIf(), seed=seed)
    got = res.probs_perm[state.layer][state.head]
    want = res.probs_expected[state.layer][state.head]
    diff = float(np.max(np.abs(got - want)))
    labels = numbered_labels(res.permuted_tokens)
    vmax = float(max(got.max(), want.max()))
    panels = [Panel("P(RX): attention of the shuffled words", got, labels, labels, vmax=vmax),
              Panel("R·P(X)·Rᵀ: the original attention, shuffled", want, labels, labels, vmax=vmax)]
    flat = float(np.max(np.abs(want - 1.0 / want.shape[-1])))
    pos = loaded.config.pos
    notes = [f"Largest difference |P(RX) − R·P·Rᵀ| = {sci(diff)} over this head; {sci(res.max_error)} over all layers "
             f"and heads",
             f"Positional encoding: {pos}; the attention is far from uniform (max |P − 1/T| = {flat:.2f})",
             "Shuffled order: " + " ".join(res.permuted_tokens)]
    return FigurePanels(f"Permutation equivariance · {loaded.name} · layer {state.layer}, head {state.head}", panels,
                        notes, {"probs_permuted": got, "probs_expected": want, "max_difference": diff,
                                "max_error_all": res.max_error, "perm": res.perm})


def sci(v: float) -> str:
    """``v`` in scientific notation with real minus signs: "1.2e−07" (the hyphen of "1.2e-07" reads as a dash)."""
    return f"{v:.1e}".replace("-", "\u2212")


def signed(v: float, digits: int = 3) -> str:
    """``v`` with its sign, the minus a real minus sign: "−0.183", not the hyphen of "-0.183" (on a slide)."""
    return f"{v:+.{digits}f}".replace("-", "\u2212")


def word_order_panels(bench, text: str, n: int = 200, seed: int | None = None,
                      with_positions: str = "order-sentiment", without: str = "order-sentiment-nopos") -> FigurePanels:
    """Both models on the sentence and its swapped twin; their swapped-pair accuracy on held-out pairs."""
    from attnviz.lessons.workbench import HELD_OUT_SEED, trace_text as _trace_text
    from attnviz.runtime import task_of
    from attnviz.tasks.order_sentiment import NEGATIVE, POSITIVE, swap

    seed = HELD_OUT_SEED if seed is None else seed
    words = text.lower().replace(",", " ,").split()
    adj = [w for w in words if w in POSITIVE or w in NEGATIVE]
    if len(adj) != 2:
        raise InputError("word order needs a sentence with one positive and one negative adjective, e.g. "
                         "'the food was good, not bad at all'")
    sentences = [" ".join(words), swap(" ".join(words), adj[0], adj[1])]
    panels, notes, numbers = [], [], {}
    for name, what in ((with_positions, "with positions"), (without, "without positions")):
        loaded = bench.model(name)
        labels = loaded.info["labels"]
        traces = [_trace_text(loaded, s) for s in sentences]
        preds = [np.asarray(t["prediction"], np.float64) for t in traces]
        # [CLS] attention of the last layer, head 0, for both sentences: rows are the two sentences
        cls_rows = np.stack([np.asarray(t[f"L{t.n_layers - 1}.probs"], np.float64)[0, 0] for t in traces])
        # the two sentences differ only where the adjectives swapped places: such a column names both words
        cols = [numbered_label(i, a if a == b else f"{a}/{b}")
                for i, (a, b) in enumerate(zip(traces[0].tokens, traces[1].tokens))]
        panels.append(Panel(f"{what}: [CLS] attention, last layer, head 0", cls_rows, ["typed", "swapped"], cols,
                            vmax=float(cls_rows.max()), label="attention weight · one scale for both panels"))
        acc = task_of(loaded).evaluate(loaded, seed=seed, n=n)["swapped_pair_accuracy"]
        said = " / ".join(f"{labels[int(p.argmax())]} {p.max():.2f}" for p in preds)
        # evaluate(n=...) scores n sentences: n // 2 swapped pairs, both sentences of each
        notes.append(f"{what} ({name}): right on {acc:.1%} of {n} held-out sentences ({n // 2} swapped pairs); "
                     f"here: {said}")
        numbers[f"{what}.swapped_pair_accuracy"] = acc
        numbers[f"{what}.predictions"] = np.stack(preds)
        # where the two sentences differ for this model: the [CLS] row's largest change between them
        diff = cls_rows[0] - cls_rows[1]
        at = int(np.argmax(np.abs(diff)))
        numbers[f"{what}.cls_difference"] = diff
        notes.append(f"{what}: typed − swapped [CLS] attention changes most at {cols[at]} ({signed(diff[at])}; largest "
                     f"weight {cls_rows.max():.2f})")
        if name == with_positions:
            from attnviz.lessons.claims_order import NEW_TEMPLATES, new_template_accuracy

            new = new_template_accuracy(loaded, task_of(loaded), n, seed)
            numbers["new_templates_accuracy"] = new
            notes.append(f"caveat: in {len(NEW_TEMPLATES)} sentence patterns it never trained on (“the food was not "
                         f"good, it was bad”) it is right on only {new:.0%} of {n} held-out sentences: it learned its "
                         f"templates, not negation")
    notes.append(f"typed: “{sentences[0]}” · swapped: “{sentences[1]}”")
    # one colour scale for both panels: each on its own maximum made near-flat attention look as hot as a peak
    top = max(p.vmax for p in panels)
    panels = [replace(p, vmax=top) for p in panels]
    return FigurePanels("Word order: the same words, opposite meanings", panels, notes, numbers)


def mask_panels(trace, state) -> FigurePanels:
    """The whole T×T mask M (0 or −∞) beside the scores S + M and P = softmax(S + M) of one head."""
    key = f"L{state.layer}" if state.part == "self" else f"L{state.layer}.{state.part}"
    if state.part == "enc":
        key = f"enc.L{state.layer}"
    mask = np.asarray(trace[f"{key}.mask"], np.float64)
    probs = np.asarray(trace[f"{key}.probs"], np.float64)[state.head]
    logits = np.asarray(trace[f"{key}.logits"], np.float64)[state.head]
    tokens = list(trace.tokens)
    rows = numbered_labels(tokens)
    neg = np.isneginf(mask)
    small = len(tokens) <= 24
    mask_text = [["−∞" if v else "0" for v in r] for r in neg] if small else None
    scores = np.where(neg, np.nan, logits)
    finite = scores[np.isfinite(scores)]
    lo, hi = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    causal = neg.shape[0] == neg.shape[1] and neg.any() and np.array_equal(neg, np.triu(np.ones_like(neg), k=1))
    # the mask as this model has it: an encoder's masks nothing (once titled "−∞ above" over all zeros)
    m_title = ("M: 0 on and below the diagonal, −∞ above" if causal
               else "M: all 0 (nothing masked: every query reads every key)" if not neg.any()
               else "M: 0 where a key may be read, −∞ where it may not")
    why = ("every key after its query" if causal else "this model's attention reads every key" if not neg.any()
           else "the keys this model's mask blocks")
    panels = [Panel(m_title, np.zeros_like(mask), rows, rows, 0.0, 1.0,
                    "M (hatched: −∞)", neg, mask_text),
              Panel("Scaled scores S + M", np.nan_to_num(scores, nan=lo), rows, rows, lo, hi, "score", neg),
              Panel("P = softmax(S + M)", probs, rows, rows, 0.0, float(probs.max()), "attention weight", neg)]
    leak = float(probs[neg].max()) if neg.any() else 0.0
    notes = [f"{int(neg.sum())} of {mask.size} cells are −∞ ({why}); their weight after the softmax: {leak:g}",
             f"Each row {'still sums to 1 over the tokens up to the query' if neg.any() else 'sums to 1 over every key'}"
             f" (max |Σ − 1| = "
             f"{sci(float(np.max(np.abs(probs.sum(-1) - 1))))})"]
    name = "The causal mask" if causal else "The attention mask (none)" if not neg.any() else "The attention mask"
    return FigurePanels(f"{name} · layer {state.layer}, head {state.head}", panels, notes,
                        {"mask": mask, "scores": logits, "probs": probs, "future_weight": leak})


def panels_data(fig: FigurePanels) -> dict:
    """Flat name → array mapping of everything a figure shows (for ``--data``)."""
    out = {}
    for i, p in enumerate(fig.panels):
        out[f"panel{i}.values"] = np.asarray(p.values)
    for k, v in fig.numbers.items():
        out[k.replace(" ", "_")] = np.asarray(v)
    return out


def _sentence_case(text: str) -> str:
    """The first letter up, the rest as written ("L1·H0", not str.capitalize's "l1h0")."""
    return text[:1].upper() + text[1:]
