"""``attnviz lesson``: list the built-in lessons; check every claim of a lesson against its models."""

from __future__ import annotations

import sys

__all__ = ["add_parser", "run"]


def add_parser(sub) -> None:
    p = sub.add_parser("lesson", help="list lessons; check a lesson's claims on its own inputs and held-out data")
    lsub = p.add_subparsers(dest="lesson_command", metavar="ACTION")
    lsub.required = True
    lsub.add_parser("list", help="the built-in lessons, one line each")
    c = lsub.add_parser("check", help="measure every scene's claim; exit 1 if any fails")
    c.add_argument("lesson", help="a built-in lesson name or a lesson file")
    c.add_argument("--n", type=int, default=200, help="fresh held-out examples per claim (default 200)")
    c.add_argument("--seed", type=int, default=None, help="seed of the held-out data (default: a fixed fresh one)")
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
