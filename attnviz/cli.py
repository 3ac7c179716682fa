"""Command line: ``attnviz [PATH…]`` or ``attnviz COMMAND ...``.

Each subcommand lives in ``attnviz/commands/<name>.py`` with ``add_parser(subparsers)`` and
``run(args) -> int``. Problems the user can fix print one line and exit with code 2.

Without a command, ``attnviz`` opens the app; paths given instead of a command (a model folder, an
image, a trace saved by ``attnviz trace``: see :func:`attnviz.io.path_kinds.classify_path`) open in it,
which is what the desktop entry's ``Exec=attnviz %F`` passes.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path

from attnviz import __version__

# Before numpy loads: its OpenBLAS starts a thread per core and spins them on every product. The app
# multiplies small matrices (rollout: one 128×128 product a layer) while torch's worker and the GUI
# thread want the same cores: on a busy 2-core machine one such product took 26 ms instead of 0.3 ms
# (BERT-base's rollout: 370 ms a keystroke instead of 12). One BLAS thread, unless the user chose.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# Before torch loads: its OpenMP threads otherwise spin after every parallel region. A large model runs
# on every core (attnviz.device.app_threads); spinning threads then took the cores the GUI thread and
# other programs need: BERT-base's forward on a 2-core machine with one other busy process took 1.9 s
# instead of 0.57 s (median of 6). Sleeping threads cost nothing measurable on a quiet machine.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# Before torch loads: its CPU allocator then places tensors of 2 MB and more on transparent huge pages (Linux;
# elsewhere the variable is ignored). A capture keeps every layer's q, k, x, z… in fresh memory, and each first
# touch of a 4 KiB page faults: at 4,096 tokens on a 30-layer SmolLM2-shaped model 854k faults became 75k and
# the capture's CPU time 34.4 → 30.8 s (the model's own SDPA forward 31.5 → 30.5 s; one thread, same process).
# THP_MEM_ALLOC_ENABLE=0 in the environment turns it off.
os.environ.setdefault("THP_MEM_ALLOC_ENABLE", "1")

__all__ = ["main", "build_parser", "route", "COMMANDS", "GLOBAL_FLAGS"]

COMMANDS = ["gui", "trace", "steps", "train", "eval", "export", "bench", "heads", "models", "lesson"]
GLOBAL_FLAGS = ("-v", "--verbose")  # accepted before the command (and by the app without one)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one line, exit code 2 (argparse prints usage too; keep it short)
        self.exit(2, f"attnviz: error: {message}\n")


def build_parser(commands=tuple(COMMANDS)) -> argparse.ArgumentParser:
    """The argument parser with subcommands ``commands`` (default: all; the app's launch builds only ``gui``,
    as importing every command module to describe it costs ~50 ms before the window can appear)."""
    parser = _Parser(
        prog="attnviz", description="Look inside small transformers; export figures for lectures.",
        usage="attnviz [-v] [PATH ...] | attnviz [-v] COMMAND [options]",
        epilog="Without a command the app opens; PATHs (a model folder, an image, a trace saved by "
               "`attnviz trace`) open in it.\nexamples:\n  attnviz\n  attnviz path/to/model-folder photo.jpg\n"
               "  attnviz models\n  attnviz eval --model coref\n  attnviz COMMAND --help",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"attnviz {__version__}")
    parser.add_argument(*GLOBAL_FLAGS, dest="verbose", action="store_true",
                        help="say more on standard error (debug messages, timings); the log file gets them too")
    sub = parser.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    for name in commands:
        importlib.import_module(f"attnviz.commands.{name}").add_parser(sub)
        # `attnviz eval --model coref -v` too; SUPPRESS: not given here leaves the top-level value
        sub.choices[name].add_argument(*GLOBAL_FLAGS, dest="verbose", action="store_true",
                                       default=argparse.SUPPRESS, help="say more (see attnviz --help)")
    return parser


def _looks_like_path(token: str) -> bool:
    """A token that is meant as a file, not a mistyped command: it exists, or has a folder or suffix."""
    return Path(token).expanduser().exists() or os.sep in token or "/" in token or Path(token).suffix != ""


def route(argv: list[str]) -> list[str]:
    """The argument list argparse sees: the app (``gui``) when no command is named.

    ``attnviz`` and ``attnviz --presentation`` → ``gui``; ``attnviz FILE…`` → ``gui FILE…``; a leading
    ``--verbose`` stays in front. A bare word that is neither a command nor a path is left for argparse
    to reject (``invalid choice``), so a mistyped command is not taken for a missing file.
    """
    flags = []
    rest = list(argv)
    while rest and rest[0] in GLOBAL_FLAGS:
        flags.append(rest.pop(0))
    if not rest:
        return [*flags, "gui"]
    first = rest[0]
    if first in COMMANDS or first in ("-h", "--help", "--version"):
        return [*flags, *rest]
    if first.startswith("-") or _looks_like_path(first):
        return [*flags, "gui", *rest]
    return [*flags, *rest]


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    routed = route(argv)
    app = next((a for a in routed if a not in GLOBAL_FLAGS), None) == "gui"
    args = build_parser(("gui",) if app else tuple(COMMANDS)).parse_args(routed)
    from attnviz.errors import AttnvizError
    from attnviz.logsetup import configure_logging

    configure_logging(verbose=getattr(args, "verbose", False))
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
