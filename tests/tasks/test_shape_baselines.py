"""The fixed-patch baseline of the shapes scenes: one shipped figure, recomputed here, read by evaluate."""

from __future__ import annotations

import json

import numpy as np
import pytest

from attnviz.errors import InputError
from attnviz.tasks.shape_baselines import FIT_BLOCK, N_SCENES, SCORED_BLOCK, baselines_path, fixed_patch


def test_shipped_offcentre_figure_recomputes_from_the_scenes():
    # an independent recount: masks → patches covered by hand (not patch_cover), best patch on the fit block
    from attnviz.tasks.shapes import ShapesTask

    task = ShapesTask()
    _, scored, _ = task.held_out(SCORED_BLOCK, n=N_SCENES, layout="offcentre")
    _, fit, _ = task.held_out(FIT_BLOCK, n=N_SCENES, layout="offcentre")

    def cover(masks):  # (N, 32, 32) → (N, 16): any pixel of each 8×8 patch on the shape
        return np.stack([masks[:, r * 8:(r + 1) * 8, c * 8:(c + 1) * 8].any(axis=(1, 2))
                         for r in range(4) for c in range(4)], 1)

    best = int(np.argmax(cover(fit).sum(0)))
    share, patch = fixed_patch("offcentre", 8)
    assert patch == best
    assert share == pytest.approx(cover(scored)[:, best].mean(), abs=1e-12)
    # the two blocks are different scenes (the patch is not chosen on the scenes it is scored on)
    assert not np.array_equal(scored, fit)


def test_model_list_and_lesson_read_the_same_number():
    # the bundled model's recorded metric is the shipped figure (what `attnviz models` prints), and the
    # lesson's claim reads task.evaluate, which returns the shipped figure whatever the seed
    doc = json.loads((baselines_path().parent.parent / "models" / "shapes" / "config.json").read_text("utf-8"))
    share, patch = fixed_patch("offcentre", 8)
    assert doc["metrics"]["offcentre_fixed"] == share and doc["metrics"]["offcentre_fixed_patch"] == patch
    assert doc["metrics"]["pointing_fixed"] == fixed_patch("large", 8)[0]


def test_evaluate_uses_the_shipped_figure(monkeypatch):
    from attnviz.tasks import pointing, shape_baselines
    from attnviz.tasks.shapes import ShapesTask

    calls = []
    monkeypatch.setattr(pointing, "classify_and_point",
                        lambda model, images, with_raw=False: (np.zeros(len(images), int), np.zeros(len(images), int),
                                                               np.zeros(len(images), int)))
    monkeypatch.setattr(shape_baselines, "fixed_patch", lambda layout, patch: calls.append(layout) or (0.123, 7))

    class Loaded:
        model, device = None, "cpu"

        class config:
            patch_size = 8

    task = ShapesTask()
    task.n_eval = 20
    m1, m2 = task.evaluate(Loaded, seed=1), task.evaluate(Loaded, seed=2)
    assert m1["offcentre_fixed"] == m2["offcentre_fixed"] == 0.123 and m1["pointing_fixed"] == 0.123
    assert m1["offcentre_fixed_patch"] == 7 and calls == ["large", "offcentre"] * 2


@pytest.mark.parametrize("doc, what", [
    ({"format": "attnviz-shape-baselines", "patch_size": 4, "layouts": {"offcentre": {"fixed": 0.5, "fixed_patch": 1}}},
     "another patch size"),
    ({"format": "attnviz-shape-baselines", "patch_size": 8, "layouts": {"offcentre": {"fixed": 2.0, "fixed_patch": 1}}},
     "a share above 1"),
    ({"format": "something-else", "layouts": {}}, "another format"),
])
def test_a_damaged_file_is_one_line(tmp_path, doc, what):
    path = tmp_path / f"b_{abs(hash(what))}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InputError) as err:
        fixed_patch("offcentre", 8, path)
    assert "\n" not in str(err.value)


def test_a_valid_file_is_read(tmp_path):
    # the control of the test above: the same shape of file, valid, is read as written
    path = tmp_path / "ok.json"
    path.write_text(json.dumps({"format": "attnviz-shape-baselines", "patch_size": 8,
                                "layouts": {"offcentre": {"fixed": 0.5, "fixed_patch": 1}}}), encoding="utf-8")
    assert fixed_patch("offcentre", 8, path) == (0.5, 1)
