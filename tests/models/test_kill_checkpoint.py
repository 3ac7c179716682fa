"""Issue 14, item 4: a checkpoint is one unit. SIGKILL a save at each stage, then load what is left.

Checkpoint A has every weight 1.0 and ``marker: A`` in its config; the killed save writes B (2.0, ``B``).
Whatever is left must load, and its config must describe its weights: never B's config over A's weights.
"""

from __future__ import annotations

import os
import signal
import time

import pytest
import torch

from tests._robust_models import save_text_model
from attnviz.errors import ModelLoadError
from attnviz.models.checkpoint import load_checkpoint, recover_checkpoint

STAGES = ["part-created", "weights-written", "config-written", "part-complete", "old-moved", "swapped"]
# the checkpoint a load finds after a kill at each stage: the previous one until the new one is complete
EXPECTED = {"part-created": "A", "weights-written": "A", "config-written": "A", "part-complete": "A",
            "old-moved": "B", "swapped": "B", None: "B"}

def _in_child(work) -> int:
    """Run ``work()`` in a forked copy of this process (torch already imported: no start-up cost);
    return the child's wait status. A kill inside ``work`` is a real SIGKILL of a real process."""
    pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 1
        try:
            work()
            code = 0
        finally:
            os._exit(code)
    return os.waitpid(pid, 0)[1]


def _save_b(path, stage):
    from attnviz.models import checkpoint

    loaded = load_checkpoint(path, device="cpu")
    with torch.no_grad():
        for p in loaded.model.parameters():
            p.fill_(2.0)
    if stage is not None:
        checkpoint._STAGE_HOOK = lambda name: os.kill(os.getpid(), signal.SIGKILL) if name == stage else None
    info = {k: v for k, v in loaded.info.items() if k != "name"}
    checkpoint.save_checkpoint(path, loaded.model, loaded.config, {**info, "marker": "B"},
                               tokenizer=loaded.tokenizer)


def _save_a(path):
    save_text_model(path, info={"marker": "A"})
    loaded = load_checkpoint(path, device="cpu")
    with torch.no_grad():
        for p in loaded.model.parameters():
            p.fill_(1.0)
    from attnviz.models.checkpoint import save_checkpoint

    save_checkpoint(path, loaded.model, loaded.config, {"marker": "A", "labels": ["a", "b"]}, tokenizer=loaded.tokenizer)
    (path / "notes.txt").write_text("the user's notes")  # a file the save does not write: carried over


def _leftovers(path):
    return sorted(p.name for p in path.parent.iterdir() if p.name.startswith(f".{path.name}."))


@pytest.mark.parametrize("stage", [*STAGES, None])
def test_a_save_killed_at_each_stage_leaves_a_loadable_consistent_checkpoint(stage, tmp_path):
    path = tmp_path / "model"
    _save_a(path)
    status = _in_child(lambda: _save_b(path, stage))
    if stage is None:
        assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0
    else:
        assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL
    loaded = load_checkpoint(path, device="cpu")
    marker = loaded.info["marker"]
    assert marker == EXPECTED[stage]
    values = torch.cat([p.flatten() for p in loaded.model.parameters()])
    assert torch.all(values == (1.0 if marker == "A" else 2.0))  # the config describes these weights
    assert (path / "notes.txt").read_text() == "the user's notes"
    assert _leftovers(path) == []  # the load removed (or used) what the killed save left


def test_a_dead_saves_part_folder_beside_an_empty_model_folder_is_removed(tmp_path):
    path = tmp_path / "model"
    path.mkdir()  # as `train` leaves it before its first checkpoint
    dead = tmp_path / ".model.part-999999999-abcd"  # pid 999999999 does not exist
    dead.mkdir()
    (dead / "model.safetensors").write_bytes(b"half")
    with pytest.raises(ModelLoadError, match="no config.json"):  # one line: nothing to load yet
        load_checkpoint(path, device="cpu")
    assert _leftovers(path) == []


def test_stale_temporary_files_inside_the_folder_are_removed_by_the_next_load(tmp_path):
    path = save_text_model(tmp_path / "model")
    stale = path / ".model.safetensors.x1y2.part"
    stale.write_bytes(b"half a file")
    fresh = path / ".config.json.a1b2.part"  # maybe another process writing right now: left alone
    fresh.write_bytes(b"{")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    load_checkpoint(path, device="cpu")
    assert not stale.exists() and fresh.exists()


def test_recover_restores_the_previous_folder_when_only_it_is_left(tmp_path):
    path = save_text_model(tmp_path / "model")
    os.rename(path, tmp_path / ".model.old-999999999-abcd")  # killed between the renames, part already gone
    assert recover_checkpoint(path)[0].startswith("restored model")
    assert load_checkpoint(path, device="cpu").config.d_model == 16


def _train(out):
    from attnviz.training.loop import train

    for _ in train("order-sentiment", steps=300, device="cpu", out_dir=out, checkpoint_every=2, n_snapshots=4):
        pass


def test_training_killed_at_random_moments_always_leaves_a_consistent_checkpoint(tmp_path):
    """SIGKILL a real training run (checkpoint every 2 steps) at a few moments; what is left loads, and its
    recorded history ends at its recorded step (config and training record were written together)."""
    for i, extra in enumerate((0.0, 0.05, 0.3)):
        out = tmp_path / f"run{i}"
        pid = os.fork()
        if pid == 0:
            try:
                _train(out)
            finally:
                os._exit(0)
        try:
            for _ in range(1200):  # wait for the first checkpoint (polling, not a timing assertion)
                if (out / "config.json").exists() or os.waitpid(pid, os.WNOHANG)[0]:
                    break
                time.sleep(0.05)
            time.sleep(extra)
        finally:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        loaded = load_checkpoint(out, device="cpu")
        steps = loaded.info["history"]["step"]
        assert steps and steps[-1] == loaded.info["trained_steps"]
        assert len(steps) == loaded.info["trained_steps"]  # under 400 steps the history is not averaged down
        assert _leftovers(out) == []


def test_write_atomic_removes_what_a_killed_write_of_the_same_file_left(tmp_path):
    from attnviz.io import write_atomic

    stale, fresh = tmp_path / ".t.npz.abc123.part", tmp_path / ".t.npz.def456.part"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"being written by another process")
    old = time.time() - 3600
    os.utime(stale, (old, old))
    from pathlib import Path

    write_atomic(tmp_path / "t.npz", lambda tmp: Path(tmp).write_bytes(b"whole"))
    assert (tmp_path / "t.npz").read_bytes() == b"whole"
    assert not stale.exists() and fresh.exists()
