"""The compatibility run behind ``make compat``: the dependency ranges pyproject.toml promises, tested at both ends.

For each end of the ranges ("low": every range's lower bound; "high": the newest release each range admits
that this machine's package index serves) a fresh virtual environment gets PySide6-Essentials, pyqtgraph,
torch, NumPy and transformers at that end, the package itself (editable, with its ``test`` and ``hf``
extras; the other dependencies resolve as pip chooses), and runs a selection of the suite: the GUI smoke
tests (a real window under Xvfb, the app's start-up, the start-up order that guards PySide6 6.11's crash,
the stepped import), the export tests and the Hugging Face tests. It prints one row per environment (the
versions really installed, install and test times, disk used, the test summary) and deletes each
environment afterwards unless ``--keep``. Exit code 1 when any environment fails to install or to pass.

Not part of ``make test`` or CI: it installs ~6 GB (the newest torch on x86-64 is a CUDA build) and takes
tens of minutes on two cores. Run it before widening or after narrowing a range, and when a new PySide6,
pyqtgraph, torch, NumPy or transformers release comes out; write what passed into pyproject.toml and the
README ("Tested versions").

torch is installed first and on its own, then pinned to what was installed: pip asked for torch through a
range may otherwise take a multi-GB CUDA build from the registry (see the Makefile's ``TORCH_PIN``).
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the packages whose ranges this run checks (the name pyproject.toml gives them → the name pip lists)
CHECKED = ("PySide6-Essentials", "pyqtgraph", "torch", "numpy", "transformers")
# the GUI smoke tests, the export tests and the Hugging Face tests (paths relative to the checkout), each
# group in a pytest process of its own: a crash in one (PySide6 6.11's, see attnviz.gui.startup) leaves the
# others' results standing
GROUPS = {"gui smoke": ("tests/gui/test_xvfb_smoke.py", "tests/gui/test_app_startup.py",
                        "tests/gui/test_startup_order.py", "tests/gui/test_stepped_import.py",
                        "tests/gui/test_views_head_map.py"),
          "export": ("tests/export",),
          "hf": ("tests/hf",)}
_REQ = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*(.*)$")


def ranges(pyproject: Path = ROOT / "pyproject.toml") -> dict[str, str]:
    """Each checked package's version specifier as pyproject.toml states it (dependencies and the hf extra)."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    reqs = list(project["dependencies"]) + list(project.get("optional-dependencies", {}).get("hf", []))
    out = {}
    for req in reqs:
        m = _REQ.match(req.split(";")[0])
        if m and m.group(1).lower() in {c.lower() for c in CHECKED}:
            out[next(c for c in CHECKED if c.lower() == m.group(1).lower())] = m.group(3).replace(" ", "")
    missing = [c for c in CHECKED if c not in out]
    if missing:
        raise SystemExit(f"compat: pyproject.toml names no range for {', '.join(missing)}")
    return out


def lower_bound(spec: str) -> str:
    """The version of a specifier's ``>=`` clause (the lowest release the range admits)."""
    for clause in spec.split(","):
        if clause.startswith(">="):
            return clause[2:]
    raise SystemExit(f"compat: the range {spec!r} has no lower bound (>=): nothing to test at the low end")


def requirements(end: str, specs: dict[str, str]) -> dict[str, str]:
    """The requirement of each checked package at ``end`` ("low": ``==`` its lower bound; "high": its range,
    which pip resolves to the newest release it may)."""
    if end == "low":
        return {name: f"{name}=={lower_bound(spec)}" for name, spec in specs.items()}
    return {name: f"{name}{spec}" for name, spec in specs.items()}


def _run(cmd: list[str], log, env=None, cwd=ROOT) -> int:
    log.write(f"$ {' '.join(cmd)}\n")
    log.flush()
    return subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=cwd).returncode


def _installed(python: Path) -> dict[str, str]:
    code = ("import importlib.metadata as m, json, sys\n"
            "def v(n):\n"
            "    try:\n"
            "        return m.version(n)\n"
            "    except m.PackageNotFoundError:\n"
            "        return 'not installed'\n"
            "print(json.dumps({n: v(n) for n in sys.argv[1:]}))")
    out = subprocess.run([str(python), "-c", code, *CHECKED], capture_output=True, text=True)
    import json

    return json.loads(out.stdout) if out.returncode == 0 else {}


