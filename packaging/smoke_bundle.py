"""Smoke test of a built PyInstaller bundle: every bundled model runs in it, headless.

    python packaging/smoke_bundle.py dist/attnviz        (or: make bundle-smoke)

For each bundled model: ``attnviz eval --model NAME`` (loads it through its task module, runs it on
fresh held-out data). Then a trace of a text and of a vision model, a figure export (Qt, offscreen),
``attnviz models``, and the app itself under ``QT_QPA_PLATFORM=offscreen`` for a while (it must still
be running, with no error in its log). Run outside the checkout, with no ATTNVIZ_ASSETS and no
PYTHONPATH, so nothing comes from the source tree. Prints one line per check; exits 1 if any failed.
Not part of `make test`: building the bundle takes minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COREF_TEXT = "The animal didn't cross the street because it was too tired"
APP_SECONDS = 25  # long enough to load torch and the default model on a busy two-core machine


def _env(work: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATTNVIZ_") and k != "PYTHONPATH"}
    env.update(QT_QPA_PLATFORM="offscreen", ATTNVIZ_SETTINGS=str(work / "settings.ini"),
               ATTNVIZ_DATA_DIR=str(work / "data"), ATTNVIZ_PROGRESS="0")
    return env


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("bundle", nargs="?", default="dist/attnviz", help="the bundle folder (default dist/attnviz)")
    args = parser.parse_args(argv)
    bundle = Path(args.bundle).resolve()
    exe = bundle / ("attnviz.exe" if sys.platform == "win32" else "attnviz")
    if not exe.is_file():
        print(f"no bundle at {bundle} (run `make bundle` first)", file=sys.stderr)
        return 2
    failures = 0
    with tempfile.TemporaryDirectory(prefix="attnviz-smoke-") as tmp:
        work = Path(tmp)
        env = _env(work)

        def check(label: str, cmd: list, timeout: float = 600) -> subprocess.CompletedProcess | None:
            nonlocal failures
            t0 = time.monotonic()
            res = subprocess.run([str(exe), *map(str, cmd)], cwd=work, env=env, capture_output=True, text=True,
                                 timeout=timeout)
            took = time.monotonic() - t0
            if res.returncode != 0:
                failures += 1
                tail = (res.stderr.strip() or res.stdout.strip()).splitlines()[-1:] or ["(no output)"]
                print(f"FAIL {label} ({took:.1f} s, exit {res.returncode}): {tail[0]}", flush=True)
                return None
            print(f"ok   {label} ({took:.1f} s)", flush=True)
            return res

        listed = check("models", ["models", "--json"])
        models = [m for m in json.loads(listed.stdout)] if listed else []
        if not models:
            failures += 1
            print("FAIL no bundled models in the bundle")
        for m in models:
            res = check(f"eval {m['name']}", ["eval", "--model", m["name"]])
            if res is not None:
                metrics = json.loads(res.stdout)["metrics"]
                shown = ", ".join(f"{k} {v:.3f}" for k, v in metrics.items() if isinstance(v, float))
                print(f"       {shown}")
        check("trace coref (text)", ["trace", "--model", "coref", "--text", COREF_TEXT, "-o", "coref.npz"])
        samples = bundle.rglob("shapes-star.png")
        star = next(samples, None)
        if star is None:
            failures += 1
            print("FAIL the shapes sample image is not in the bundle")
        else:
            check("trace shapes (image)", ["trace", "--model", "shapes", "--image", star, "-o", "shapes.npz"])
            check("export rollout (Qt offscreen)", ["export", "--model", "shapes", "--image", star, "--view",
                                                     "rollout", "-o", "rollout.png"])

        # the app: still running after a while, nothing logged at ERROR
        t0 = time.monotonic()
        proc = subprocess.Popen([str(exe)], cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)
        try:
            proc.wait(timeout=APP_SECONDS)
        except subprocess.TimeoutExpired:
            pass
        alive = proc.poll() is None
        if alive:
            proc.terminate()
        out, err = proc.communicate(timeout=30)
        log = work / "data" / "attnviz.log"
        log_text = log.read_text(encoding="utf-8") if log.is_file() else ""
        bad = [line for line in (err + log_text).splitlines() if "ERROR" in line or "Traceback" in line]
        if alive and not bad:
            print(f"ok   app ran {time.monotonic() - t0:.0f} s headless without an error")
        else:
            failures += 1
            print(f"FAIL app: {'exited with ' + str(proc.returncode) if not alive else 'errors'}: "
                  f"{(bad or err.strip().splitlines() or ['(no output)'])[-1]}")
    size = sum(f.stat().st_size for f in bundle.rglob("*") if f.is_file() and not f.is_symlink())
    print(f"bundle size: {size / 2**20:.0f} MiB ({bundle})")
    print(f"{'all passed' if not failures else f'{failures} failed'}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
