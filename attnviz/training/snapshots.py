"""Attention snapshots taken during training, for the app's "how attention formed" timeline.

``snapshots.npz`` sits next to a checkpoint's ``config.json``. It holds float16 attention
probabilities under ``s{k}.p{j}.L{i}`` (H, T, T) — snapshot k, probe input j, layer i; cross- and
encoder-attention of an encoder–decoder use ``s{k}.p{j}.L{i}.cross`` and ``s{k}.p{j}.enc.L{i}`` — and
``index``, a JSON string: ``{"steps": [...], "probes": [{"input", "tokens", "src_tokens"}], "parts": [...],
"tokens": [[tokens of probe j] for each snapshot k]}``. ``probes`` holds the latest snapshot's tokens; an
encoder–decoder's greedy output (its decoder tokens) can change during training, hence ``tokens`` per snapshot.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from attnviz.capture.trace import layer_prefix

from attnviz.io import write_atomic
from attnviz.errors import InputError

__all__ = ["Snapshots", "SnapshotRecorder", "load_snapshots", "snapshot_steps", "SNAPSHOT_FILE"]

SNAPSHOT_FILE = "snapshots.npz"


def snapshot_steps(total: int, n: int) -> list[int]:
    """About ``n`` evenly spaced steps in [0, total], always including 0 and ``total`` when n ≥ 2."""
    if n <= 0 or total < 0:
        return []
    if n == 1:
        return [total]
    return sorted({int(round(s)) for s in np.linspace(0, total, n)})


def _key(k: int, j: int, layer: int, part: str) -> str:
    # layer_prefix gives "L0." / "L0.cross." / "enc.L0."; drop the trailing dot
    return f"s{k}.p{j}.{layer_prefix(layer, part)[:-1]}"


@dataclass
class Snapshots:
    """Attention of the probe inputs at several training steps (see the module docstring)."""

    steps: list[int]
    probes: list[dict]
    parts: list[str]
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    step_tokens: list[list[list[str]]] = field(default_factory=list)  # [k][j] -> tokens

    def tokens(self, k: int, probe: int) -> list[str]:
        """Query tokens of probe ``probe`` at snapshot ``k``."""
        if self.step_tokens:
            return list(self.step_tokens[k][probe])
        return list(self.probes[probe]["tokens"])

    def probs(self, k: int, probe: int, layer: int, part: str = "self") -> np.ndarray:
        """Attention probabilities (H, Tq, Tk) as float32 for snapshot ``k``, probe ``probe``."""
        key = _key(k, probe, layer, part)
        if key not in self.arrays:
            raise KeyError(f"no snapshot array {key!r}")
        return self.arrays[key].astype(np.float32)

    def n_layers(self, part: str = "self") -> int:
        n = 0
        while _key(0, 0, n, part) in self.arrays:
            n += 1
        return n

    def to_payload(self) -> dict[str, np.ndarray]:
        index = {"steps": self.steps, "probes": self.probes, "parts": self.parts, "tokens": self.step_tokens}
        return {**self.arrays, "index": np.array(json.dumps(index))}

    def save(self, directory: str | os.PathLike) -> Path:
        """Write ``snapshots.npz`` into ``directory`` atomically."""
        path = Path(directory) / SNAPSHOT_FILE
        payload = self.to_payload()

        def write(tmp: str) -> None:
            with open(tmp, "wb") as fh:
                np.savez_compressed(fh, **payload)

        write_atomic(path, write)
        return path


def load_snapshots(model_dir: str | os.PathLike) -> Snapshots | None:
    """Read a model directory's ``snapshots.npz``; None when the model has none.

    Raises
    ------
    InputError
        When the file exists but cannot be read.
    """
    path = Path(model_dir) / SNAPSHOT_FILE
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        from attnviz.io.jsonfile import parse_json_text

        # a shared model folder's file: the one bounded parser (no RecursionError, valid text)
        index = parse_json_text(str(arrays.pop("index")), f"the index of {path}", 8, error=InputError)
        return Snapshots(list(index["steps"]), list(index["probes"]), list(index["parts"]), arrays,
                         list(index.get("tokens", [])))
    except (OSError, ValueError, KeyError, TypeError, AttributeError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read training snapshots {path}: {exc}") from None


class SnapshotRecorder:
    """Captures the attention of a task's probe inputs on a model that is being trained.

    Parameters
    ----------
    loaded : LoadedModel
        Wraps the in-training model (its ``extra["task_obj"]`` is the task, so the task's own
        ``prepare_text`` decides how probe texts become inputs).
    probes : list
        Texts or images from ``task.probe_inputs()``.
    """

    def __init__(self, loaded, probes: list):
        self.loaded = loaded
        self.probes = list(probes)
        self.snapshots = Snapshots(steps=[], probes=[], parts=[])

    def _prepare(self, probe):
        from attnviz.runtime import prepare_image, prepare_text

        if isinstance(probe, str):
            return prepare_text(self.loaded, probe, truncate=True)
        return prepare_image(self.loaded, probe)

    def take(self, step: int) -> None:
        """Record the probes' attention at ``step`` (the model's train/eval mode is restored)."""
        from attnviz.capture.record import capture

        snap = self.snapshots
        k = len(snap.steps)
        probe_info = []
        model = self.loaded.model
        was_training = model.training
        model.eval()  # an encoder–decoder probe is decoded first: no dropout there either
        try:
            traces = []
            for probe in self.probes:
                prep = self._prepare(probe)
                traces.append((prep, capture(model, prep.inputs, prep.tokens)))
        finally:
            model.train(was_training)
        for j, (probe, (prep, trace)) in enumerate(zip(self.probes, traces)):
            parts = ["self"] + (["cross"] if trace.has_cross else []) + (["enc"] if trace.n_enc_layers else [])
            for part in parts:
                n = trace.layers_in(part)
                for i in range(n):
                    snap.arrays[_key(k, j, i, part)] = trace.probs(i, part).astype(np.float16)
            snap.parts = parts
            label = probe if isinstance(probe, str) else f"image {j}"
            probe_info.append({"input": label, "tokens": list(prep.tokens), "src_tokens": list(prep.src_tokens)})
        # tokens of an encoder–decoder probe can change as its greedy output changes: keep the latest
        snap.probes = probe_info
        snap.step_tokens.append([p["tokens"] for p in probe_info])
        snap.steps.append(int(step))

    def save(self, directory) -> Path | None:
        """Write the snapshots taken so far next to the checkpoint (nothing when none were taken)."""
        if not self.snapshots.steps:
            return None
        return self.snapshots.save(directory)
