"""The ``digits`` task: data, split, augmentation, the app's preprocessing path, and the bundled model."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attnviz.models.registry import build_model
from attnviz.models.checkpoint import LoadedModel
from attnviz.pipeline import load_model, run_trace
from attnviz.tasks import get_task
from attnviz.tasks.digits import DigitsTask, digit_images, split_indices
from attnviz.vision.preprocess import preprocess_image


@pytest.fixture(autouse=True)
def _one_thread():
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models on a shared machine: extra threads only spin
    yield
    torch.set_num_threads(before)


def _bilinear_double(img: np.ndarray) -> np.ndarray:
    """Enlarge (8, 8) → (16, 16) bilinearly, pixel centres aligned, edges clamped (written out by hand).

    Output pixel 2k sits a quarter pixel before source pixel k, 2k+1 a quarter after it.
    """
    def along(a, axis):
        a = np.moveaxis(a, axis, 0)
        prev = np.concatenate([a[:1], a[:-1]])
        nxt = np.concatenate([a[1:], a[-1:]])
        out = np.empty((2 * len(a),) + a.shape[1:])
        out[0::2] = 0.75 * a + 0.25 * prev
        out[1::2] = 0.75 * a + 0.25 * nxt
        return np.moveaxis(out, 0, axis)

    return along(along(img, 0), 1)


def test_images_are_the_scikit_learn_digits_enlarged():
    from sklearn.datasets import load_digits

    ref = load_digits()
    images, labels = digit_images()
    assert images.shape == (1797, 16, 16) and images.dtype == np.uint8
    np.testing.assert_array_equal(labels, ref.target)
    for i in (0, 500, 1796):
        want = _bilinear_double(ref.images[i] / 16.0) * 255
        np.testing.assert_allclose(images[i], want, atol=0.5 + 1e-6)
        assert abs(images[i].astype(float).mean() - ref.images[i].mean() / 16 * 255) < 1.0


def test_split_is_disjoint_stratified_and_independent_of_the_task_seed():
    train, test = split_indices()
    _, labels = digit_images()
    assert len(np.intersect1d(train, test)) == 0
    assert len(train) + len(test) == 1797
    np.testing.assert_array_equal(np.bincount(labels[test]), np.full(10, 36))
    a, b = DigitsTask(seed=0), DigitsTask(seed=7)
    batch_a = a.sample_batch("test", 8, np.random.default_rng(3))
    batch_b = b.sample_batch("test", 8, np.random.default_rng(3))
    assert torch.equal(batch_a.inputs["images"], batch_b.inputs["images"])


def _held_out_tensors(task, cfg):
    """Every held-out digit through the app's path (preprocess_image with the checkpoint's settings)."""
    images, labels = digit_images()
    _, test = split_indices()
    prep = task.info()["preprocess"]
    tensors = torch.cat([preprocess_image(images[i], cfg, prep)[0] for i in test])  # (360, 1, 16, 16)
    return tensors, labels[test]


def test_training_batches_are_normalised_like_the_app_does():
    task = DigitsTask()
    cfg = task.model_config()
    app, app_labels = _held_out_tensors(task, cfg)
    batch = task.sample_batch("test", 16, np.random.default_rng(1))
    assert batch.inputs["images"].shape == (16, 1, 16, 16) and batch.n_items == 16
    for x, y in zip(batch.inputs["images"], batch.targets):
        same = torch.isclose(app, x[None], atol=1e-6).flatten(1).all(1)
        assert same.any(), "a held-out batch image differs from the app's preprocessing of every held-out digit"
        assert int(y) in set(app_labels[same.numpy()].tolist())


def test_preprocess_statistics_are_those_of_the_training_pixels():
    images, _ = digit_images()
    train, _ = split_indices()
    px = images[train] / 255.0
    prep = DigitsTask().info()["preprocess"]
    assert prep["mean"][0] == pytest.approx(px.mean(), abs=0.01)
    assert prep["std"][0] == pytest.approx(px.std(), abs=0.01)


def test_evaluate_counts_like_the_app_path():
    task = get_task("digits")
    torch.manual_seed(0)
    cfg = task.model_config(n_layers=1, d_model=16, n_heads=2)
    model = build_model(cfg).eval()
    loaded = LoadedModel(model=model, config=cfg, info={"task": "digits", **task.info()}, device=torch.device("cpu"))
    metrics = task.evaluate(loaded)
    tensors, labels = _held_out_tensors(task, cfg)
    with torch.no_grad():
        want = float((model(tensors).argmax(-1).numpy() == labels).mean())
    assert metrics == {"accuracy": pytest.approx(want), "n_test": 360}


def test_probe_inputs_are_one_held_out_image_per_class():
    images, labels = digit_images()
    _, test = split_indices()
    held = {images[i].tobytes(): labels[i] for i in test}
    probes = DigitsTask().probe_inputs()
    assert [held[p.tobytes()] for p in probes] == list(range(10))


def test_bundled_model_traces_its_samples_and_reproduces_its_metrics():
    from attnviz.vision.samples import sample_images

    loaded = load_model("digits", device="cpu")
    doc = json.loads((loaded.path / "config.json").read_text(encoding="utf-8"))
    task = DigitsTask()
    assert loaded.task == "digits" and loaded.info["labels"] == task.labels
    assert loaded.info["preprocess"] == task.info()["preprocess"]
    assert task.evaluate(loaded) == doc["metrics"]  # the same fixed split: identical numbers
    assert doc["metrics"]["accuracy"] >= 0.98
    samples = sample_images()
    assert task.example_input() == samples["digit-3"]
    correct = 0
    for d in range(10):
        trace = run_trace(loaded, image=samples[f"digit-{d}"])
        np.testing.assert_allclose(trace["image"][..., 0], task.probe_inputs()[d] / 255.0, atol=1e-6)
        pred = trace["prediction"]
        assert pred.shape == (10,) and pred.sum() == pytest.approx(1.0, abs=1e-5)
        assert trace["rollout"].shape == (17, 17) and trace.grid == (4, 4)
        correct += int(pred.argmax()) == d
    assert correct >= 9  # held-out samples; the model is ≥ 98 % accurate
