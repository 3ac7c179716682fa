"""``attnviz lesson``: list the built-in lessons; check every claim of a lesson against its models."""

from __future__ import annotations

import sys

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    from attnviz.commands.common import HELP_FORMATTER, examples, int_range, seed

    p = sub.add_parser(
        "lesson", help="list lessons; check a lesson's claims on its own inputs and held-out data",
        description="A lesson is an ordered list of scenes, each with a title and a claim about the model "
                    "(format: attnviz/lessons/FORMAT.md). `list` names the built-in lessons; `check` measures "
                    "every claim on the scene's own input and on fresh held-out data of its task and exits 1 "
                    "if any claim fails.",
        epilog=examples("attnviz lesson list", "attnviz lesson check attention",
                        "attnviz lesson check my-lesson.json --n 500 --seed 3",
                        "attnviz export --lesson attention -o deck.pdf"),
        formatter_class=HELP_FORMATTER)
    lsub = p.add_subparsers(dest="lesson_command", metavar="ACTION", help="list or check")
    lsub.required = True
    lsub.add_parser("list", help="the built-in lessons, one line each")
    c = lsub.add_parser("check", help="measure every scene's claim; exit 1 if any fails")
    c.add_argument("lesson", help="a built-in lesson name or a lesson file")
    c.add_argument("--n", type=int_range(1, 100_000), default=200,
                   help="fresh held-out examples per claim, 1..100000 (default 200)")
    c.add_argument("--seed", type=seed, default=None,
                   help="seed of the held-out data, 0..2^32-1 (default: a fixed fresh one)")
    p.set_defaults(run=run)


def run(args) -> int:
    from attnviz.errors import AttnvizError
    from attnviz.lessons.lesson import lesson_names, load_lesson

    if args.lesson_command == "list":
        for name in lesson_names():
            lesson = load_lesson(name)
            print(f"{name}\t{len(lesson.scenes)} scenes\t{lesson.title}")
        return 0
    if args.n < 1 or args.n > 100_000:
        raise AttnvizError("--n must be between 1 and 100000")
    from attnviz.lessons.claims import HELD_OUT_SEED, Workbench, evaluate_claim

    lesson = load_lesson(args.lesson)
    bench = Workbench()
    seed = HELD_OUT_SEED if args.seed is None else args.seed
    failed = 0
    for i, scene in enumerate(lesson.scenes, 1):
        if not scene.claim:
            print(f"{i:2d} ----  {scene.title}: no claim")
            continue
        try:
            result = evaluate_claim(scene, bench, seed=seed, n=args.n)
        except AttnvizError as exc:  # a scene that cannot be measured is a failed claim, not a crash
            failed += 1
            print(f"{i:2d} FAIL  {scene.title}: cannot measure: {exc}")
            continue
        failed += not result.ok
        print(f"{i:2d} {'ok  ' if result.ok else 'FAIL'}  {scene.title}: {result.line}", flush=True)
    print(f"{len(lesson.scenes) - failed} of {len(lesson.scenes)} claims hold ({lesson.name}, held-out seed {seed}, "
          f"n {args.n})", file=sys.stderr)
    return 1 if failed else 0
