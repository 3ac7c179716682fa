"""What the model panel lists about each model directory, read without building the model.

Runs in a worker (``attnviz.models`` pulls in torch); returns plain dicts the panel displays.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["describe_model_dir", "scan_bundled", "format_architecture", "format_metrics", "format_count"]


def format_count(n: int | None) -> str:
    """12345 → "12.3 k" (parameter counts for a table column)."""
    if n is None:
        return "?"
    for unit, size in (("M", 1e6), ("k", 1e3)):
        if n >= size:
            return f"{n / size:.3g} {unit}"
    return str(n)


def format_architecture(cfg: dict) -> str:
    """One line: kind, layers × heads, width and anything unusual (GQA, no positions, patches)."""
    kind = cfg.get("kind", "?")
    layers = cfg.get("n_layers", "?")
    if kind == "encoder-decoder":
        layers = f"{layers}+{cfg.get('n_dec_layers') or layers}"
    text = f"{kind} · {layers} layers × {cfg.get('n_heads', '?')} heads · d={cfg.get('d_model', '?')}"
    kv = cfg.get("n_kv_heads") or 0
    if kv and kv != cfg.get("n_heads"):
        text += " · MQA" if kv == 1 else f" · GQA {kv} kv"
    if cfg.get("pos") == "none":
        text += " · no positions"
    if kind == "vit":
        text += f" · {cfg.get('image_size')}px / {cfg.get('patch_size')}px patches"
    return text


def format_metrics(metrics: dict | None) -> str:
    """Held-out metrics for display, in words (:mod:`attnviz.tasks.metric_names`); "—" when there are none."""
    from attnviz.tasks.metric_names import format_metrics as in_words

    return in_words(metrics) or "—"


def _param_count(weights: Path) -> int | None:
    """Sum of tensor sizes from the safetensors header (no weights are read)."""
    if not weights.is_file():
        return None
    from safetensors import SafetensorError, safe_open

    try:
        total = 0
        with safe_open(str(weights), framework="numpy") as fh:
            for key in fh.keys():
                n = 1
                for dim in fh.get_slice(key).get_shape():
                    n *= int(dim)
                total += n
        return total
    except (SafetensorError, OSError):
        return None


def describe_model_dir(path: str | Path, name: str | None = None) -> dict:
    """Name, task, architecture, parameter count and metrics of one model directory.

    Unreadable directories are described (``error`` set) rather than raised: one broken model
    must not hide the others.
    """
    path = Path(path)
    entry = {"name": name or path.name, "path": str(path), "task": "", "architecture": "", "params": None,
             "metrics": "—", "error": "", "description": ""}
    from attnviz.io.jsonfile import JsonLimitError, read_json_file

    try:  # bounded in size and nesting: a recent folder may be anyone's
        doc = read_json_file(path / "config.json", 64 * 2**20, what="config file")
        cfg = doc["model"]
    except JsonLimitError as exc:
        entry["error"] = str(exc)
        return entry
    except (KeyError, TypeError) as exc:
        entry["error"] = f"cannot read {path / 'config.json'}: {exc}"
        return entry
    entry["task"] = str(doc.get("task") or "")
    entry["architecture"] = format_architecture(cfg)
    entry["params"] = _param_count(path / "model.safetensors")
    entry["metrics"] = format_metrics(doc.get("metrics"))
    entry["description"] = str(doc.get("description") or "")
    entry["trained_steps"] = doc.get("trained_steps")
    return entry


def scan_bundled() -> list[dict]:
    """Describe every bundled model (``attnviz.models.checkpoint.bundled_models``)."""
    from attnviz.io import assets_dir, bundled_models

    root = assets_dir() / "models"
    return [describe_model_dir(root / name, name) for name in bundled_models()]
