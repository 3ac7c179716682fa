"""``attnviz heads``: score every head over many inputs (previous-token, induction, sink share, ...)."""

from __future__ import annotations

import json
import math
import sys

from attnviz.commands.common import (HELP_FORMATTER, add_model_args, examples, int_range, load_from_args,
                                     positive_int, seed)

__all__ = ["add_parser", "run", "format_table", "induction_measured_on"]

# table columns: score name -> header
COLUMNS = (("previous_token", "prev"), ("duplicate_token", "dup"), ("induction", "induct"),
           ("first_token", "sink"), ("entropy", "entropy"), ("distance", "dist"), ("gradient_share", "grad%"))


def add_parser(sub) -> None:
    p = sub.add_parser(
        "heads", help="score every head over a data set: previous-token, induction, sink share, ...",
        description="Run many inputs through a model in batches and score every attention head: previous-token, "
                    "duplicate-token, induction (decoders, on repeated random sequences), first-token (sink) "
                    "share, mean entropy, mean attention distance and, for classifiers, the share of gradient "
                    "attribution. A terminal gets a table and a progress bar; --json prints the scores.",
        epilog=examples("attnviz heads --model induction",
                        "attnviz heads --model charlm --n 1000 --json > charlm-heads.json",
                        "attnviz heads --model coref --corpus sentences.txt",
                        "attnviz heads --model path/to/llama --text-file chapter.txt",
                        "attnviz heads --model shapes --images photos/"),
        formatter_class=HELP_FORMATTER)
    add_model_args(p)
    src = p.add_mutually_exclusive_group()
    src.add_argument("--corpus", metavar="FILE", help="UTF-8 text file, one input per line (text models)")
    src.add_argument("--text-file", metavar="PATH",
                     help="one long input: the whole UTF-8 file (a byte-order mark is accepted) as a single text")
    src.add_argument("--images", metavar="DIR", help="folder of images (vision models)")
    p.add_argument("--n", type=positive_int, default=None,
                   help="how many inputs (default: 200 fresh held-out inputs of the model's task, or every "
                        "line / image given)")
    p.add_argument("--batch-size", type=int_range(1, 4096), default=64,
                   help="inputs per forward pass, 1..4096 (default 64)")
    p.add_argument("--seed", type=seed, default=0, help="seed of the generated held-out inputs, 0..2^32-1 (default 0)")
    p.add_argument("--json", action="store_true",
                   help='print {"n_inputs": N, "heads": [{"layer", "head", "part", "scores": {...}}]}')
    p.set_defaults(run=run)


def _cell(value) -> str:
    return "      –" if value is None or not math.isfinite(value) else f"{value:7.3f}"


INDUCTION_NATURAL = "rep-ind"  # the induction column when no random-sequence probe ran: what it measures
INDUCTION_NATURAL_NOTE = ("rep-ind: the induction pattern on the inputs' own repeated tokens, not the induction "
                          "score (that needs the repeated-random-sequence probe, which this model was not run on)")


PREV_PATCH = "prev-p"  # a vision model's previous-token column: the patch before in reading order
PREV_PATCH_NOTE = ("prev-p: attention on the patch before in reading order (row by row; a row's first patch: the "
                   "last of the row above; the first patch: [CLS])")  # (analysis.head_scores.score_label's reading)


def induction_measured_on(doc: dict) -> str | None:
    """What the ``induction`` scores of ``doc`` were measured on: "repeated random sequences" (the probe
    the README defines), "the inputs' own repeats" (a model scored one input at a time, e.g. a Hugging Face
    one), or None when there is no induction score."""
    if not any(h["scores"].get("induction") is not None for h in doc["heads"]):
        return None
    return "repeated random sequences" if doc.get("n_repeated") else "the inputs' own repeats"


