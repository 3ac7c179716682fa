"""What every built-in task provides: data, a model config, a metric and probe inputs."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn.functional as F

from attnviz.models.config import ModelConfig

__all__ = ["Batch", "Task", "TextInput", "IGNORE"]

IGNORE = -100  # target value that the loss and the accuracy skip (padding, unmasked MLM positions)


@dataclass
class Batch:
    """Keyword arguments of ``model.forward`` and the targets, as CPU tensors."""

    inputs: dict[str, torch.Tensor]
    targets: torch.Tensor
    n_items: int  # examples (sequences or images) in the batch: throughput is counted in these

    def to(self, device) -> "Batch":
        return Batch({k: v.to(device) for k, v in self.inputs.items()}, self.targets.to(device), self.n_items)


@dataclass
class TextInput:
    """A task's reading of typed text: what the model adapter turns into tensors (no torch here).

    ``ids``/``tokens`` are the model's positions; for a ``seq2seq`` task they are the encoder's
    (source) side, which the adapter translates greedily before tracing the decoder over its own
    output. ``extras`` are further integer inputs of the forward (e.g. ``pool_index`` of a classifier
    that reads its answer at one token), one list per input; ``meta`` goes into the trace.
    """

    tokens: list[str]
    ids: list[int]
    extras: dict[str, list[int]] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    seq2seq: bool = False


class Task:
    """Base class. Subclasses are deterministic given ``seed`` and keep train and held-out data apart.

    Override: ``model_config``, ``sample_batch``, ``evaluate``, ``probe_inputs``, ``example_input``;
    optionally ``read_text`` and ``describe_output`` (the task's input rules, read by the runtime's
    model adapter) and ``loss``.
    """

    name = "task"
    kind = "encoder"  # the model kind this task trains
    description = ""
    steps = 1000  # default training steps
    batch_size = 64
    lr = 3e-3
    warmup = 50
    weight_decay = 0.01
    decay_by_name: dict[str, float] = {}  # parameter name → its own weight decay (training.schedule.make_optimizer)
    tokenizer = None
    tgt_tokenizer = None
    labels: list[str] | None = None
    targets: dict = {}  # metric -> (">=" | "<=", value) a bundled model must meet (make_assets, tests)
    n_train: int | None = None  # distinct training examples, for Progress.epoch (None: fraction of steps)

    def __init__(self, seed: int = 0):
        self.seed = seed

    def model_config(self, **overrides) -> ModelConfig:
        raise NotImplementedError

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        """A random batch from the "train" or "test" distribution (disjoint by construction)."""
        raise NotImplementedError

    def loss(self, logits: torch.Tensor, batch: Batch):
        """Cross-entropy over every non-ignored target; returns (loss, n_correct, n_counted)."""
        flat = logits.reshape(-1, logits.shape[-1])
        tgt = batch.targets.reshape(-1)
        loss = F.cross_entropy(flat, tgt, ignore_index=IGNORE)
        with torch.no_grad():
            keep = tgt != IGNORE
            correct = int((flat.argmax(-1)[keep] == tgt[keep]).sum())
        return loss, correct, int(keep.sum())

    def evaluate(self, loaded, seed: int = 12345) -> dict:
        """Held-out metrics on freshly generated data (the numbers stored in the checkpoint)."""
        raise NotImplementedError

    def prepare_model(self, model) -> None:
        """Adjust a freshly built model in place before its first training step (an initialisation the
        task needs, e.g. shapes starts its patch filters at zero). The default leaves the model as built."""

    def probe_inputs(self) -> list:
        """Fixed inputs whose attention is snapshotted during training (texts or images)."""
        raise NotImplementedError

    def example_input(self):
        """What the app shows first for this task (text or an image array)."""
        return self.probe_inputs()[0]

    def examples(self) -> list:
        """Every example the app offers for this task, the one it opens on first (texts or images).

        The public accessor the app's example picker reads; a task extends it by overriding this or
        ``probe_inputs`` / ``example_input``."""
        first = self.example_input()
        rest = [p for p in self.probe_inputs() if not (isinstance(p, str) and p == first)]
        return [first, *rest] if isinstance(first, str) else rest

    def read_text(self, tokenizer, text: str, max_len: int, truncate: bool = False) -> TextInput | None:
        """How typed text becomes model input for this task; None for the tokenizer's plain reading.

        ``tokenizer`` is the loaded model's (None for a model saved without one), ``max_len`` its
        positions. Raise InputError with a sentence for the user for text the task cannot read.
        """
        return None

    def focus(self, info: dict) -> dict | None:
        """The head the lecture shows for this model ({"layer", "head"}), read from its checkpoint ``info``."""
        return None

    def describe_output(self, source: TextInput, meta: dict) -> None:
        """Add what the task knows about a decoded output (``meta["output_text"]``) to ``meta``.

        Called by the adapter after a seq2seq input was translated, e.g. the expected output.
        """

    def info(self) -> dict:
        """Extra fields stored in the checkpoint's config.json (labels, preprocessing...)."""
        return {"labels": self.labels} if self.labels else {}
