"""``attnviz models``: the bundled models with their task, shape and held-out metrics.

Reads each model's ``config.json`` only (no torch): quick, and what it prints is what training
recorded. ``attnviz eval --model NAME`` re-measures the metrics on fresh held-out data.
"""

from __future__ import annotations

import json
import sys

__all__ = ["add_parser", "run", "describe_bundled", "format_metrics"]


def add_parser(sub) -> None:
    p = sub.add_parser(
        "models", help="list the bundled models with their task and held-out metrics",
        description="List the bundled models: task, architecture and the held-out metrics recorded when "
                    "they were trained. `attnviz eval --model NAME` measures them again on fresh data.",
        epilog="examples:\n  attnviz models\n  attnviz models --json")
    p.add_argument("--json", action="store_true", help="print a JSON list instead of a table")
    p.set_defaults(run=run)


def describe_bundled() -> list[dict]:
    """One entry per bundled model: name, task, kind, layers, heads, d_model, metrics, folder.

    A model whose ``config.json`` cannot be read is listed with an ``error`` instead of failing the list.
    """
    from attnviz.errors import ModelLoadError
    from attnviz.io import assets_dir, bundled_models
    from attnviz.models.validate import read_json_bounded

    out = []
    for name in bundled_models():
        folder = assets_dir() / "models" / name
        entry = {"name": name, "folder": str(folder)}
        try:
            doc = read_json_bounded(folder / "config.json")  # bounded size and nesting, like every config read
        except ModelLoadError as exc:
            entry["error"] = str(exc)
            out.append(entry)
            continue
        if not isinstance(doc, dict):
            entry["error"] = "config.json is not an object"
            out.append(entry)
            continue
        model = doc.get("model", {})
        entry.update(task=doc.get("task"), kind=model.get("kind"), layers=model.get("n_layers"),
                     dec_layers=model.get("n_dec_layers") or 0, heads=model.get("n_heads"),
                     d_model=model.get("d_model"), metrics=doc.get("metrics", {}))
        out.append(entry)
    return out


def format_metrics(metrics: dict) -> str:
    """The recorded held-out metrics in words, as the app shows them (``--json`` keeps the keys)."""
    from attnviz.tasks.metric_names import format_metrics as in_words

    return in_words(metrics) or "—"


def run(args) -> int:
    from attnviz.errors import AttnvizError
    from attnviz.io import assets_dir

    entries = describe_bundled()
    if args.json:
        print(json.dumps(entries, indent=1))
        return 0
    if not entries:
        raise AttnvizError(f"no bundled models found in {assets_dir() / 'models'}")
    rows = [("model", "task", "kind", "layers × heads", "held-out metrics (recorded at training)")]
    for e in entries:
        if "error" in e:
            rows.append((e["name"], "?", "?", "?", e["error"]))
            continue
        layers = f"{e['layers']}+{e['dec_layers']}" if e["dec_layers"] else str(e["layers"])
        rows.append((e["name"], str(e["task"]), str(e["kind"]), f"{layers} × {e['heads']}",
                     format_metrics(e["metrics"])))
    widths = [max(len(r[i]) for r in rows) for i in range(4)]
    for r in rows:
        sys.stdout.write("  ".join(c.ljust(w) for c, w in zip(r[:4], widths)) + "  " + r[4] + "\n")
    sys.stdout.write(f"({len(entries)} models in {assets_dir() / 'models'})\n")
    return 0
