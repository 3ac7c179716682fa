"""A tiny task that trains in well under a second, for testing the loop itself."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from attnviz.models.config import ModelConfig
from attnviz.tasks.base import Batch, Task
from attnviz.text.tokenizer import Tokenizer

WORDS = ["red", "green", "blue", "cat", "dog", "fox", "one", "two"]


class FirstWordTask(Task):
    """Label = does the first word name a colour? The classifier reads [CLS], so it must attend to word 1."""

    name = "first-word"
    kind = "encoder"
    steps = 60
    batch_size = 32
    lr = 1e-2
    warmup = 5
    labels = ["other", "colour"]

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.tokenizer = Tokenizer.build("word", [" ".join(WORDS)], prefix=["[CLS]"])
        self.first_word = self.tokenizer.id_of(WORDS[0])

    def model_config(self, **overrides) -> ModelConfig:
        cfg = dict(kind="encoder", vocab_size=len(self.tokenizer.vocab), n_layers=1, n_heads=2, d_model=16,
                   max_len=8, n_classes=2)
        return ModelConfig(**{**cfg, **overrides})

    def sample_batch(self, split, batch_size, rng: np.random.Generator) -> Batch:
        words = rng.integers(0, len(WORDS), size=(batch_size, 5))
        ids = np.concatenate([np.full((batch_size, 1), self.tokenizer.id_of("[CLS]")), words + self.first_word], 1)
        targets = (words[:, 0] < 3).astype(np.int64)
        return Batch({"ids": torch.from_numpy(ids)}, torch.from_numpy(targets), batch_size)

    def evaluate(self, loaded, seed: int = 12345) -> dict:
        batch = self.sample_batch("test", 256, np.random.default_rng(seed)).to(loaded.device)
        with torch.no_grad():
            pred = loaded.model(**batch.inputs).argmax(-1)
        return {"accuracy": float((pred == batch.targets).float().mean())}

    def probe_inputs(self) -> list:
        return ["red cat dog", "two fox blue one"]


class NanAfterTask(FirstWordTask):
    """Its loss turns NaN from the ``bad_from``-th call on (a diverging run)."""

    bad_from = 25

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self.calls = 0

    def loss(self, logits, batch):
        self.calls += 1
        loss, correct, n = super().loss(logits, batch)
        if self.calls >= self.bad_from:
            loss = loss * float("nan")
        return loss, correct, n


@pytest.fixture
def tiny_task():
    return FirstWordTask()


@pytest.fixture
def nan_task():
    return NanAfterTask()
