"""Many figures from one trace: all heads, all layers, and the lecture pack with its index page."""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from attnviz.errors import AttnvizError
from attnviz.figures.registry import FIGURES, make_figure
from attnviz.figures.render import ExportOptions, export_widget
from attnviz.selection import SelectionState

__all__ = ["export_one", "export_many", "export_lecture_pack", "heads_of_interest", "PackEntry", "slide_title", "index_label",
           "row_legend", "ROW_GRID_FIGURES"]


@dataclass
class PackEntry:
    path: Path
    title: str
    command: str
    seconds: float


def export_one(name: str, trace, state: SelectionState, path, opts: ExportOptions, style=None,
               step: int | None = None) -> Path:
    """Build the view off-screen and write it; the view is closed afterwards."""
    view, _selection = make_figure(name, trace, state, style, step)
    try:
        return export_widget(view, path, opts)
    finally:
        view.close()
        view.deleteLater()


def export_many(name: str, trace, state: SelectionState, path, opts: ExportOptions, style=None,
                all_heads: bool = False, all_layers: bool = False) -> list[Path]:
    """One figure per head and/or per layer: ``stem_L{l}_H{h}.ext``."""
    path = Path(path)
    spec = FIGURES[name]
    n_layers = trace.layers_in(state.part)
    # a figure that does not draw the layer (or head) is written once, not once per identical copy
    by_layer = all_layers and "layer" in spec.selects
    layers = range(n_layers) if by_layer else [state.layer]
    heads = range(trace.n_heads) if all_heads and spec.per_head else [state.head]
    written = []
    for layer in layers:
        for head in heads:
            parts = [f"L{layer}" if by_layer or (all_heads and spec.per_head) else "",
                     f"H{head}" if all_heads and spec.per_head else ""]
            stem = "_".join([path.stem, *[p for p in parts if p]])
            s = replace(state, layer=layer, head=head)
            title = opts.title or slide_title(name, s, None, trace)
            written.append(export_one(name, trace, s, path.with_name(stem + path.suffix), replace(opts, title=title),
                                      style))
    return written


def heads_of_interest(trace, n: int = 4) -> list[tuple[int, int]]:
    """The n most focused heads (lowest mean attention entropy), a lecture's usual starting point.

    Each layer's entropy is streamed over blocks of query rows (:func:`attnviz.analysis.distance.head_statistics`):
    a long trace's whole (H, T, T) maps are never built here."""
    from attnviz.analysis.distance import head_statistics

    ent = np.stack([head_statistics(trace, i, with_distance=False)[0] for i in range(trace.layers_in("self"))])  # (L, H)
    order = np.argsort(ent, axis=None)[:n]
    return [tuple(int(v) for v in np.unravel_index(i, ent.shape)) for i in order]


