"""Path length, RNN vs attention: the same long-range task learned by both, measured, shipped as data.

``python -m attnviz.training.path_length_study [--out FILE] [--seeds 0 1 2]`` re-creates
``assets/data/path_length.json`` (a few minutes on one CPU core).

Task (``recall-first``): a sequence of ``n`` random letters (n from 2 to :data:`MAX_LEN`); the answer,
read at the last position, is the *first* letter, so the information has to travel ``n − 1``
positions. Two models learn it from the same batches:

* an Elman RNN, the lecture's h_t = tanh(W_ih x_t + W_hh h_{t−1} + b) (torch's ``nn.RNN``: two bias
  vectors, the same function), read out from its last hidden state: a token d positions back
  reaches the answer through d recurrent steps;
* a two-layer transformer encoder of this package (``attnviz.models``), read out at the last
  position: any token reaches it in one attention step per layer.

Measured on held-out sequences (a seed never used for training): accuracy by distance, and the
gradient of the answer's logit with respect to each input token's embedding, ‖∂ logit / ∂ x_t‖,
against the distance from the read-out position, on sequences of the longest length: after
training, and at initialisation (the same seed before its first step). Qt-free.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import torch
from torch import nn

from attnviz.analysis.path_length import STUDY_FILE, study_path

__all__ = ["RNNReader", "build_models", "sample", "train_one", "measure", "run_study", "main", "STUDY_FILE",
           "MAX_LEN", "study_path"]

VOCAB = 8  # letters 0..7; position 0 of every sequence is a letter too
MAX_LEN = 32
D_MODEL = 64
STEPS = 400
BATCH = 64
LR = 3e-3
SEEDS = (0, 1, 2)
EVAL_SEED = 99_999  # held-out sequences: never a training seed
N_EVAL = 512
FORMAT = "attnviz-path-length"



class RNNReader(nn.Module):
    """Embedding → one tanh RNN layer → a linear read-out of the last real position's hidden state."""

    def __init__(self, vocab: int = VOCAB, d: int = D_MODEL):
        super().__init__()
        self.embed = nn.Embedding(vocab + 1, d)  # + padding id
        self.rnn = nn.RNN(d, d, nonlinearity="tanh", batch_first=True)
        self.head = nn.Linear(d, vocab)

    def forward_embedded(self, x: torch.Tensor, last: torch.Tensor) -> torch.Tensor:
        h, _ = self.rnn(x)  # (B, T, D)
        return self.head(h[torch.arange(x.shape[0]), last])  # (B, V)


class AttentionReader(nn.Module):
    """This package's encoder, fed embeddings directly so both models are differentiated the same way."""

    def __init__(self, vocab: int = VOCAB, d: int = D_MODEL, **overrides):
        super().__init__()
        from attnviz.models.config import ModelConfig
        from attnviz.models.registry import build_model

        cfg = ModelConfig(**{**dict(kind="encoder", vocab_size=vocab + 1, n_layers=2, n_heads=2, d_model=d,
                                    max_len=MAX_LEN, head="classify", pool="index", n_classes=vocab, mlp_ratio=2.0),
                             **overrides})
        self.inner = build_model(cfg)
        self.embed = self.inner.embed.tok

    def forward_embedded(self, x: torch.Tensor, last: torch.Tensor, key_pad=None) -> torch.Tensor:
        pos = self.inner.embed.pos(x.shape[1])  # (T, D) learned positions
        h = self.inner.stack(x + pos, key_pad=key_pad)  # (B, T, D)
        return self.inner.head(h[torch.arange(x.shape[0]), last])  # (B, V)


def build_models(seed: int) -> dict[str, nn.Module]:
    torch.manual_seed(seed)
    rnn = RNNReader()
    torch.manual_seed(seed)
    return {"rnn": rnn, "attention": AttentionReader()}


