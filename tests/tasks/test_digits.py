"""The ``digits`` task: data, split, augmentation, the app's preprocessing path, and the bundled model."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from attnviz.models.checkpoint import LoadedModel
from attnviz.models.registry import build_model
from attnviz.runtime import load_model, run_trace
from attnviz.tasks import get_task
from attnviz.tasks.base import Batch
from attnviz.tasks.digits import JITTER, DigitsTask, digit_images, digit_variants, load_digits_arrays, split_indices
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


def test_images_are_the_8x8_digits_enlarged():
    small, ref_labels = load_digits_arrays()
    images, labels = digit_images()
    assert images.shape == (1797, 16, 16) and images.dtype == np.uint8
    np.testing.assert_array_equal(labels, ref_labels)
    for i in (0, 500, 1796):
        want = _bilinear_double(small[i] / 16.0) * 255
        np.testing.assert_allclose(images[i], want, atol=0.5 + 1e-6)
        assert abs(images[i].astype(float).mean() - small[i].mean() / 16 * 255) < 1.0


def _bilinear_at(img: np.ndarray, dy: float, dx: float) -> np.ndarray:
    """Sample (8, 8) at the 16×16 output pixel centres moved by (dy, dx) source pixels; edges clamped."""
    coords = (np.arange(16) + 0.5) / 2 - 0.5  # output pixel centres in source pixel units

    def weights(c):
        lo = np.floor(c).astype(int)
        frac = c - lo
        return np.clip(lo, 0, 7), np.clip(lo + 1, 0, 7), frac

    y0, y1, fy = weights(coords + dy)
    x0, x1, fx = weights(coords + dx)
    top = img[y0][:, x0] * (1 - fx) + img[y0][:, x1] * fx
    bottom = img[y1][:, x0] * (1 - fx) + img[y1][:, x1] * fx
    return top * (1 - fy)[:, None] + bottom * fy[:, None]


def test_training_variants_are_the_digits_resampled_at_sub_pixel_offsets():
    ref = load_digits_arrays()[0] / 16.0
    variants = digit_variants()
    assert variants.shape == (9, 1797, 16, 16)
    offsets = [(dy, dx) for dy in (-JITTER, 0, JITTER) for dx in (-JITTER, 0, JITTER)]
    for k, (dy, dx) in enumerate(offsets):
        for i in (3, 900):
            np.testing.assert_allclose(variants[k, i], _bilinear_at(ref[i], dy, dx) * 255, atol=0.5 + 1e-4)
    np.testing.assert_array_equal(variants[4], digit_images()[0])


def test_loss_is_label_smoothed_cross_entropy():
    task = DigitsTask()
    rng = np.random.default_rng(0)
    logits = torch.from_numpy(rng.normal(size=(6, 10)))
    targets = torch.tensor([0, 3, 3, 9, 1, 2])
    loss, correct, counted = task.loss(logits, Batch({}, targets, 6))
    z = logits.numpy()
    logp = z - z.max(1, keepdims=True) - np.log(np.exp(z - z.max(1, keepdims=True)).sum(1, keepdims=True))
    eps = task.label_smoothing
    want = np.mean([-(1 - eps) * logp[i, t] - eps * logp[i].mean() for i, t in enumerate(targets.tolist())])
    assert float(loss) == pytest.approx(want, rel=1e-6)
    assert correct == int((z.argmax(1) == targets.numpy()).sum()) and counted == 6


def test_training_batches_come_from_the_training_split_only():
    images, labels = digit_images()
    train, test = split_indices()
    variants = digit_variants()
    allowed = {variants[k, i].tobytes(): labels[i] for k in range(9) for i in train}
    held = {images[i].tobytes() for i in test}
    batch = DigitsTask().sample_batch("train", 64, np.random.default_rng(2))
    x = batch.inputs["images"].numpy()[:, 0]  # (B, 16, 16), undo the normalisation:
    prep = DigitsTask().info()["preprocess"]
    pixels = np.round((x * prep["std"][0] + prep["mean"][0]) * 255).astype(np.uint8)
    for img, y in zip(pixels, batch.targets.tolist()):
        assert allowed[img.tobytes()] == y
        assert img.tobytes() not in held


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


def test_probe_inputs_are_the_most_typical_held_out_image_of_each_class():
    images, labels = digit_images()
    train, test = split_indices()
    probes = DigitsTask().probe_inputs()
    assert len(probes) == 10
    for c, probe in enumerate(probes):
        mean = np.mean([images[i] for i in train if labels[i] == c], axis=0)
        candidates = [i for i in test if labels[i] == c]
        best = min(candidates, key=lambda i: np.sum((images[i] - mean) ** 2))
        np.testing.assert_array_equal(probe, images[best])


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
    assert correct == 10  # typical held-out digits; the model is ≥ 98 % accurate


def test_shipped_digits_equal_scikit_learns_load_digits():
    load_digits = pytest.importorskip("sklearn.datasets").load_digits

    images, labels = load_digits_arrays()
    ref = load_digits()
    np.testing.assert_array_equal(images, ref.images)
    np.testing.assert_array_equal(labels, ref.target)
    assert images.shape == (1797, 8, 8) and labels.dtype == np.int64