def export_lecture_pack(trace, directory, opts: ExportOptions, style=None, base_command: str = "attnviz export",
                        fmt: str = "png", query: int | None = None, progress=None) -> list[PackEntry]:
    """Six steps for one query, matrix form (Z = P V, many heads), model view, heads of interest, rollout,
    embedding views.

    Writes ``index.md`` and ``index.html`` listing every figure and the command that made it.
    ``progress(done, total, name)``, when given, is called before each figure and once at the end.
    """
    directory = Path(directory)
    from attnviz.analysis.walkthrough_default import default_selection
    from attnviz.capture.trace import layer_prefix

    # the walkthrough's part, head and query (the one default rule): the same as the app's, the lesson's
    # and `attnviz steps` — translate's on cross-attention at the position that wrote the last token
    walk = default_selection(trace, "walkthrough")
    w_layer, w_head, q, w_part = walk["layer"], walk["head"], walk["query"], walk["part"]
    q = q if query is None else query
    plan: list[tuple[str, SelectionState, int | None, str]] = []
    # the attention views' part and head, as the app opens them (coref's focus head, translate's sharpest
    # cross-attention head), then the most focused self-attention heads
    att = default_selection(trace, "attention")
    layer, head, a_part = att["layer"], att["head"], att["part"]
    focused = [(layer, head, a_part)] + [(lyr, hd, "self") for lyr, hd in heads_of_interest(trace)
                                          if (lyr, hd, "self") != (layer, head, a_part)][:3]
    mask_key = layer_prefix(w_layer, w_part) + "mask"
    masked = mask_key in trace and bool(np.isinf(np.asarray(trace[mask_key])[q]).any())
    steps = [1, 2, 3, "mask", 4, 5, 6] if masked else [1, 2, 3, 4, 5, 6]
    for step in steps:
        plan.append(("steps", SelectionState(layer=w_layer, head=w_head, query=q, part=w_part), step, f"step {step}"))
    plan.append(("matrix-form", SelectionState(layer=w_layer, head=w_head, query=q, part=w_part), None, ""))
    plan.append(("matrix-z", SelectionState(layer=w_layer, head=w_head, query=q, part=w_part), None, ""))
    plan.append(("many-heads", SelectionState(layer=w_layer, head=w_head, query=q, part=w_part), None, ""))
    plan.append(("model", SelectionState(layer=layer, head=head, part=a_part), None, ""))
    for lyr, hd, part in focused:
        plan.append(("head-map", SelectionState(layer=lyr, head=hd, part=part), None, part if part != "self" else ""))
        if part == "self":
            # the lines of the pack's query alone: "it" → "animal" reads at a glance, 144 faint lines do not
            plan.append(("token-lines", SelectionState(layer=lyr, head=hd, query=q), None, ""))
    for name in ("rollout", "filters-pca", "pos-similarity", "attention-distance", "token-pca", "pos-encoding"):
        if trace.kind in FIGURES[name].kinds:
            if name in ("pos-similarity", "pos-encoding") and "emb.pos" not in trace:
                continue  # a rotary, ALiBi or relative model adds no position vectors: an empty slide teaches nothing
            # the rollout asks its own default row (a [CLS] classifier's [CLS], as the Rollout tab does), not the
            # walkthrough's query: order-sentiment's pack asked "where does 'all' get its information?"
            plan.append((name, SelectionState(layer=layer, head=head, query=None if name == "rollout" else q), None, ""))
    # a file per figure the pack really draws: a figure that does not depend on the head (token lines
    # show every head of the layer) is listed once, not once per head with the same picture
    files = [_pack_file(directory, name, state, step, fmt) for name, state, step, _ in plan]
    todo = [(i, f) for i, f in enumerate(files) if f not in files[:i]]
    entries = []
    from attnviz.io.staging import staged_files

    # all or nothing: every file checked before the first is written, made aside, then moved into place
    try:
        with staged_files(directory, [f.name for _, f in todo] + ["index.md", "index.html"]) as stage:
            for n, (i, file) in enumerate(todo):
                name, state, step, _ = plan[i]
                if progress is not None:
                    progress(n, len(todo), name)
                title = _title(name, state, step, trace)
                t0 = time.perf_counter()
                dressed = replace(opts, title=_painted_title(title, step), caption=opts.caption or row_legend(name, state, trace))
                export_one(name, trace, state, stage(file.name), dressed, style, step)
                entries.append(PackEntry(file, index_label(title, name, state),
                                         _pack_command(base_command, name, state, step, file),
                                         time.perf_counter() - t0))
            _write_index(stage("index.md").parent, entries, trace)
    except OSError as exc:
        raise AttnvizError(f"cannot write the lecture pack to {directory}: {exc.strerror or exc}") from None
    if progress is not None:
        progress(len(todo), len(todo), "index")
    return entries


def _drawn(name: str, state: SelectionState) -> dict:
    """The selection fields figure ``name`` draws, with their values (None and "self" left out)."""
    fields = FIGURES[name].selects
    got = {"layer": state.layer, "head": state.head, "query": state.query,
           "part": state.part if state.part != "self" else None}
    return {k: got[k] for k in ("layer", "head", "query", "part") if k in fields and got[k] is not None}


def _pack_file(directory: Path, name: str, state: SelectionState, step, fmt: str) -> Path:
    """``head-map_L1_H0.png``, ``token-lines_L1.png``, ``filters-pca.png``: named by what it shows."""
    drawn = _drawn(name, state)
    bits = [name, f"L{drawn['layer']}" if "layer" in drawn else "", f"H{drawn['head']}" if "head" in drawn else "",
            f"step{step}" if step else "", "cross" if drawn.get("part") == "cross" else ""]
    return directory / ("_".join(b for b in bits if b) + f".{fmt}")


def _pack_command(base: str, name: str, state: SelectionState, step, file: Path) -> str:
    """The command that makes the file again, with only the options the figure uses."""
    drawn = _drawn(name, state)
    args = [base, "--view", name] + [a for k in ("layer", "head", "query", "part") if k in drawn
                                      for a in (f"--{k}", str(drawn[k]))]
    if step:
        args += ["--step", str(step)]
    return " ".join(args + ["-o", file.name])


# Slide titles say what the figure shows in a few words; the figure's own heading names layer and head,
# so the title does not repeat them (and never quotes the registry's help sentence).
SLIDE_TITLES = {
    "head-map": "Who attends to whom",
    "model": "Every head at a glance",
    "token-lines": "Where each word looks",
    "rollout": "Where the classifier looked",
    "filters-pca": "What the patch embedding learned",
    "pos-similarity": "Which positions look alike",
    "attention-distance": "How far each head looks",
    "token-pca": "Word embeddings, flattened",
    "pos-encoding": "The positional encoding",
    "steps": "Self-attention, step by step",
    "matrix-form": "All queries at once: the matrix form",
    "matrix-z": "Z = P V: one head's output",
    "many-heads": "Many heads, one output: concat · W_O",
    "scale-reason": "Why divide by √d_k",
    "scale-training": "Training with and without √d_k",
    "path-length": "Path length: RNN vs attention",
    "masked-lm": "What a [MASK] looks at, and guesses",
    "causal-mask": "A decoder must not see the future",
    "what-if": "What if…",
    "permutation": "Shuffle the words, shuffle the attention",
    "word-order": "Same words, opposite meaning",
}
STEP_TITLES = {1: "Step 1: queries, keys, values", 2: "Step 2: scores q·k", 3: "Step 3: scale by 1/√d_k",
               "mask": "Masking the future", 4: "Step 4: softmax", 5: "Step 5: weight the values",
               6: "Step 6: sum"}


