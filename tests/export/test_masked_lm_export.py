"""The masked-lm figure exported with its numbers: the saved rows are the model's own, recomputed here."""

from __future__ import annotations

import numpy as np
import torch
from PIL import Image

from attnviz.cli import main

TEXT = "the meal was [MASK] , not bad at all"


def test_png_and_data_of_the_bundled_model(tmp_path):
    from attnviz.models.checkpoint import load_checkpoint
    from attnviz.tasks.masked_lm import MaskedLMTask

    png, out = tmp_path / "m.png", tmp_path / "m.npz"
    assert main(["export", "--model", "masked-lm", "--text", TEXT, "--view", "masked-lm", "-o", str(png),
                 "--data", str(out), "--device", "cpu"]) == 0
    with Image.open(png) as im:
        assert len(np.unique(np.asarray(im.convert("L")))) > 8
    d = np.load(out)
    assert d["position"].tolist() == [4]  # [CLS] the meal was [MASK]
    # recomputed without the trace: a plain forward of the model for the guesses
    loaded = load_checkpoint("masked-lm", device="cpu")
    task = MaskedLMTask()
    ids = task.read_text(loaded.tokenizer, TEXT, 32).ids
    with torch.no_grad():
        p = torch.softmax(loaded.model(ids=torch.tensor([ids]))[0, 4], -1).numpy()
    top = np.argsort(-p)[:5]
    assert d["guess_word"][0].tolist() == [task.tokenizer.vocab[i] for i in top]
    np.testing.assert_allclose(d["guess_prob"][0], p[top], atol=1e-5)
    # the saved attention is one probability row of the named layer and head
    assert np.isclose(d["attention"][0].sum(), 1.0, atol=1e-5) and d["attention"].shape == (1, len(ids))


def test_data_without_a_mask_is_one_line(tmp_path, capsys):
    code = main(["export", "--model", "masked-lm", "--text", "the meal was good , not bad at all", "--view",
                 "masked-lm", "-o", str(tmp_path / "m.png"), "--data", str(tmp_path / "m.npz"), "--device", "cpu"])
    err = capsys.readouterr().err.strip()
    errors = [line for line in err.splitlines() if "error:" in line]
    assert code == 2 and len(errors) == 1 and "[MASK]" in errors[0]
