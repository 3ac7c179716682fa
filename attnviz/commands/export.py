"""``attnviz export``: figures for lectures, headless — the same views the app draws."""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from attnviz.commands.common import add_input_args, add_model_args, check_writable, load_from_args
from attnviz.errors import AttnvizError


def add_parser(sub) -> None:
    from attnviz.export.figures import FIGURES

    p = sub.add_parser("export", help="export a view (or a whole lecture pack) to PNG/SVG/PDF, headless")
    add_model_args(p)
    p._option_string_actions["--model"].required = False  # --scene / --lesson name their own models
    add_input_args(p, required=False)
    p.add_argument("--view", choices=list(FIGURES), metavar="VIEW",
                   help="one of: " + ", ".join(FIGURES))
    p.add_argument("-o", "--output", help="output file: .png, .svg or .pdf")
    p.add_argument("--lecture-pack", metavar="DIR", help="write every lecture figure and an index page to DIR")
    p.add_argument("--pack-format", choices=("png", "svg", "pdf"), default="png", help="lecture pack format")
    p.add_argument("--layer", type=int, default=None, help="default: the head the model names as its focus, else 0")
    p.add_argument("--head", type=int, default=None, help="default: the model's focus head, else 0")
    p.add_argument("--query", type=int, default=None, help="query position (default: none selected)")
    p.add_argument("--part", choices=("self", "cross", "enc"), default="self",
                   help="cross: decoder→encoder attention; enc: encoder layers (encoder–decoders)")
    p.add_argument("--step", default=None,
                   help="walkthrough step for --view steps: 1..6 or a name (project, score, scale, mask, softmax, "
                        "weight, sum)")
    p.add_argument("--all-heads", action="store_true", help="one figure per head of the layer")
    p.add_argument("--all-layers", action="store_true", help="one figure per layer")
    p.add_argument("--size", default=None, help="WxH pixels, e.g. 1920x1080")
    p.add_argument("--preset", default="16:9", help="slide preset: 16:9 (default), 4:3, square")
    p.add_argument("--dpi", type=int, default=150)
    p.add_argument("--scale", type=float, default=1.0, help="PNG supersampling factor")
    p.add_argument("--transparent", action="store_true", help="PNG with a transparent background")
    p.add_argument("--font-scale", type=float, default=1.0)
    p.add_argument("--colormap", default="viridis")
    p.add_argument("--no-colorbar", action="store_true")
    p.add_argument("--theme", choices=("light", "dark", "presentation"), default="light",
                   help="light (default, for slides), dark, or presentation (large fonts, thick lines)")
    p.add_argument("--title", default="")
    p.add_argument("--caption", default="")
    p.add_argument("--data", metavar="FILE", help="also write the numbers behind the figure (.npz or .csv)")
    p.add_argument("--truncate", action="store_true", help="cut text longer than the model's positions")
    from attnviz.commands.scene_args import add_scene_args

    add_scene_args(p)
    p.set_defaults(run=run)


def _options(args):
    from attnviz.export.render import ExportOptions

    if args.size:
        m = re.fullmatch(r"(\d+)[xX×](\d+)", args.size.strip())
        if not m:
            raise AttnvizError(f"--size {args.size!r} is not WxH (e.g. 1920x1080)")
        opts = ExportOptions(width=int(m[1]), height=int(m[2]))
    else:
        opts = ExportOptions.preset(args.preset)
    opts.dpi, opts.scale, opts.transparent = args.dpi, args.scale, args.transparent
    opts.title, opts.caption, opts.font_scale = args.title, args.caption, args.font_scale
    opts.validate()
    if args.font_scale <= 0 or args.font_scale > 10:
        raise AttnvizError("--font-scale must be between 0 and 10")
    return opts


def _validate(args) -> None:
    if bool(args.lecture_pack) == bool(args.view):
        raise AttnvizError("give either --view VIEW (with -o FILE) or --lecture-pack DIR")
    if args.view:
        if not args.output:
            raise AttnvizError("--view needs -o FILE (.png, .svg or .pdf)")
        out = check_writable(args.output)
        if out.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise AttnvizError(f"cannot export to {out.name}: use a .png, .svg or .pdf file name")
    if args.data:
        data = check_writable(args.data)
        if data.suffix.lower() not in (".npz", ".csv"):
            raise AttnvizError(f"cannot write data to {data.name}: use .npz or .csv")
    names = ("project", "score", "scale", "mask", "softmax", "weight", "sum")
    if args.step is not None and args.step not in names and args.step not in "123456":
        raise AttnvizError(f"--step must be 1..6 or one of {', '.join(names)}")


def run(args) -> int:
    from attnviz.commands.scene_args import run_scene_export

    done = run_scene_export(args, _options)
    if done is not None:
        return done
    _validate(args)
    from attnviz.export.headless import ensure_app, export_style

    app = ensure_app()  # noqa: F841 (keeps Qt alive while figures render)
    opts = _options(args)
    style = export_style(args.theme, args.colormap, not args.no_colorbar, args.font_scale)
    from attnviz.export.figures import figure_spec
    from attnviz.pipeline import run_trace
    from attnviz.selection import SelectionState

    spec = figure_spec(args.view) if args.view else None
    loaded = load_from_args(args)
    grad = bool(args.lecture_pack) or (spec is not None and spec.needs_grad)
    trace = run_trace(loaded, text=args.text, image=args.image, grad=grad, truncate=args.truncate)
    if trace.meta.get("notice"):
        print(f"attnviz: note: {trace.meta['notice']}", file=sys.stderr)
    focus = trace.meta.get("focus") or {}  # coref names the head chosen on validation data
    args.layer = args.layer if args.layer is not None else int(focus.get("layer", 0))
    args.head = args.head if args.head is not None else int(focus.get("head", 0))
    state = SelectionState(layer=args.layer, head=args.head, query=args.query, part=args.part)
    base = ["attnviz", "export", "--model", args.model]
    base += ["--text", args.text] if args.text else ["--image", args.image]
    if args.lecture_pack:
        from attnviz.export.batch import export_lecture_pack

        entries = export_lecture_pack(trace, args.lecture_pack, opts, style, shlex.join(base), args.pack_format,
                                      query=args.query)
        print(f"wrote {len(entries)} figures and index.md/index.html to {args.lecture_pack} "
              f"({sum(e.seconds for e in entries):.1f} s)")
        return 0
    from attnviz.export.batch import export_many, export_one

    if args.all_heads or args.all_layers:
        written = export_many(args.view, trace, state, args.output, opts, style, args.all_heads, args.all_layers)
    else:
        written = [export_one(args.view, trace, state, args.output, opts, style, args.step)]
    if args.data:
        from attnviz.export.data import figure_data, write_figure_data

        write_figure_data(args.data, figure_data(args.view, trace, state))
        written.append(Path(args.data))
    for path in written:
        print(f"wrote {path}")
    return 0
