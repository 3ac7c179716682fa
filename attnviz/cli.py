"""Command line: ``attnviz [gui|trace|steps|train|eval|export|bench] ...``.

Each subcommand lives in ``attnviz/commands/<name>.py`` with ``add_parser(subparsers)`` and
``run(args) -> int``. Problems the user can fix print one line and exit with code 2.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from attnviz import __version__

__all__ = ["main", "build_parser"]

COMMANDS = ["gui", "trace", "steps", "train", "eval", "export", "bench", "lesson"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit code 2 (argparse prints usage too; keep it short)
        self.exit(2, f"attnviz: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="attnviz", description="Look inside small transformers; export figures for lectures.")
    parser.add_argument("--version", action="version", version=f"attnviz {__version__}")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"attnviz.commands.{name}").add_parser(sub)
    return parser


def _scene_argv(argv: list[str]) -> list[str]:
    """``attnviz FILE.json`` where FILE is a saved scene: open it in the app (``gui --scene FILE``)."""
    if len(argv) == 1 and argv[0].lower().endswith(".json") and argv[0] not in COMMANDS:
        from attnviz.lessons.scene import is_scene_file

        if is_scene_file(argv[0]):
            return ["gui", "--scene", argv[0]]
    return argv


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        argv = ["gui", *argv]  # no subcommand: open the app
    argv = _scene_argv(argv)
    args = build_parser().parse_args(argv)
    from attnviz.errors import AttnvizError

    try:
        return int(args.run(args) or 0)
    except AttnvizError as exc:
        print(f"attnviz: error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # `attnviz steps ... | head`
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("attnviz: interrupted", file=sys.stderr)
        return 130
