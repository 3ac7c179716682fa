"""Run a library's private-name tests at the lowest version pyproject.toml supports, beside the installed one.

The in-process tests check each private name at the installed (highest) version. The lowest supported
version is installed once with ``pip install --no-deps --target`` into ``.cache/lowest-versions/`` (ignored by
git; a few seconds the first time, nothing after) and the same test file runs in a subprocess with that
folder first on ``sys.path``. The subprocess first checks that it really imported that version, so a run that
silently fell back to the installed one fails. Only an unreachable registry skips, with the reason.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "lowest-versions"
# the name every "at the lowest version" test carries, so the subprocess does not start itself again
LOWEST_TEST = "at_the_lowest_supported_version"
_OFFLINE = re.compile(r"connection|resolve|network|unreachable|timed out|No matching distribution", re.I)


def declared_lowest(package: str) -> str:
    """The lower bound pyproject.toml declares for ``package`` (dependencies or any extra), as X.Y.Z."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    specs = list(project["dependencies"]) + [s for extra in project["optional-dependencies"].values() for s in extra]
    bounds = {m.group(1) for s in specs if (m := re.match(rf"{re.escape(package)}\s*>=\s*([\d.]+)", s))}
    assert len(bounds) == 1, f"pyproject.toml declares {sorted(bounds)} as {package}'s lower bound"
    parts = bounds.pop().split(".")
    return ".".join((parts + ["0", "0"])[:3])


def _lowest_folder(package: str, version: str) -> Path:
    """``package==version`` installed (no dependencies) into the cache; skips when PyPI is unreachable."""
    folder = CACHE / f"{package}-{version}"
    if folder.is_dir():
        return folder
    CACHE.mkdir(parents=True, exist_ok=True)
    part = CACHE / f"{package}-{version}.part-{os.getpid()}"  # renamed when complete: a broken install is never used
    done = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--disable-pip-version-check",
                           "--target", str(part), f"{package}=={version}"],
                          capture_output=True, text=True, timeout=600)
    if done.returncode != 0:
        shutil.rmtree(part, ignore_errors=True)
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        if _OFFLINE.search(done.stderr):
            pytest.skip(f"the package registry is unreachable: cannot fetch {package}=={version} ({last})")
        raise AssertionError(f"pip could not install {package}=={version}: {done.stderr[-2000:]}")
    try:
        part.rename(folder)
    except OSError:  # another run finished first: use its folder
        shutil.rmtree(part, ignore_errors=True)
    return folder


def run_at_lowest(package: str, module: str, test_file: str | Path, deselect: str = "") -> None:
    """Run ``test_file`` with the lowest supported ``package`` first on ``sys.path``; fail on any failure.

    Parameters
    ----------
    package : the distribution name in pyproject.toml ("transformers", "threadpoolctl", "pyqtgraph").
    module : the name it is imported as (checked to come from the cache at that version).
    test_file : the tests to run there (the file calling this, usually).
    deselect : a ``-k`` expression of tests to leave out besides this one (e.g. ones that need fixtures).
    """
    version = declared_lowest(package)
    installed = metadata.version(package)
    if installed == version:
        pytest.skip(f"the installed {package} is {version}, the lowest supported: this file's other tests ran at it")
    folder = _lowest_folder(package, version)
    keep = f"not {LOWEST_TEST}" + (f" and not ({deselect})" if deselect else "")
    # checked without importing it (imported before pytest starts, its imports would escape assertion rewriting)
    prelude = (f"import importlib.metadata, importlib.util, sys\n"
               f"got = importlib.metadata.version({package!r}), importlib.util.find_spec({module!r}).origin\n"
               f"assert got[0] == {version!r} and got[1].startswith({str(folder)!r}), got\n"
               f"import pytest\n"
               f"sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider', '-k', {keep!r}, {str(test_file)!r}]))\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)]), "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([sys.executable, "-c", prelude], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=900)
    tail = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, f"{package} {version} (the lowest supported):\n{tail}"
    assert re.search(r"\d+ passed", done.stdout), tail  # a run that collected nothing is no check