def _disk_mb(path: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_blocks * 512
            except OSError:
                pass
    return total // 2**20


def _summary(text: str, code: int) -> str:
    """pytest's closing line (``N passed, M failed in S s``) and the failed tests' names, from its output."""
    lines = [ln.strip("= \n") for ln in text.splitlines()]
    found = [ln for ln in lines if re.search(r"\d+ (passed|failed|error)", ln) and " in " in ln]
    failed = [ln.split(" - ")[0] for ln in lines if ln.startswith(("FAILED ", "ERROR "))]
    if found:
        head = found[-1]
        if code != 0 and not failed:  # every test passed, then the process failed (at its exit)
            head += f", then exit {code}" if code > 0 else f", then killed by signal {-code}"
    else:
        head = f"crashed (signal {-code})" if code < 0 else f"no pytest summary, exit {code}"
    return head + "".join(f"\n      {name}" for name in failed)


def run_groups(python: Path, log, groups: dict[str, tuple[str, ...]]) -> tuple[bool, dict[str, str], int]:
    """Each test group in its own pytest process; returns (all passed, group → summary, seconds)."""
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    env.pop("VIRTUAL_ENV", None)
    t0, ok, out = time.monotonic(), True, {}
    for name, paths in groups.items():
        cmd = [str(python), "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", *paths]
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=ROOT)
        log.write(proc.stdout + proc.stderr)
        out[name] = _summary(proc.stdout + proc.stderr, proc.returncode)
        ok = ok and proc.returncode == 0
    return ok, out, round(time.monotonic() - t0)


def run_end(end: str, specs: dict[str, str], folder: Path, groups: dict, keep: bool) -> dict:
    """Build the environment of one end, run the tests there; returns its row."""
    venv = folder / f"venv-{end}"
    log_path = folder / f"{end}.log"
    if venv.exists():
        shutil.rmtree(venv)
    row = {"end": end, "log": str(log_path)}
    reqs = requirements(end, specs)
    with open(log_path, "w", encoding="utf-8") as log:
        t0 = time.monotonic()
        python = venv / "bin" / "python"
        ok = _run([sys.executable, "-m", "venv", str(venv)], log) == 0
        pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
        ok = ok and _run(pip + ["--upgrade", "pip"], log) == 0
        ok = ok and _run(pip + [reqs["torch"]], log) == 0  # alone first: see the module's docstring
        if ok:
            torch_now = _installed(python).get("torch", "").split("+")[0]
            others = [r for name, r in reqs.items() if name != "torch"]
            ok = _run(pip + ["-e", ".[test,hf]", f"torch=={torch_now}", *others], log) == 0
        row["install_s"] = round(time.monotonic() - t0)
        row["versions"] = _installed(python)
        row["disk_mb"] = _disk_mb(venv)
        if not ok:
            row["result"] = "INSTALL FAILED"
        else:
            passed, row["groups"], row["test_s"] = run_groups(python, log, groups)
            row["result"] = "passed" if passed else "FAILED"
    if not keep:
        shutil.rmtree(venv, ignore_errors=True)
    return row


def _print(row: dict) -> None:
    versions = ", ".join(f"{k} {v}" for k, v in row["versions"].items())
    print(f"[{row['end']}] {row['result']}\n  versions: {versions}\n  install {row['install_s']} s, tests "
          f"{row.get('test_s', '-')} s, environment {row['disk_mb']} MB (log: {row['log']})", flush=True)
    for name, summary in row.get("groups", {}).items():
        print(f"    {name}: {summary}", flush=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ends", default="low,high", help="which ends to test: low, high or both (default)")
    parser.add_argument("--folder", default=str(ROOT / "build" / "compat"),
                        help="where the environments and their logs go (default build/compat)")
    parser.add_argument("--keep", action="store_true", help="keep the environments (default: deleted after)")
    parser.add_argument("--dry-run", action="store_true", help="print what each end would install, and stop")
    parser.add_argument("--reference", metavar="PYTHON",
                        help="also run the tests with this interpreter as it is (e.g. .venv/bin/python): failures "
                             "there are not the versions' doing")
    parser.add_argument("--group", action="append", choices=sorted(GROUPS),
                        help="only this test group (repeatable; default: all)")
    args = parser.parse_args(argv)
    specs = ranges()
    ends = [e.strip() for e in args.ends.split(",") if e.strip()]
    if any(e not in ("low", "high") for e in ends):
        parser.error("--ends takes low, high or low,high")
    for end in ends:
        print(f"{end}: {' '.join(requirements(end, specs).values())}", flush=True)
    if args.dry_run:
        return 0
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    groups = {g: GROUPS[g] for g in (args.group or GROUPS)}
    rows = []
    if args.reference:
        with open(folder / "reference.log", "w", encoding="utf-8") as log:
            passed, summaries, secs = run_groups(Path(args.reference), log, groups)
        rows.append({"end": "reference", "result": "passed" if passed else "FAILED", "groups": summaries,
                     "test_s": secs, "versions": _installed(Path(args.reference)), "install_s": 0, "disk_mb": 0,
                     "log": str(folder / "reference.log")})
        _print(rows[-1])
    for end in ends:
        rows.append(run_end(end, specs, folder, groups, args.keep))
        _print(rows[-1])
    return 0 if all(r["result"].startswith("passed") for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
