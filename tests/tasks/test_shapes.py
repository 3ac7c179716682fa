"""The ``shapes`` task: disjoint splits, the app's preprocessing path, the pointing game, the bundled model."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attnviz.analysis.rollout import compute_rollout
from attnviz.models.checkpoint import LoadedModel
from attnviz.models.registry import build_model
from attnviz.runtime import load_model, run_trace
from attnviz.tasks.shapes import TEST_OFFSET, ShapesTask, scene_ids
from attnviz.tasks.pointing import classify_and_point, patch_hits
from attnviz.vision.preprocess import preprocess_image
from attnviz.vision.shape_scenes import SHAPES, make_scene


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models on a shared machine: extra threads only spin
    yield
    torch.set_num_threads(before)


def _tiny(task, **over):
    torch.manual_seed(0)
    cfg = task.model_config(**{"n_layers": 2, "d_model": 16, "n_heads": 2, **over})
    model = build_model(cfg).eval()
    return LoadedModel(model=model, config=cfg, info={"task": "shapes", **task.info()}, device=torch.device("cpu"))


def test_train_and_held_out_ids_are_disjoint():
    train = scene_ids("train", [0, 5, TEST_OFFSET - 1])
    test = scene_ids("test", [0, 5, TEST_OFFSET - 1])
    assert train.max() < TEST_OFFSET <= test.min()
    with pytest.raises(ValueError):
        scene_ids("train", [TEST_OFFSET])
    with pytest.raises(ValueError):
        scene_ids("test", [-1])


def test_training_batches_never_show_a_held_out_scene():
    task = ShapesTask()
    task.n_train = 1000  # a smaller pool, built faster: disjointness does not depend on its size
    held, _, _ = task.held_out(n=1000)
    held_bytes = {img.tobytes() for img in held}
    assert len(held_bytes) == 1000
    prep = task.info()["preprocess"]
    batch = task.sample_batch("train", 256, np.random.default_rng(0))
    x = batch.inputs["images"].numpy().transpose(0, 2, 3, 1)  # (B, S, S, 3), undo the normalisation:
    pixels = np.round((x * np.asarray(prep["std"]) + np.asarray(prep["mean"])) * 255).astype(np.uint8)
    assert not any(img.tobytes() in held_bytes for img in pixels)


def test_training_batches_are_pool_scenes_or_their_mirror_images():
    task = ShapesTask()
    task.n_train = 300
    pool, labels = task.train_pool()
    for i in (0, 7, 299):
        img, _, label = make_scene(int(scene_ids("train", [i])[0]))
        np.testing.assert_array_equal(pool[i], img)
        assert labels[i] == label
    prep = task.info()["preprocess"]
    batch = task.sample_batch("train", 200, np.random.default_rng(1))
    x = batch.inputs["images"].numpy().transpose(0, 2, 3, 1)
    pixels = np.round((x * np.asarray(prep["std"]) + np.asarray(prep["mean"])) * 255).astype(np.uint8)
    plain = {img.tobytes(): lab for img, lab in zip(pool, labels)}
    mirrored = {img[:, ::-1].tobytes(): lab for img, lab in zip(pool, labels)}
    n_mirrored = 0
    for img, y in zip(pixels, batch.targets.tolist()):
        key = img.tobytes()
        assert plain.get(key, mirrored.get(key)) == y
        n_mirrored += key not in plain
    assert 60 < n_mirrored < 140  # about half


def test_batches_are_deterministic_and_normalised_like_the_app():
    task = ShapesTask()
    a = task.sample_batch("test", 6, np.random.default_rng(4))
    b = task.sample_batch("test", 6, np.random.default_rng(4))
    assert torch.equal(a.inputs["images"], b.inputs["images"]) and torch.equal(a.targets, b.targets)
    ids = scene_ids("test", np.random.default_rng(4).integers(0, TEST_OFFSET, size=6))
    cfg, prep = task.model_config(), task.info()["preprocess"]
    for x, y, sid in zip(a.inputs["images"], a.targets, ids):
        img, _, label = make_scene(int(sid))
        assert int(y) == label
        np.testing.assert_allclose(x[None].numpy(), preprocess_image(img, cfg, prep)[0].numpy(), atol=1e-6)


def test_preprocess_statistics_match_the_scenes():
    images, _, _ = ShapesTask().held_out(n=500)
    px = images.reshape(-1, 3) / 255.0
    prep = ShapesTask().info()["preprocess"]
    np.testing.assert_allclose(prep["mean"], px.mean(0), atol=0.02)
    np.testing.assert_allclose(prep["std"], px.std(0), atol=0.02)


def test_patch_hits_against_a_loop():
    rng = np.random.default_rng(0)
    masks = rng.random((20, 32, 32)) > 0.97
    peaks = rng.integers(0, 64, 20)
    want = [masks[i, (p // 8) * 4:(p // 8) * 4 + 4, (p % 8) * 4:(p % 8) * 4 + 4].any() for i, p in enumerate(peaks)]
    np.testing.assert_array_equal(patch_hits(peaks, masks, 4), want)


def test_classify_and_point_agrees_with_one_trace_per_image():
    task = ShapesTask()
    loaded = _tiny(task)
    images, _, _ = task.held_out(n=12)
    preds, peaks, raw = classify_and_point(loaded.model, task._tensor(images), chunk=5, with_raw=True)
    for img, pred, peak, last in zip(images, preds, peaks, raw):
        trace = run_trace(loaded, image=img, rollout=False)
        roll = compute_rollout(trace.all_probs())
        assert int(trace["prediction"].argmax()) == pred
        assert int(roll[0, 1:].argmax()) == peak
        assert int(trace.probs(trace.n_layers - 1)[:, 0, 1:].mean(0).argmax()) == last  # [CLS] row, heads averaged


def test_pointing_baselines_recounted_by_hand():
    from attnviz.tasks.pointing import pointing_baselines

    # 4×4 images of 2×2 patches (a 2×2 grid); patch 0 is top-left
    masks = np.zeros((4, 4, 4), bool)
    masks[0, :2, :2] = True  # patch 0
    masks[1, :2, :] = True  # patches 0, 1
    masks[2, 2:, 2:] = True  # patch 3
    masks[3, :2, :2] = True  # patch 0
    peaks, raw = np.array([0, 1, 3, 2]), np.array([0, 0, 0, 0])
    b = pointing_baselines(peaks, raw, masks, 2)
    assert b["rollout"] == 0.75 and b["raw"] == 0.75  # scene 3 missed / scene 2 missed
    assert b["fixed"] == 0.75 and b["fixed_patch"] == 0  # patch 0 hits scenes 0, 1, 3
    assert b["chance"] == (1 + 2 + 1 + 1) / 16
    # the fixed patch chosen on other scenes (where patch 3 wins) and scored on these: it hits scene 2 only
    fit = np.zeros((2, 4, 4), bool)
    fit[:, 2:, 2:] = True
    b = pointing_baselines(peaks, raw, masks, 2, fit)
    assert b["fixed_patch"] == 3 and b["fixed"] == 0.25 and b["rollout"] == 0.75


def test_evaluate_fields_and_fresh_seeds():
    task = ShapesTask()
    task.n_eval = 40
    loaded = _tiny(task)
    m = task.evaluate(loaded)
    assert set(m) == {"accuracy", "pointing_game", "pointing_chance", "n_test", "pointing_raw", "pointing_fixed",
                      "offcentre_accuracy", "offcentre_rollout", "offcentre_raw", "offcentre_fixed",
                      "offcentre_fixed_patch", "offcentre_chance", "offcentre_n"}
    assert m["n_test"] == 40 and m["offcentre_n"] == 40
    assert 0 <= m["accuracy"] <= 1 and 0 <= m["pointing_game"] <= 1 and 0 <= m["offcentre_rollout"] <= 1
    assert task.evaluate(loaded) == m
    a, _, _ = task.held_out(seed=1, n=40)
    b, _, _ = task.held_out(seed=2, n=40)
    assert not np.array_equal(a, b)


def test_offcentre_scenes_defeat_the_centre_prior_that_large_scenes_reward():
    """The reason the rollout claim is judged on "offcentre" scenes: counted from the masks alone, no model."""
    from attnviz.tasks.pointing import pointing_baselines

    task = ShapesTask()
    n = 400
    fixed = {}
    for layout in ("large", "offcentre"):
        _, masks, _ = task.held_out(seed=7, n=n, layout=layout)
        _, fit, _ = task.held_out(seed=8, n=n, layout=layout)
        zeros = np.zeros(n, np.int64)
        fixed[layout] = pointing_baselines(zeros, zeros, masks, 8, fit)["fixed"]
        per_patch = masks.reshape(n, 4, 8, 4, 8).any(axis=(2, 4))
        if layout == "large":  # every large shape covers one of the central 2×2 patches
            assert per_patch[:, 1:3, 1:3].any(axis=(1, 2)).all()
        else:  # each central patch is missed by many small shapes, and every edge and corner patch is used
            assert (~per_patch[:, 1:3, 1:3]).mean(axis=0).min() > 0.3
            assert per_patch.any(axis=0).all()
    assert fixed["large"] > 0.8 and fixed["offcentre"] < 0.65


def test_probe_inputs_are_one_held_out_scene_per_shape():
    probes = ShapesTask().probe_inputs()
    assert len(probes) == len(SHAPES)
    for label, probe in enumerate(probes):
        hit = [i for i in range(40) if np.array_equal(make_scene(int(scene_ids("test", [i])[0]))[0], probe)]
        assert hit and make_scene(int(scene_ids("test", [hit[0]])[0]))[2] == label


def test_bundled_model_traces_its_samples_and_reproduces_its_metrics():
    from attnviz.vision.samples import sample_images

    loaded = load_model("shapes", device="cpu")
    doc = json.loads((loaded.path / "config.json").read_text(encoding="utf-8"))
    task = ShapesTask()
    assert loaded.task == "shapes" and loaded.info["labels"] == list(SHAPES)
    assert loaded.info["preprocess"] == task.info()["preprocess"]
    metrics = task.evaluate(loaded)  # the same held-out scenes as at training time
    # the stored metrics (fields added to evaluate later, e.g. the pointing baselines, are not stored yet)
    assert {k: metrics[k] for k in doc["metrics"]} == pytest.approx(doc["metrics"], abs=1e-9)
    assert metrics["accuracy"] >= 0.97 and metrics["pointing_game"] >= 0.90
    # off-centre: the model still names the shape, and rollout finds it where a centre prior cannot
    assert metrics["offcentre_accuracy"] >= 0.9
    assert metrics["offcentre_rollout"] >= metrics["offcentre_fixed"] + 0.25
    samples = sample_images()
    assert task.example_input() == samples["shapes-star"]
    for label, name in enumerate(SHAPES):
        trace = run_trace(loaded, image=samples[f"shapes-{name}"])
        np.testing.assert_allclose(trace["image"], task.probe_inputs()[label] / 255.0, atol=1e-6)
        pred = trace["prediction"]
        assert pred.shape == (5,) and pred.sum() == pytest.approx(1.0, abs=1e-5)
        assert int(pred.argmax()) == label
        assert trace["rollout"].shape == (17, 17) and trace.grid == (4, 4)  # 8-pixel patches of a 32-pixel scene


def test_pointing_chance_is_the_share_of_patches_touching_the_object():
    from attnviz.tasks.shapes import pointing_chance

    masks = np.zeros((2, 32, 32), bool)
    masks[0, 0:3, 0:3] = True  # one 8-pixel patch of 16
    masks[1, 6:10, 6:10] = True  # straddles four patches
    assert pointing_chance(masks, 8) == (1 + 4) / 32
    # recount one real scene by brute force: pick every patch and score it as the pointing game does
    _, mask, _ = make_scene(int(scene_ids("test", [3])[0]))
    hits = [patch_hits(np.array([p]), mask[None], 8)[0] for p in range(16)]
    assert pointing_chance(mask[None], 8) == np.mean(hits)


def test_bundled_model_uses_8_pixel_patches_with_smooth_filters_and_beats_chance():
    from attnviz.analysis.filter_smoothness import filter_smoothness, noise_share
    from attnviz.analysis.pca import compute_filter_pca

    loaded = load_model("shapes", device="cpu")
    assert loaded.config.patch_size >= 8
    comps, _ = compute_filter_pca(loaded.model.embed.proj.weight.detach().numpy(), k=28)
    # top 16 components: white noise puts 16 % of its energy at u + v < 4 (of 8), the old model's colour-noise
    # filters 50 %, the bundled one 76 % (measured); 70 % leaves room for retraining noise
    assert noise_share(comps.shape[1]) < 0.2
    assert filter_smoothness(comps, 16) >= 0.70
    m = loaded.info["metrics"]
    assert m["accuracy"] >= 0.97 and m["pointing_game"] > m["pointing_chance"] + 0.4
