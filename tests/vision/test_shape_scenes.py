"""The shapes scene generator: deterministic, disjoint splits, masks that match what was painted."""

from __future__ import annotations

import numpy as np
import pytest

from attnviz.vision import shape_scenes
from attnviz.vision.shape_scenes import (
    CROSS_ARM, MASK_COVERAGE, SCENE_SIZE, SHAPES, draw_params, make_scene, make_scenes, render_scene,
)

IDS = [0, 1, 2, 3, 4, 17, 1234, 99_999, (1 << 40) + 5]


def test_a_scene_is_a_pure_function_of_its_id():
    a = make_scenes(IDS)
    b = make_scenes(list(reversed(IDS)))  # order and batch company do not matter
    for arr_a, arr_b in zip(a, b):
        np.testing.assert_array_equal(arr_a, arr_b[::-1])
    img, mask, label = make_scene(IDS[3])
    np.testing.assert_array_equal(img, a[0][3])
    np.testing.assert_array_equal(mask, a[1][3])
    assert label == a[2][3]


def test_different_ids_give_different_scenes():
    images, _, _ = make_scenes(range(200))
    flat = images.reshape(200, -1)
    assert len({row.tobytes() for row in flat}) == 200


def test_labels_cycle_through_the_classes_and_types():
    images, masks, labels = make_scenes(range(50))
    assert images.dtype == np.uint8 and images.shape == (50, SCENE_SIZE, SCENE_SIZE, 3)
    assert masks.dtype == bool and masks.shape == (50, SCENE_SIZE, SCENE_SIZE)
    np.testing.assert_array_equal(labels, np.arange(50) % len(SHAPES))


@pytest.mark.parametrize("layout", ["large", "offcentre"])
@pytest.mark.parametrize("scene_id", range(25))
def test_mask_is_exactly_where_the_shape_was_painted(scene_id, layout):
    p = draw_params(scene_id, layout)
    with_shape, cov = render_scene(p, draw_shape=True)
    without, cov2 = render_scene(p, draw_shape=False)
    np.testing.assert_array_equal(cov, cov2)
    changed = np.any(with_shape != without, axis=-1)
    np.testing.assert_array_equal(changed, cov > 0)  # painting touched exactly the covered pixels
    _, mask, _ = make_scene(scene_id, layout)
    np.testing.assert_array_equal(mask, cov >= MASK_COVERAGE)
    # painting is compositing: every pixel is (1 − coverage)·background + coverage·colour, plus the noise
    noise = p["noise"] * p["noise_field"]
    c3 = cov[..., None]
    np.testing.assert_allclose(with_shape - noise, (without - noise) * (1 - c3) + c3 * p["colour"], atol=1e-5)
    assert mask.sum() > 10  # the shape really shows: pixels it covers at least half
    # in mask pixels the shape colour dominates: at least half-way from the background to the colour
    clean, back = (with_shape - noise)[mask], (without - noise)[mask]
    dist_shape = np.linalg.norm(clean - p["colour"], axis=1)
    dist_back = np.linalg.norm(back - p["colour"], axis=1)
    assert np.all(dist_shape <= 0.5 * dist_back + 1e-5)


def _area(name: str) -> float:
    """Area of each shape for circumradius 1, from geometry (independent of the rasteriser)."""
    return {
        "circle": np.pi,
        "square": 1.5 ** 2,
        "triangle": 3 * np.sqrt(3) / 4,
        "cross": 2 * (2 * CROSS_ARM * 2.0) - (2 * CROSS_ARM) ** 2,  # two bars, the centre counted once
        "star": 5 * 1.0 * 0.45 * np.sin(np.pi / 5),  # ten triangles (outer 1, inner 0.45, 36° apart)
    }[name]


@pytest.mark.parametrize("scene_id", range(40))
def test_painted_area_matches_the_geometry(scene_id, monkeypatch):
    # with a rim one pixel wide the coverage is the anti-aliased area; the soft rim of the real scenes
    # adds area at sharp corners (an outward offset gains more there than an inward one loses)
    monkeypatch.setattr(shape_scenes, "SOFT_EDGE", 1.0)
    p = draw_params(scene_id)
    _, cov = render_scene(p)
    want = _area(SHAPES[p["label"]]) * p["radius"] ** 2
    assert cov.sum() == pytest.approx(want, rel=0.04)  # nothing was cut off


def test_the_soft_rim_is_a_ramp_soft_edge_pixels_wide():
    # across a circle's outline (exact distance) the coverage falls linearly from 1 to 0 over SOFT_EDGE pixels
    p = next(q for q in map(draw_params, range(50)) if SHAPES[q["label"]] == "circle")
    _, cov = render_scene(p)
    (cx, cy), r = p["centre"], p["radius"]
    yy, xx = np.mgrid[0:SCENE_SIZE, 0:SCENE_SIZE] + 0.5
    d = np.hypot(xx - cx, yy - cy) - r  # pixels outside the outline
    np.testing.assert_allclose(cov, np.clip(0.5 - d / shape_scenes.SOFT_EDGE, 0, 1), atol=1e-4)
    assert ((cov > 0.05) & (cov < 0.95)).any() and shape_scenes.SOFT_EDGE > 1


def test_the_noise_texture_has_unit_variance_and_a_grain():
    fields = np.stack([draw_params(i)["noise_field"] for i in range(200)])  # (200, S, S, 3)
    assert fields.std() == pytest.approx(1.0, rel=0.03)
    # neighbours are correlated as a Gaussian of NOISE_GRAIN pixels makes them: exp(−1 / (4 σ²))
    corr = np.mean(fields[:, :, 1:] * fields[:, :, :-1])
    assert corr == pytest.approx(np.exp(-1 / (4 * shape_scenes.NOISE_GRAIN**2)), abs=0.03)


@pytest.mark.parametrize("layout", ["large", "offcentre"])
def test_shape_stays_inside_the_image_and_is_lighter(layout):
    lo, hi = shape_scenes.LAYOUTS[layout]
    for sid in range(200):
        p = draw_params(sid, layout)
        r, (cx, cy) = p["radius"], p["centre"]
        assert lo <= r <= hi
        assert r <= cx <= SCENE_SIZE - r and r <= cy <= SCENE_SIZE - r
        assert np.all(p["colour"] > p["base"])  # the shape is lighter than its background's base colour


def test_layouts_are_separate_streams_and_unknown_layouts_are_refused():
    large, off = make_scenes(range(30)), make_scenes(range(30), "offcentre")
    np.testing.assert_array_equal(large[2], off[2])  # same labels (balanced classes) ...
    assert not any(np.array_equal(a, b) for a, b in zip(large[0], off[0]))  # ... different scenes
    # small shapes spread over the whole grid: centres in every quarter of the scene
    quarters = {(int(draw_params(i, "offcentre")["centre"][0] // 16), int(draw_params(i, "offcentre")["centre"][1] // 16))
                for i in range(40)}
    assert len(quarters) == 4
    with pytest.raises(ValueError, match="layout"):
        draw_params(0, "middle")


@pytest.mark.parametrize("label", range(len(SHAPES)))
def test_every_shape_is_left_right_symmetric(label):
    # the shapes task trains on mirrored scenes too: that must not change any shape's class or look
    from attnviz.vision.shape_scenes import shape_distance

    rng = np.random.default_rng(label)
    u, v = rng.uniform(-1.3, 1.3, (2, 5000))
    np.testing.assert_allclose(shape_distance(label, u, v), shape_distance(label, -u, v), atol=1e-9)
    inside = shape_distance(label, u, v) <= 0
    assert 0.1 < inside.mean() < 0.7  # a real shape, not empty or everything
