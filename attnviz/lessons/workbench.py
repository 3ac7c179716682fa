"""What every lesson claim and scene figure needs: loaded models, a scene's trace and selection, held-out data.

:class:`Workbench` loads each model once (keyed by its folder, so ``coref`` and the bundled folder's
path share one copy) and traces scenes with their what-if switches. :func:`held_out_records` runs many
held-out inputs through a model in a few batched explicit forward passes (inputs of one length form
one batch, so no padding enters the numbers) instead of one full trace per input. Qt-free.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

from attnviz.errors import InputError

__all__ = ["Workbench", "scene_selection", "fresh_texts", "trace_text", "text_batches", "record_inputs",
           "held_out_records", "HELD_OUT_SEED"]

HELD_OUT_SEED = 20261123  # fresh held-out data: neither the training seed nor the stored metrics' seeds


class Workbench:
    """Loads each model once and traces scenes (with their what-if switches) for claims and exports.

    Not re-entrant (a torch module is not): one thread uses a Workbench at a time.
    """

    def __init__(self):
        self._models: dict[str, object] = {}
        self._metrics: dict[tuple, dict] = {}

    @staticmethod
    def _key(name: str) -> str:
        from attnviz.errors import AttnvizError
        from attnviz.models.checkpoint import resolve_model_path

        try:
            return str(Path(resolve_model_path(name)).resolve())
        except AttnvizError:
            return str(name)  # load_model raises the clear error below

    def model(self, name: str):
        """The loaded model ``name`` (a bundled name or a folder), loaded on first use."""
        from attnviz.runtime import load_model

        key = self._key(name)
        if key not in self._models:
            self._models[key] = load_model(name, device="cpu")
        return self._models[key]

    def task_metrics(self, name: str, seed: int) -> dict:
        """``task.evaluate(model, seed)`` of model ``name`` (computed once: two scenes of one vision model
        read the same held-out metrics)."""
        from attnviz.runtime import task_of

        key = (self._key(name), seed)
        if key not in self._metrics:
            loaded = self.model(name)
            task = task_of(loaded)
            if task is None:
                raise InputError(f"{loaded.name} names no built-in task: no held-out data to check the claim on")
            self._metrics[key] = task.evaluate(loaded, seed=seed)
        return self._metrics[key]

    def trace(self, scene, grad: bool = False):
        """The scene's trace: its input through its model with its what-if switches."""
        from attnviz.runtime import run_trace
        from attnviz.whatif import applied

        loaded = self.model(scene.model)
        switches = scene.whatif_switches()
        image = scene.image_source()
        if switches.is_default:
            return run_trace(loaded, text=scene.text, image=image, grad=grad, target_text=scene.target)
        with applied(loaded.model, switches):
            trace = run_trace(loaded, text=scene.text, image=image, grad=grad, precision="float32",
                              target_text=scene.target)
        trace.meta["whatif"] = switches.describe()
        return trace


def scene_selection(scene, trace):
    """The scene's SelectionState; unset layer/head/query fall back to the one default rule
    (:func:`attnviz.analysis.walkthrough_default.default_selection`): the walkthrough's for the ``steps``,
    ``matrix-form`` and ``matrix-z`` views, the attention views' (the model's named ``focus``, coref: the
    head chosen on validation data, at "it") for every other view — as the app opens its tabs."""
    from attnviz.analysis.walkthrough_default import WALKTHROUGH_VIEWS, default_selection
    from attnviz.selection import SelectionState

    page = "walkthrough" if scene.view in WALKTHROUGH_VIEWS else "attention"
    default = default_selection(trace, page, scene.part)
    layer = scene.layer if scene.layer is not None else default["layer"]
    head = scene.head if scene.head is not None else default["head"]
    query = scene.query if scene.query is not None else default["query"]
    state = SelectionState(layer=layer, head=head, query=None if query is None else int(query), part=scene.part)
    trace.check_selection(state.part, state.layer, state.head, state.query)
    return state


# -- held-out inputs -------------------------------------------------------------------------------
def fresh_texts(loaded, n: int, seed: int = HELD_OUT_SEED) -> list[str]:
    """``n`` held-out inputs of the model's task as text (the task's "test" split, a fresh seed)."""
    from attnviz.runtime import task_of

    task = task_of(loaded)
    rng = np.random.default_rng(seed)
    if task is None:
        raise InputError(f"{loaded.name} names no built-in task: no held-out data to check the claim on")
    if task.name in ("coref", "order-sentiment", "order-sentiment-nopos"):
        return [t for t, _ in task.sentences("test", n, rng)]
    if task.name == "translate":
        return [" ".join(src) for src, _, _ in task.sample_sentences("test", n, rng)]
    if task.name == "induction":
        return [_induction_text(rng) for _ in range(n)]
    raise InputError(f"no held-out text generator for task {task.name!r}")


def _induction_text(rng) -> str:
    from attnviz.tasks.induction import ALPHABET

    k = int(rng.integers(3, 7))
    prefix = "".join(rng.choice(list(ALPHABET), size=int(rng.integers(0, 4))))
    word = "".join(rng.choice(list(ALPHABET), size=k, replace=False))
    return prefix + word + word


def trace_text(loaded, text):
    """One full trace of ``text`` (no rollout): for the scene's own input and single comparisons."""
    from attnviz.runtime import run_trace

    return run_trace(loaded, text=text, rollout=False)


def text_batches(loaded, texts, max_batch: int = 256) -> Iterator[tuple[list[int], dict]]:
    """``texts`` prepared by the model's rules and stacked into batches of one token length (so no
    padding enters any number): yields ``(indices into texts, model inputs)``."""
    import torch

    from attnviz.runtime.pipeline import prepare_text

    buckets: dict[tuple, list[tuple[int, dict]]] = {}
    for i, text in enumerate(texts):
        inputs = prepare_text(loaded, text).inputs
        shape = tuple((k, tuple(v.shape)) for k, v in sorted(inputs.items()) if isinstance(v, torch.Tensor))
        buckets.setdefault(shape, []).append((i, inputs))
    for members in buckets.values():
        for start in range(0, len(members), max_batch):
            chunk = members[start:start + max_batch]
            first = chunk[0][1]
            yield [i for i, _ in chunk], {k: torch.cat([m[k] for _, m in chunk]) if isinstance(v, torch.Tensor) else v
                                          for k, v in first.items()}


def record_inputs(loaded, inputs: dict, keep=("x", "mask", "probs", "z", "out"), part: str = "self") -> dict:
    """One batched explicit forward pass: ``records[name]`` is a list over layers of float64 arrays with a
    leading batch axis (``x`` (B, T, D), ``probs`` (B, H, T, T), ``mask`` (1, 1, T, T) …)."""
    from attnviz.capture.batch import record_batch

    _, arrays, _ = record_batch(loaded.model, inputs, keep)
    return {name: [np.asarray(a, np.float64) for a in arrays[part][name]] for name in keep}


def held_out_records(loaded, texts, keep=("x", "mask", "probs", "z", "out"), part: str = "self",
                     max_batch: int = 256) -> Iterator[tuple[list[int], dict]]:
    """The ``part`` attention records of ``texts`` in a few batched explicit forward passes.

    Yields ``(indices, records)``: the positions in ``texts`` of one batch (all of one token length) and
    its records (see :func:`record_inputs`).
    """
    for idx, inputs in text_batches(loaded, texts, max_batch):
        yield idx, record_inputs(loaded, inputs, keep, part)