def slide_title(name: str, s: SelectionState, step, trace) -> str:
    """A short human title for figure ``name`` (e.g. "Where “it” looks", "Step 4: softmax")."""
    if step:
        return STEP_TITLES.get(step, STEP_TITLES.get(int(step) if str(step).isdigit() else step, f"Step {step}"))
    if name == "token-lines" and s.query is not None:
        return f"Where “{trace.tokens[s.query]}” looks"
    if name == "head-map" and s.part == "cross":
        return "Cross-attention: which source word each output reads"
    if name == "rollout" and trace.description.config.get("head") != "classify":
        return "Where the attention flows: rollout"  # a language model is no classifier
    return SLIDE_TITLES.get(name, name.replace("-", " ").capitalize())


_title = slide_title


# the walkthrough figures whose grids name every query row, token labels cut to a few characters (matrix_grid_paint)
ROW_GRID_FIGURES = ("matrix-form", "matrix-z", "many-heads")


def row_legend(name: str, state: SelectionState, trace) -> str:
    """The caption naming a row label the figure's grids cut: translate's cross-attention rows end in "(end)",
    the decoder position after [EOS] that wrote nothing (the pack printed the cut label with nothing to read it by).
    Empty where every row label is whole."""
    from attnviz.analysis.decoder_positions import END_ROW, end_row
    from attnviz.gui.walkthrough.matrix_grid_paint import short_label

    if name not in ROW_GRID_FIGURES or end_row(trace, state.part) is None or short_label(END_ROW) == END_ROW:
        return ""
    return (f"Row “{short_label(END_ROW)}”: the last decoder position, after [EOS] — decoding stopped there, "
            "nothing was written (drawn for completeness)")


def _painted_title(title: str, step) -> str:
    """The title painted above a step's figure: without its "Step n:", which the figure's own heading says
    ("Step 1 · project: …"), so the slide does not say it twice."""
    return title.split(": ", 1)[1].capitalize() if step and title.startswith("Step ") and ": " in title else title


def index_label(title: str, name: str, state: SelectionState) -> str:
    """A pack index row's name: the slide title and the layer and head it draws ("Who attends to whom ·
    layer 1 · head 3"), so four head maps are not four rows of the same words."""
    drawn = _drawn(name, state)
    bits = [f"{k} {drawn[k]}" for k in ("layer", "head") if k in drawn]
    return " · ".join([title, *bits])


def _write_index(directory: Path, entries: list[PackEntry], trace) -> None:
    from attnviz.io import write_atomic
    from attnviz.io.outputs import PACK_MARKER_TAG  # says what made the page (grants nothing: io.outputs)
    from attnviz.text.formula_markup import formula_html, formula_plain

    described = trace.description
    model = described.model_name or "model"
    src = described.input_text or "image input"
    md = [f"# attnviz lecture pack: {model}", "", f"Input: {src}", "", "| figure | file | command |", "|---|---|---|"]
    # titles as the slides write them: "W_O", "√d_k" with real subscripts (GitHub's Markdown keeps <sub>)
    md += [f"| {formula_html(e.title)} | [{e.path.name}]({e.path.name}) | `{e.command}` |" for e in entries]
    rows = "\n".join(
        f"<tr><td>{formula_html(e.title)}</td><td><a href='{html.escape(e.path.name)}'>"
        f"<img src='{html.escape(e.path.name)}' width='320' alt='{html.escape(formula_plain(e.title))}'></a></td>"
        f"<td><code>{html.escape(e.command)}</code></td></tr>" for e in entries)
    page = (f"<!doctype html><html><head><meta charset='utf-8'>"
            f"{PACK_MARKER_TAG}<title>attnviz: {html.escape(model)}</title></head>"
            f"<body><h1>attnviz lecture pack: {html.escape(model)}</h1><p>Input: {html.escape(src)}</p>"
            f"<table border='1' cellpadding='6'><tr><th>figure</th><th>file</th><th>command</th></tr>{rows}"
            f"</table></body></html>")
    write_atomic(directory / "index.md", lambda tmp: Path(tmp).write_text("\n".join(md) + "\n", encoding="utf-8"))
    write_atomic(directory / "index.html", lambda tmp: Path(tmp).write_text(page, encoding="utf-8"))
