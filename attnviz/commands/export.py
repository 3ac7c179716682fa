"""``attnviz export``: figures for lectures, headless — the same views the app draws."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from attnviz.commands.common import (HELP_FORMATTER, add_force_arg, add_input_args, add_model_args, check_output,
                                     check_pack_output, dpi, examples, float_range, guarded_outputs, index,
                                     load_from_args, size, write_guard)
from attnviz.errors import AttnvizError

MAX_PIXELS = 16384 * 16384 // 4  # a PNG of at most 64 megapixels (256 MB while it is painted)
_PDF_MAX_PT, _PDF_MIN_PT = 14400, 3  # page sides PDF readers accept (ISO 32000 annex C)


def add_parser(sub) -> None:
    from attnviz.figures.registry import FIGURES

    p = sub.add_parser(
        "export", help="export a view (or a whole lecture pack) to PNG/SVG/PDF, headless",
        description="Draw one of the app's views off-screen, with the same code as the screen, into a PNG, SVG "
                    "or PDF file; or a lecture pack: every lecture figure of one input plus an index page. "
                    "SVG and PDF keep text and lines as vectors.",
        epilog=examples(
            "attnviz export --model coref --text \"The animal didn't cross the street because it was too tired\" "
            "--view head-map --layer 1 --head 0 -o it.pdf",
            "attnviz export --model shapes --image photo.png --view rollout -o rollout.svg --data rollout.csv",
            "attnviz export --model coref --text \"...\" --view steps --step softmax --query 8 -o softmax.png",
            "attnviz export --model coref --text \"...\" --view head-map --all-heads --preset 4:3 -o heads.png",
            "attnviz export --model coref --text \"...\" --lecture-pack figures/ --pack-format svg",
            "attnviz export --model coref --text \"...\" --view token-lines -o lines.html"),
        formatter_class=HELP_FORMATTER)
    add_model_args(p)
    p._option_string_actions["--model"].required = False  # --scene / --lesson name their own models
    add_input_args(p, required=False)
    p.add_argument("--view", choices=list(FIGURES), metavar="VIEW",
                   help="the view to draw, one of: " + ", ".join(FIGURES))
    p.add_argument("-o", "--output", metavar="FILE",
                   help="output file of --view: .png, .svg or .pdf; or .html, one self-contained interactive page "
                        "(head-map, model, token-lines: every layer and head, hover values, offline)")
    p.add_argument("--lecture-pack", metavar="DIR", help="write every lecture figure and an index page to DIR")
    p.add_argument("--pack-format", choices=("png", "svg", "pdf"), default="png",
                   help="file format of the lecture pack's figures (default png)")
    p.add_argument("--layer", type=index, default=None,
                   help="layer index, from 0 (default: as the app opens: the layer of the model's focus head, else of its "
                        "sharpest head; the walkthrough's figures: where the opening query's row mixes)")
    p.add_argument("--head", type=index, default=None,
                   help="head index, from 0 (default: the model's focus head, else its sharpest head, as the app opens)")
    p.add_argument("--query", type=index, default=None,
                   help="query position, from 0 (default, as the app opens: the task's query where it names one, "
                        "e.g. coref's 'it'; the walkthrough's figures: its opening row; else none selected)")
    p.add_argument("--part", choices=("self", "cross", "enc"), default=None,
                   help="self: (decoder) self-attention; cross: decoder→encoder attention; enc: encoder layers "
                        "(default: cross for encoder–decoders, as the app opens, else self)")
    p.add_argument("--step", default=None,
                   help="walkthrough step for --view steps: 1..6 or a name (project, rotate, score, scale, mask, softmax, "
                        "weight, sum)")
    p.add_argument("--all-heads", action="store_true", help="one figure per head of the layer (FILE-h0.png, …)")
    p.add_argument("--all-layers", action="store_true", help="one figure per layer (FILE-l0.png, …)")
    p.add_argument("--size", type=size, default=None, metavar="WxH",
                   help="figure size in pixels, each side 16..16384, e.g. 1920x1080 (overrides --preset)")
    p.add_argument("--preset", default="16:9", choices=("16:9", "4:3", "square"),
                   help="slide preset size: 16:9 (default), 4:3 or square")
    p.add_argument("--dpi", type=dpi, default=150,
                   help="PNG: pixels per inch stored in the file; PDF: page size = pixels / dpi inches "
                        "(10..2400, default 150)")
    p.add_argument("--scale", type=float_range(0.25, 8), default=1.0,
                   help="PNG supersampling factor, 0.25..8 (default 1): 2 draws twice as many pixels per side")
    p.add_argument("--transparent", action="store_true", help="PNG with a transparent background")
    p.add_argument("--font-scale", type=float_range(0.1, 10), default=1.0,
                   help="multiply every font size, 0.1..10 (default 1)")
    p.add_argument("--colormap", default="viridis", metavar="NAME",
                   help="colour map of attention weights (default viridis; e.g. cividis, magma, inferno)")
    p.add_argument("--no-colorbar", action="store_true", help="leave out the colour scale")
    p.add_argument("--no-highlight", action="store_true",
                   help="leave out the selected row/column highlight (the boxed query row, the bold token, the "
                        "clicked key) where it is only a highlight; a figure about one query keeps it")
    p.add_argument("--color-scale", choices=("auto", "fixed", "per-map", "shared"), default="auto",
                   help="heatmap colours: fixed 0–1, each map its own maximum, one scale shared by all heads "
                        "(or maps), or auto: the view's default (attention fixed 0–1, rollout per map)")
    p.add_argument("--theme", choices=("light", "dark", "presentation"), default="light",
                   help="light (default, for slides), dark, or presentation (large fonts, thick lines)")
    p.add_argument("--title", default="", help="a title band above the figure")
    p.add_argument("--caption", default="", help="a caption band below the figure")
    p.add_argument("--data", metavar="FILE", help="also write the numbers behind the figure (.npz or .csv)")
    p.add_argument("--truncate", action="store_true", help="cut text longer than the model's positions")
    p.add_argument("--compare", metavar="MODEL", default=None,
                   help="with --view compare: the same input on MODEL too (a model of the same shape: base vs "
                        "fine-tuned), one colour scale and the difference")
    p.add_argument("--compare-text", metavar="TEXT", default=None,
                   help="with --view compare: TEXT on the same model (as many tokens as --text)")
    from attnviz.commands.scene_args import add_scene_args

    add_scene_args(p)
    add_force_arg(p)
    p.set_defaults(run=run)


def _options(args):
    from attnviz.figures.render import ExportOptions

    opts = ExportOptions(width=args.size[0], height=args.size[1]) if args.size else ExportOptions.preset(args.preset)
    opts.dpi, opts.scale, opts.transparent = args.dpi, args.scale, args.transparent
    opts.title, opts.caption, opts.font_scale = args.title, args.caption, args.font_scale
    opts.validate()
    w, h = round(opts.width * opts.scale), round(opts.height * opts.scale)
    png = (args.output or "").lower().endswith(".png") or args.pack_format == "png" and args.lecture_pack
    if png and (max(w, h) > 16384 or w * h > MAX_PIXELS):
        raise AttnvizError(f"{opts.width}x{opts.height} at --scale {opts.scale:g} is {w}x{h} pixels, more than "
                           f"attnviz draws (16384 per side, {MAX_PIXELS // 10**6} megapixels): lower --scale or --size")
    pdf = (args.output or "").lower().endswith(".pdf") or args.pack_format == "pdf" and args.lecture_pack
    if pdf:
        pts = (opts.width * 72 / opts.dpi, opts.height * 72 / opts.dpi)
        if max(pts) > _PDF_MAX_PT or min(pts) < _PDF_MIN_PT:
            raise AttnvizError(f"at --dpi {opts.dpi} the PDF page would be {pts[0]:.4g}×{pts[1]:.4g} pt; PDF readers "
                               f"take {_PDF_MIN_PT}..{_PDF_MAX_PT} pt per side: change --dpi or --size")
    return opts


def _validate(args) -> None:
    from attnviz.io import refuse_overwrite
    from attnviz.io.paths import inside

    if bool(args.lecture_pack) == bool(args.view):
        raise AttnvizError("give either --view VIEW (with -o FILE) or --lecture-pack DIR")
    if args.view:
        if not args.output:
            raise AttnvizError("--view needs -o FILE (.png, .svg or .pdf)")
        out = check_output(args.output, args)
        from attnviz.export.html_command import check_html_args, is_html

        if is_html(out):
            check_html_args(args)
        elif out.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise AttnvizError(f"cannot export to {out.name}: use a .png, .svg or .pdf file name (.html: interactive)")
    if args.data:
        data = check_output(args.data, args)
        if data.suffix.lower() not in (".npz", ".csv"):
            raise AttnvizError(f"cannot write data to {data.name}: use .npz or .csv")
        if args.output:
            refuse_overwrite(data, inputs=[args.output])
    if args.lecture_pack:
        check_pack_output(args.lecture_pack, args)
        if args.image and inside(args.image, args.lecture_pack):
            from attnviz.figures.registry import FIGURES

            name = Path(args.image).name
            if name in ("index.md", "index.html") or name.startswith(tuple(f"{v}_" for v in FIGURES)):
                raise AttnvizError(f"{args.image} is a file the lecture pack in {args.lecture_pack} rewrites: "
                                   "choose another folder")
    names = ("project", "rotate", "score", "scale", "mask", "softmax", "weight", "sum")
    if args.step is not None and args.step not in names and args.step not in "123456":
        raise AttnvizError(f"--step must be 1..6 or one of {', '.join(names)}")


def run(args) -> int:
    with guarded_outputs(args):  # every file written, derived names too, obeys check_output's rules
        return _run(args)


def _compared(args, loaded, trace):
    """``--view compare``: the trace paired with the same input on ``--compare MODEL`` or ``--compare-text``."""
    wants = args.compare is not None or args.compare_text is not None
    if (args.view == "compare") != wants:
        raise AttnvizError("--view compare needs --compare MODEL or --compare-text TEXT, and they need --view compare")
    if not wants:
        return trace
    if args.compare is not None and args.compare_text is not None:
        raise AttnvizError("give one of --compare MODEL (the same input, another model) or --compare-text TEXT")
    from attnviz.analysis.trace_compare import pair_traces
    from attnviz.runtime import load_model, run_trace

    other_model = (load_model(args.compare, device=args.device, dtype=args.dtype) if args.compare is not None
                   else loaded)  # the --dtype asked, for both models
    text = args.compare_text if args.compare_text is not None else args.text
    other = run_trace(other_model, text=text, image=None if args.compare_text else args.image,
                      truncate=args.truncate, target_text=args.target)
    return pair_traces(trace, other)


def _run(args) -> int:
    from attnviz.commands.common import fill_example_input
    from attnviz.commands.scene_args import run_scene_export

    if (args.scene or args.lesson) and args.target is not None:
        raise AttnvizError("--target sets the decoder's input of a --model run; a scene or lesson keeps its own input")
    if (args.scene or args.lesson) and args.text_file is not None:
        raise AttnvizError("--text-file gives the input of a --model run; a scene or lesson keeps its own input")
    if not (args.scene or args.lesson):
        fill_example_input(args)
    done = run_scene_export(args, _options)
    if done is not None:
        return done
    _validate(args)
    from attnviz.export.headless import ensure_app
    from attnviz.figures.registry import export_style

    app = ensure_app()  # noqa: F841 (keeps Qt alive while figures render)
    opts = _options(args)
    style = export_style(args.theme, args.colormap, not args.no_colorbar, args.font_scale)
    style = style.with_(scale=args.color_scale)
    from attnviz.figures.registry import figure_spec
    from attnviz.runtime import run_trace
    from attnviz.selection import SelectionState

    spec = figure_spec(args.view) if args.view else None
    loaded = load_from_args(args)
    from attnviz.runtime.opening import wants_gradients

    # gradients as the app records them (a small classifier's): the same rollout figure in the app, the
    # export and the pack, never a gradient row the Rollout tab cannot show
    grad = (bool(args.lecture_pack) or (spec is not None and spec.needs_grad)) and wants_gradients(loaded)
    # an interactive page holds probabilities only (every layer and head, pooled): a capture that keeps what
    # recomputes them, not the walkthrough's arrays (a 3,000-token page on a 30-layer decoder peaked at
    # 2.1 GB for a 12.6 MB page with the full capture)
    from attnviz.export.html_command import is_html
    from attnviz.runtime.pipeline import probabilities_only

    cheap = probabilities_only(loaded) if is_html(args.output) and not grad and not args.lecture_pack else {}
    trace = run_trace(loaded, text=args.text, image=args.image, grad=grad, truncate=args.truncate,
                      target_text=args.target, **cheap)
    trace = _compared(args, loaded, trace)
    if trace.description.notice:
        print(f"attnviz: note: {trace.description.notice}", file=sys.stderr)
    from attnviz.analysis.walkthrough_default import WALKTHROUGH_VIEWS, default_selection

    # the one default rule, as the app opens its tabs: the part (cross for an encoder–decoder), the head
    # (the model's focus, else where the row mixes) and, for the walkthrough's figures, its query
    page = "walkthrough" if args.view in WALKTHROUGH_VIEWS else "attention"
    default = default_selection(trace, page, args.part)
    args.part = default["part"]
    if args.layer is None and args.head is None:
        args.layer, args.head = default["layer"], default["head"]
        args.query = default["query"] if args.query is None else args.query
    args.layer = args.layer if args.layer is not None else default["layer"]
    args.head = args.head if args.head is not None else default["head"]
    state = SelectionState(layer=args.layer, head=args.head, query=args.query, part=args.part)
    if getattr(args, "no_highlight", False) and args.view:
        from attnviz.selection import without_highlight

        state = without_highlight(state, args.view)
    base = ["attnviz", "export", "--model", args.model]
    if args.text_file is not None:  # the command that remakes the figure names the file, not its 70 KB of text
        base += ["--text-file", args.text_file]
    else:
        base += ["--text", args.text] if args.text else ["--image", args.image]
    base += ["--target", args.target] if args.target is not None else []
    if args.lecture_pack:
        from attnviz.export.batch import export_lecture_pack

        from attnviz.commands.progress import Progress

        trace.check_selection("self", 0, 0, args.query)  # the pack's query must exist (one line otherwise)
        with Progress(0, "lecture pack") as bar:
            entries = export_lecture_pack(trace, args.lecture_pack, opts, style, shlex.join(base),
                                          args.pack_format, query=args.query, progress=bar.update)
        print(f"wrote {len(entries)} figures and index.md/index.html to {args.lecture_pack} "
              f"({sum(e.seconds for e in entries):.1f} s)")
        return 0
    from attnviz.export.batch import export_many, export_one
    from attnviz.export.html_command import export_html, is_html

    if is_html(args.output):
        path, meta = export_html(args.output, args.view, trace, state, style)
        for notice in meta["notices"]:
            print(f"attnviz: note: {notice}", file=sys.stderr)
        written = [path]
    elif args.all_heads or args.all_layers:
        written = export_many(args.view, trace, state, args.output, opts, style, args.all_heads, args.all_layers)
    else:
        written = [export_one(args.view, trace, state, args.output, opts, style, args.step)]
    if args.data:
        from attnviz.export.data import figure_data, write_figure_data

        with write_guard(args.data):
            write_figure_data(args.data, figure_data(args.view, trace, state))
        written.append(Path(args.data))
    for path in written:
        print(f"wrote {path}")
    return 0