def sample(rng: np.random.Generator, n: int, length: int | None = None):
    """(ids (B, MAX_LEN) padded with VOCAB, last position (B,), answer (B,))."""
    lens = np.full(n, length) if length else rng.integers(2, MAX_LEN + 1, size=n)
    ids = rng.integers(VOCAB, size=(n, MAX_LEN))
    ids[np.arange(MAX_LEN)[None, :] >= lens[:, None]] = VOCAB
    return torch.from_numpy(ids), torch.from_numpy(lens - 1), torch.from_numpy(ids[:, 0].copy())


def _logits(name: str, model, ids, last):
    x = model.embed(ids)  # (B, T, D)
    if name == "attention":
        return model.forward_embedded(x, last, key_pad=ids == VOCAB), x
    return model.forward_embedded(x, last), x


def train_one(name: str, model, seed: int, steps: int = STEPS) -> list[float]:
    """Adam, constant learning rate :data:`LR`, gradient clipped at 1; returns the loss per step."""
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(model.parameters(), lr=LR)
    losses = []
    model.train()
    for _ in range(steps):
        ids, last, y = sample(rng, BATCH)
        loss = nn.functional.cross_entropy(_logits(name, model, ids, last)[0], y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses


def measure(name: str, model) -> dict:
    """Held-out accuracy per distance (1 … MAX_LEN − 1) and ‖∂ answer logit / ∂ x_t‖ per distance on
    sequences of length MAX_LEN (mean over sequences)."""
    rng = np.random.default_rng(EVAL_SEED)
    acc = []
    with torch.no_grad():
        for n in range(2, MAX_LEN + 1):
            ids, last, y = sample(rng, N_EVAL // 4, n)
            acc.append(float((_logits(name, model, ids, last)[0].argmax(-1) == y).float().mean()))
    ids, last, y = sample(rng, N_EVAL, MAX_LEN)
    x = model.embed(ids).detach().requires_grad_(True)  # (B, T, D)
    logits = (model.forward_embedded(x, last, key_pad=ids == VOCAB) if name == "attention"
              else model.forward_embedded(x, last))
    logits.gather(1, y[:, None]).sum().backward()
    grad = x.grad.norm(dim=-1).mean(0).numpy()  # (T,): position t is at distance MAX_LEN − 1 − t
    return {"accuracy": acc, "grad": [float(g) for g in grad[::-1][1:]], "grad_self": float(grad[-1])}


def run_study(seeds=SEEDS, steps: int = STEPS, log=None) -> dict:
    runs = []
    for seed in seeds:
        for name, model in build_models(seed).items():
            init = measure(name, model)
            losses = train_one(name, model, seed, steps)
            after = measure(name, model)
            runs.append({"model": name, "seed": int(seed), "loss": losses[::10], "accuracy": after["accuracy"],
                         "grad": after["grad"], "grad_self": after["grad_self"], "grad_init": init["grad"],
                         "grad_self_init": init["grad_self"], "accuracy_init": init["accuracy"]})
            if log:
                log(f"{name:9s} seed {seed}: accuracy at distance 1 {after['accuracy'][0]:.2f}, at "
                    f"{MAX_LEN - 1} {after['accuracy'][-1]:.2f}; gradient at 1 {after['grad'][0]:.2e}, at "
                    f"{MAX_LEN - 1} {after['grad'][-1]:.2e}")
    return {"format": FORMAT, "version": 1, "task": "recall-first", "max_len": MAX_LEN, "vocab": VOCAB,
            "steps": steps, "batch_size": BATCH, "lr": LR, "d_model": D_MODEL, "seeds": [int(s) for s in seeds],
            "distances": list(range(1, MAX_LEN)), "command": "python -m attnviz.training.path_length_study",
            "runs": runs}


def main(argv: list[str] | None = None) -> int:
    from attnviz.io import write_atomic

    parser = argparse.ArgumentParser(prog="python -m attnviz.training.path_length_study",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=None, help=f"default: assets/data/{STUDY_FILE}")
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--seeds", type=int, nargs="+", default=list(SEEDS))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    study = run_study(args.seeds, args.steps, log=lambda m: print(m, flush=True))
    out = args.out or study_path()
    write_atomic(out, lambda tmp: Path(tmp).write_text(json.dumps(study, separators=(",", ":")), encoding="utf-8"))
    print(f"wrote {out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
