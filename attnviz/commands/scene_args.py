"""``attnviz export`` options for scenes, lessons and the figures that re-run the model (what-if & co)."""

from __future__ import annotations

import re
import sys

from attnviz.errors import AttnvizError

__all__ = ["add_scene_args", "run_scene_export", "scene_from_args"]


def add_scene_args(p) -> None:
    g = p.add_argument_group("scenes and lessons")
    g.add_argument("--scene", metavar="FILE", help="export the figure a saved scene describes (-o FILE)")
    g.add_argument("--lesson", metavar="NAME", help="a lesson (built-in name or file): -o deck.pdf, one page per "
                   "scene, or --lecture-pack DIR")
    w = p.add_argument_group("what-if switches (--view what-if)")
    w.add_argument("--score-scale", choices=("model", "none"), default="model",
                   help="model: the trained 1/√d_k (default); none: no scaling")
    w.add_argument("--temperature", type=float, default=1.0, help="divide the scaled scores by T")
    w.add_argument("--no-causal", action="store_true", help="switch the causal mask off")
    w.add_argument("--no-positions", action="store_true", help="switch the positional encoding off")
    w.add_argument("--ablate", action="append", default=[], metavar="L:H", help="zero head H of layer L (repeatable)")


def _whatif(args) -> dict:
    w = {}
    if args.score_scale != "model":
        w["scale"] = args.score_scale
    if args.temperature != 1.0:
        w["temperature"] = args.temperature
    if args.no_causal:
        w["causal"] = False
    if args.no_positions:
        w["positional"] = False
    pairs = []
    for item in args.ablate:
        m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", item)
        if not m:
            raise AttnvizError(f"--ablate {item!r} is not LAYER:HEAD (e.g. 0:1)")
        pairs.append([int(m[1]), int(m[2])])
    if pairs:
        w["ablate"] = pairs
    return w


def scene_from_args(args):
    """A Scene for ``--view`` with ``--model`` and ``--text``/``--image`` (and the what-if switches)."""
    from attnviz.lessons.scene import Scene

    return Scene(model=args.model, text=args.text, image=args.image, target=getattr(args, "target", None),
                 view=args.view, part=args.part or "self",
                 layer=args.layer, head=args.head, query=args.query, step=args.step, whatif=_whatif(args),
                 colormap=args.colormap, theme=args.theme, title=args.title, caption=args.caption)


def run_scene_export(args, options) -> int | None:
    """Handle --scene, --lesson and the model-computed views; None when it is an ordinary export."""
    from attnviz.lessons.figure_data import MODEL_FIGURES

    if not (args.scene or args.lesson or args.view in MODEL_FIGURES):
        if not args.model or not (args.text or args.image):
            raise AttnvizError("give --model and --text or --image (or --scene FILE / --lesson NAME)")
        return None
    if args.scene and args.lesson:
        raise AttnvizError("give either --scene FILE or --lesson NAME, not both")
    from attnviz.commands.common import check_output, check_pack_output

    if args.lesson:
        if bool(args.output) == bool(args.lecture_pack):
            raise AttnvizError("--lesson needs either -o deck.pdf or --lecture-pack DIR")
        if args.output and not args.output.lower().endswith(".pdf"):
            raise AttnvizError("a lesson deck is a PDF: use -o NAME.pdf (or --lecture-pack DIR for single figures)")
    else:
        if not args.output:
            raise AttnvizError("give -o FILE (.png, .svg or .pdf)")
        out = check_output(args.output, args)
        if out.suffix.lower() not in (".png", ".svg", ".pdf"):
            raise AttnvizError(f"cannot export to {out.name}: use a .png, .svg or .pdf file name")
    if args.lesson is None and args.scene is None:
        if not args.model or not (args.text or args.image):
            raise AttnvizError(f"--view {args.view} needs --model and --text or --image")
    if args.output and args.lesson:
        check_output(args.output, args)
    if args.lecture_pack:
        check_pack_output(args.lecture_pack, args)
    if args.data:
        check_output(args.data, args)
    if args.data and args.lesson:
        raise AttnvizError("--data is written for one figure: use it with --scene or --view, not --lesson")
    # the shared file is read (and refused, in one line) before Qt or a model is started
    if args.lesson:
        from attnviz.lessons.lesson import load_lesson

        lesson = load_lesson(args.lesson)
    elif args.scene:
        from attnviz.lessons.scene import load_scene

        scene = load_scene(args.scene)
    else:
        scene = scene_from_args(args)
    from attnviz.export.headless import ensure_app

    app = ensure_app()  # noqa: F841 (keeps Qt alive while figures render)
    opts = options(args)
    from attnviz.figures import scenes as se

    if args.lesson:

        def log(msg):
            print(msg, file=sys.stderr, flush=True)

        if args.lecture_pack:
            files = se.export_lesson_pack(lesson, args.lecture_pack, opts, args.pack_format)
            print(f"wrote {len(files)} figures and index.md/index.html to {args.lecture_pack}")
        else:
            se.export_lesson_pdf(lesson, args.output, opts, log=log)
            print(f"wrote {args.output} ({len(lesson.scenes)} pages)")
        return 0
    view, _selection, caption, _ = se.build_scene_figure(scene, style=se.scene_style(scene, opts))
    from dataclasses import replace

    from attnviz.figures.render import export_widget

    try:
        written = export_widget(view, args.output, replace(opts, title=opts.title or scene.title,
                                                           caption=opts.caption or caption))
        if args.data:
            if getattr(view, "panels", None) is not None:
                _write_data(view, args.data)
            else:  # an ordinary view: the same numbers `export --view ... --data` writes
                from attnviz.export.data import figure_data, write_figure_data

                write_figure_data(args.data, figure_data(scene.view, view.trace, _selection.state))
    finally:
        view.close()
        view.deleteLater()
    print(f"wrote {written}" + (f"\nwrote {args.data}" if args.data else ""))
    return 0


def _write_data(view, path) -> None:
    """The numbers of a comparison figure (.npz arrays, or .csv rows of name, flat index, value)."""
    panels = getattr(view, "panels", None)
    if panels is None:
        raise AttnvizError("--data with --scene is written for the comparison figures (what-if, permutation, word order, "
                 "causal mask); export the view with --model/--text for its data")
    from pathlib import Path

    import numpy as np

    from attnviz.io import write_atomic
    from attnviz.lessons.figure_data import panels_data

    data = panels_data(panels)
    if str(path).lower().endswith(".npz"):
        def save(tmp):
            with open(tmp, "wb") as fh:
                np.savez(fh, **data)

        write_atomic(path, save)
    else:
        lines = ["name,index,value"]
        for k, v in data.items():
            for i, x in enumerate(np.asarray(v, np.float64).ravel()):
                lines.append(f"{k},{i},{x:.8g}")
        write_atomic(path, lambda tmp: Path(tmp).write_text("\n".join(lines) + "\n", encoding="utf-8"))
