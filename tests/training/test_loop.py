"""The training loop: events, schedule, cancel, non-finite stop, atomic checkpoints, snapshots, seeds."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from attnviz.capture import capture
from attnviz.errors import AttnvizError, ModelLoadError
from attnviz.models.checkpoint import load_checkpoint
from attnviz.runtime import prepare_text
from attnviz.training import load_snapshots, train
from attnviz.training.loop import subsample_history
from attnviz.training.schedule import MIN_LR_RATIO, lr_at
from attnviz.training.snapshots import snapshot_steps


def test_events_one_per_step_then_a_final_one(tiny_task, tmp_path):
    events = list(train(tiny_task, steps=20, device="cpu", out_dir=tmp_path / "m", n_snapshots=5))
    assert [e.step for e in events] == list(range(1, 21)) + [20]
    assert [e.done for e in events] == [False] * 20 + [True]
    assert all(e.result is None for e in events[:-1])
    elapsed = [e.elapsed for e in events]
    assert elapsed == sorted(elapsed)
    assert all(math.isfinite(e.loss) and 0 <= e.accuracy <= 1 and e.items_per_s > 0 for e in events[:-1])
    assert [e.step for e in events[:-1] if e.snapshot] == [s for s in snapshot_steps(20, 5) if s > 0]
    final = events[-1]
    assert final.result.path == tmp_path / "m"
    metrics = final.result.info["metrics"]
    assert set(metrics) == {"accuracy"}
    assert "accuracy" in final.message


def test_recorded_lr_follows_warmup_then_cosine(tiny_task):
    events = list(train(tiny_task, steps=40, lr=0.01, device="cpu", n_snapshots=0))[:-1]
    lrs = np.array([e.lr for e in events])
    warm = tiny_task.warmup
    # independent formula: linear ramp to the peak, then cosine from the peak to MIN_LR_RATIO * peak
    expect_warm = 0.01 * np.arange(1, warm + 1) / warm
    t = (np.arange(warm, 40) - warm) / (40 - warm - 1)
    expect_decay = 0.01 * (MIN_LR_RATIO + (1 - MIN_LR_RATIO) * 0.5 * (1 + np.cos(np.pi * t)))
    np.testing.assert_allclose(lrs, np.concatenate([expect_warm, expect_decay]), rtol=1e-9)
    assert lr_at(39, 40, 0.01, warm) == pytest.approx(0.01 * MIN_LR_RATIO)


def test_config_json_records_the_run(tiny_task, tmp_path):
    ev = list(train(tiny_task, steps=30, device="cpu", seed=3, out_dir=tmp_path, n_snapshots=0))[-1]
    loaded = load_checkpoint(tmp_path, device="cpu")
    info = loaded.info
    assert info["task"] == "first-word" and info["labels"] == ["other", "colour"]
    assert info["seed"] == 3 and info["steps"] == 30 and info["trained_steps"] == 30 and info["complete"]
    assert info["device"] == "cpu" and info["wall_seconds"] >= info["train_seconds"] > 0
    assert info["metrics"] == ev.result.info["metrics"]
    assert info["history"]["step"] == list(range(1, 31))
    assert loaded.tokenizer.vocab == tiny_task.tokenizer.vocab
    # the reloaded weights give the recorded metric
    assert tiny_task.evaluate(loaded) == info["metrics"]


def test_seed_makes_runs_identical(tiny_task):
    def run(seed):
        events = list(train(tiny_task, steps=15, device="cpu", seed=seed, n_snapshots=0))
        return [e.loss for e in events[:-1]], events[-1].result.model.state_dict()

    loss_a, state_a = run(7)
    loss_b, state_b = run(7)
    loss_c, _ = run(8)
    assert loss_a == loss_b
    assert all(torch.equal(state_a[k], state_b[k]) for k in state_a)
    assert loss_a != loss_c


def test_cancel_stops_between_steps_and_keeps_the_checkpoint(tiny_task, tmp_path):
    seen = []
    events = train(tiny_task, steps=50, device="cpu", out_dir=tmp_path, checkpoint_every=5, n_snapshots=4,
                   cancel=lambda: len(seen) >= 12)
    for ev in events:
        seen.append(ev)
    final = seen[-1]
    assert final.done and final.step == 12 and "cancelled at step 12" in final.message
    assert [e.step for e in seen[:-1]] == list(range(1, 13))
    assert final.result.info["cancelled"] and final.result.info["trained_steps"] == 12
    ckpt = load_checkpoint(tmp_path, device="cpu")
    assert ckpt.info["trained_steps"] == 10 and ckpt.info["complete"] is False
    assert load_snapshots(tmp_path).steps == [0]  # taken before step 10; the step-17 one never happened


def test_cancel_before_any_checkpoint_leaves_no_folder_and_snapshots_come_live(tiny_task, tmp_path):
    out = tmp_path / "run"  # a new folder, as the app's training tab asks for
    seen = []
    for ev in train(tiny_task, steps=50, device="cpu", out_dir=out, n_snapshots=10, cancel=lambda: len(seen) >= 12):
        seen.append(ev)
    assert "cancelled at step 12" in seen[-1].message and not out.exists()
    live = [ev for ev in seen if ev.snapshot]
    assert live and all(ev.snapshots is not None and ev.snapshots.steps[-1] == ev.step for ev in live)
    assert all(ev.snapshots is None for ev in seen if not ev.snapshot)
    first = live[0].snapshots
    assert first.steps == [0, live[0].step]  # a copy: later snapshots did not grow it
    kept = tmp_path / "existing"
    kept.mkdir()
    for ev in train(tiny_task, steps=50, device="cpu", out_dir=kept, n_snapshots=0, cancel=lambda: True):
        pass
    assert kept.is_dir()  # a folder the user had made stays


def test_non_finite_loss_stops_with_message_and_keeps_last_good_checkpoint(nan_task, tmp_path):
    events = []
    with pytest.raises(AttnvizError, match="loss became nan at step 25"):
        for ev in train(nan_task, steps=60, device="cpu", out_dir=tmp_path, checkpoint_every=10, n_snapshots=0):
            events.append(ev)
    last = events[-1]
    assert last.done and last.result is None and "loss became nan" in last.message
    assert "step 20" in last.message and len(events) == 25  # 24 good steps + the stop event
    ckpt = load_checkpoint(tmp_path, device="cpu")
    assert ckpt.info["trained_steps"] == 20
    assert all(torch.isfinite(p).all() for p in ckpt.model.parameters())


def test_failed_checkpoint_write_leaves_the_previous_one(tiny_task, tmp_path, monkeypatch):
    import safetensors.torch

    real_save = safetensors.torch.save_file
    calls = []

    def flaky_save(tensors, filename, metadata=None):
        calls.append(filename)
        if len(calls) == 2:  # the second checkpoint dies half-way through its weights file
            with open(filename, "wb") as fh:
                fh.write(b"half a file")
            raise OSError(28, "No space left on device")
        real_save(tensors, filename, metadata=metadata)

    monkeypatch.setattr(safetensors.torch, "save_file", flaky_save)
    with pytest.raises(ModelLoadError, match="no space left on the device"):
        list(train(tiny_task, steps=30, device="cpu", out_dir=tmp_path, checkpoint_every=10, n_snapshots=0))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["config.json", "model.safetensors"]  # no .part left
    ckpt = load_checkpoint(tmp_path, device="cpu")
    assert ckpt.info["trained_steps"] == 10


def test_snapshots_file_matches_a_fresh_capture(tiny_task, tmp_path):
    list(train(tiny_task, steps=20, device="cpu", out_dir=tmp_path, n_snapshots=4))
    snaps = load_snapshots(tmp_path)
    assert snaps.steps == [0, 7, 13, 20]
    assert [p["input"] for p in snaps.probes] == tiny_task.probe_inputs()
    assert snaps.n_layers() == 1 and snaps.parts == ["self"]
    loaded = load_checkpoint(tmp_path, device="cpu")
    for j, text in enumerate(tiny_task.probe_inputs()):
        prep = prepare_text(loaded, text)
        assert snaps.tokens(3, j) == prep.tokens
        # the last snapshot is the final model: recompute its attention independently
        ids = prep.inputs["ids"][0].numpy()
        attn = loaded.model.stack.blocks[0].attn
        emb = loaded.model.embed
        with torch.no_grad():
            x = emb.tok.weight[ids] + emb.pos.table[: len(ids)]
            h = loaded.model.stack.blocks[0].ln1(x).numpy()
        H, dh = attn.n_heads, attn.d_head
        q = (h @ attn.q_proj.weight.detach().numpy().T + attn.q_proj.bias.detach().numpy()).reshape(-1, H, dh)
        k = (h @ attn.k_proj.weight.detach().numpy().T + attn.k_proj.bias.detach().numpy()).reshape(-1, H, dh)
        logits = np.einsum("qhd,khd->hqk", q, k) / np.sqrt(dh)
        expect = np.exp(logits - logits.max(-1, keepdims=True))
        expect /= expect.sum(-1, keepdims=True)
        got = snaps.probs(3, j, 0)
        assert got.shape == (H, len(ids), len(ids))
        np.testing.assert_allclose(got, expect, atol=2e-3)
        # and it is what capture() sees
        trace = capture(loaded.model, prep.inputs, prep.tokens)
        np.testing.assert_allclose(got, trace.probs(0), atol=2e-3)
    assert not np.allclose(snaps.probs(0, 0, 0), snaps.probs(3, 0, 0), atol=1e-2)  # attention changed


def test_history_is_averaged_down():
    n = 1000
    hist = {"step": list(range(1, n + 1)), "loss": list(np.linspace(2, 0, n)), "accuracy": [0.5] * n,
            "lr": list(np.linspace(1, 0, n))}
    out = subsample_history(hist, max_points=100)
    assert len(out["step"]) == 100 and out["step"][-1] == n and out["step"][0] == 10
    np.testing.assert_allclose(out["loss"], np.linspace(2, 0, n).reshape(100, 10).mean(1))
    assert subsample_history(hist, max_points=5000) == hist


def test_threads_are_restored(tiny_task):
    before = torch.get_num_threads()
    list(train(tiny_task, steps=3, device="cpu", n_snapshots=0))
    assert torch.get_num_threads() == before


def test_bad_arguments_are_one_line_errors(tiny_task, tmp_path):
    with pytest.raises(AttnvizError, match="must be positive"):
        next(train(tiny_task, steps=0, device="cpu"))
    with pytest.raises(AttnvizError, match="unknown task"):
        next(train("no-such-task", device="cpu"))
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(AttnvizError, match="cannot create output directory"):
        next(train(tiny_task, steps=2, device="cpu", out_dir=blocker / "sub"))


def test_loop_overhead_is_measured(tiny_task):
    from attnviz.bench.training import measure_loop_overhead

    res = measure_loop_overhead(tiny_task, steps=30, repeats=1, n_snapshots=5)
    assert res["bare_s"] > 0 and res["loop_s"] > 0
    assert res["ratio"] == pytest.approx(res["loop_s"] / res["bare_s"], rel=1e-2)
    assert res["ratio"] < 2.0  # a gross regression (e.g. a capture every step) would exceed this