def format_table(doc: dict) -> str:
    """The scores as a text table, one row per head, with the best head of each score named below."""
    natural = induction_measured_on(doc) == "the inputs' own repeats"
    patches = doc.get("kind") == "vit"  # a ViT's "previous token" is the patch before in reading order
    renamed = {"induction": INDUCTION_NATURAL if natural else None, "previous_token": PREV_PATCH if patches else None}
    headers = [renamed.get(name) or h for name, h in COLUMNS]
    lines = [f"{doc.get('model', '')}: {doc['n_inputs']} inputs"
             + (f" (+ {doc['n_repeated']} repeated random sequences for the induction score)"
                if doc.get("n_repeated") else ""),
             "", "part  layer head " + " ".join(f"{h:>7}" for h in headers)]
    for h in doc["heads"]:
        lines.append(f"{h['part']:<5} {h['layer']:>5} {h['head']:>4} "
                     + " ".join(_cell(h["scores"].get(name)) for name, _ in COLUMNS))
    lines.append("")
    for name, header in COLUMNS:
        rows = [h for h in doc["heads"] if h["scores"].get(name) is not None]
        if not rows or name in ("entropy", "distance"):
            continue
        best = max(rows, key=lambda h: h["scores"][name])
        label = ("repeat-induction pattern" if natural and name == "induction"
                 else "previous-patch" if patches and name == "previous_token" else name.replace("_", "-"))
        lines.append(f"best {label}: {best['part']} layer {best['layer']} head {best['head']} "
                     f"({best['scores'][name]:.3f})")
    # the legend names the columns as headed above (a renamed column is explained by its own note below)
    shown = dict(zip((name for name, _ in COLUMNS), headers))
    legend = [(shown["previous_token"], "the previous"), (shown["duplicate_token"], "an earlier same"),
              (shown["induction"], "the after-previous-occurrence")]
    plain = [(h, what) for h, what in legend if h in ("prev", "dup", "induct")]
    lines.append("/".join(h for h, _ in plain) + ": attention on " + " / ".join(w for _, w in plain) + " token; "
                 "sink: share on the first token; entropy in nats; dist in tokens (pixels for images); "
                 "grad%: share of |gradient × attention|")
    if patches:
        lines.append(PREV_PATCH_NOTE)
    if natural:
        lines.append(INDUCTION_NATURAL_NOTE)
    return "\n".join(lines)


class _Bar:
    """A one-line progress bar on a terminal's stderr; silent when stderr is not a terminal."""

    def __init__(self):
        self.tty = sys.stderr.isatty()

    def __call__(self, done: int, total: int | None) -> None:
        if not self.tty:
            return
        if total:
            filled = int(24 * min(done, total) / total)
            text = f"\rscoring [{'#' * filled}{'.' * (24 - filled)}] {done}/{total} inputs"
        else:
            text = f"\rscoring {done} inputs"
        print(text, end="", file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.tty:
            print("\r" + " " * 60 + "\r", end="", file=sys.stderr, flush=True)


def run(args) -> int:
    from attnviz.errors import InputError
    from attnviz.runtime import adapter_for
    from attnviz.runtime.batch_scores import DEFAULT_N, N_REPEATED, score_heads, score_heads_by_trace
    from attnviz.runtime.dataset_inputs import (count_corpus_lines, dataset_batches, dataset_items, list_images,
                                                repeated_batches)

    texts = None
    if args.text_file is not None:  # read before loading the model: a bad file fails at once
        from attnviz.text.text_file import read_text_file

        texts, total = [read_text_file(args.text_file)], 1
    elif args.corpus is not None:  # check the file before loading the model: a typo fails at once
        total = count_corpus_lines(args.corpus)
    elif args.images is not None:
        total = len(list_images(args.images))
    else:
        total = DEFAULT_N if args.n is None else args.n
    if args.n is not None:
        total = min(total, args.n)
    import torch

    from attnviz.runtime.batch_scores import scoring_threads

    torch.set_num_threads(scoring_threads())
    loaded = load_from_args(args)
    bar = _Bar()
    try:
        if not adapter_for(loaded).batched:  # hooked (Hugging Face) models: one input at a time
            items = dataset_items(loaded, corpus=args.corpus, images=args.images, n=args.n or total,
                                  texts=texts)
            result = score_heads_by_trace(loaded, items, total, progress=bar)
        else:
            def skip(path, message):  # one oversized photo is left out, with a note, not the whole run
                bar.close()
                print(f"attnviz: note: skipped {message}", file=sys.stderr, flush=True)

            batches = dataset_batches(loaded, corpus=args.corpus, images=args.images, n=args.n or total,
                                      batch_size=args.batch_size, seed=args.seed, on_skip=skip, texts=texts)
            repeated = repeated_batches(loaded, N_REPEATED, args.batch_size) \
                if loaded.config.kind == "decoder" else None
            result = score_heads(loaded, batches, total, repeated=repeated, progress=bar)
    finally:
        bar.close()
    doc = result.to_json()
    measured = induction_measured_on(doc)
    if measured:  # a reader of the JSON learns it too: the README's induction score is the probe's
        doc["induction_measured_on"] = measured
    print(json.dumps(doc) if args.json else format_table(doc))
    return 0
