"""Generated scenes for the ``shapes`` task: one shape on a cluttered background, with its mask.

Each scene is a pure function of its integer id: every random number comes from its own
``numpy.random.Generator`` seeded with (DATA_SEED, id), drawn in a fixed order before anything is
painted, so a scene can be re-rendered without its shape (the mask test does exactly that) and the
training and held-out sets are disjoint simply by using disjoint ids.

A scene: a base colour with a linear gradient, optional stripes, often a straight edge where a second
background colour begins (so straight edges alone do not give the shape away), zero to three soft
Gaussian blobs (distractors with no edges and no shape), the shape (a soft rim from its signed distance, at a random
position and size, upright, lighter than the background's base colour), then a fine noise texture.

Two layouts. "large" (circumradius 7–12 px): every such shape overlaps the central 2×2 of the 4×4 patches, so a
model-free "always the centre patch" pointer hits ~90 % of them. "offcentre": smaller shapes (5–8 px) anywhere in
the scene with a uniform position, reaching into every edge and corner patch; a shape 10 px wide or more still
touches some central patch, but no single patch is touched by more than ~57 % of them (measured on 1 000). A scene id
draws from a separate random stream per layout, so "large" and "offcentre" scenes of one id are unrelated.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SHAPES", "SCENE_SIZE", "DATA_SEED", "LAYOUTS", "draw_params", "render_scenes", "render_scene", "make_scene",
           "make_scenes", "shape_distance"]

SHAPES = ("circle", "square", "triangle", "cross", "star")
SCENE_SIZE = 32
DATA_SEED = 20_240_531  # fixed: the data never depends on a training seed
R_MIN, R_MAX = 7.0, 12.0  # circumradius of a shape in pixels (r 5–9 cost ~4 points of accuracy)
# circumradius range per layout; the "offcentre" shapes are small enough to sit inside edge and corner patches
LAYOUTS = {"large": (R_MIN, R_MAX), "offcentre": (5.0, 8.0)}
# Rotation of a shape, uniform in ±MAX_TILT. Shapes stand upright: a from-scratch ViT on a one-minute
# budget learned rotated shapes far more slowly (measured: any rotation 60 % vs upright 89 % after
# 900 steps; ±15° 85 % vs upright 91 % after 700), while a small CNN learned them all.
MAX_TILT = 0.0
# Colours, per channel: any hue, but the shape is always lighter than the base colour of its background.
# A ViT's patch embedding is linear; with the contrast sign random it needed far more steps (measured
# with 8-pixel patches: 28 % vs 60 % after 500 steps). Distractor blobs are any colour, light ones too.
BASE_RANGE = (0.05, 0.45)
SHAPE_RANGE = (0.55, 1.0)
MASK_COVERAGE = 0.5  # a pixel belongs to the object mask when the shape covers at least half of it

# Spatial frequencies. A ViT's patch filters are built from the data's gradients, so the scenes' spectrum
# shows in them: with 1-pixel anti-aliased rims, stripes down to 3 px and white pixel noise, 19 % of an
# 8×8 patch's non-constant energy lay at DCT frequencies u + v ≥ 4 and the filters' top principal
# components looked like colour noise. Soft rims, stripes of 8 px and up and a noise texture of 2-px grain
# leave 2.5 % there (measured on 1 500 scenes; effect on the filters in tasks/shapes.py): the scenes look
# like a slightly soft photograph, with every shape still clear.
STRIPE_PERIOD = (8.0, 14.0)  # pixels
NOISE_RANGE = (0.01, 0.05)  # standard deviation of the noise texture
SOFT_EDGE = 5.0  # pixels: width of the linear ramp across a shape's outline and the background edge
NOISE_GRAIN = 2.0  # pixels: standard deviation of the Gaussian that smooths the noise texture (0: white noise)
EDGES = True  # the second background region with a straight edge (a module switch, for measuring its effect)
EDGE_SHARE = 0.6  # scenes with such an edge

_STAR_INNER = 0.45  # inner radius of the five-pointed star (outer radius 1)
CROSS_ARM = 0.17  # half-width of the cross's arms (arm length 1): wider crosses were taken for squares (measured:
# arms 0.3, 0.22, 0.17 → 94–95 %, 95–98 %, 98.4 % held-out accuracy)


def _box(u: np.ndarray, v: np.ndarray, hu: float, hv: float) -> np.ndarray:
    """Signed distance to an axis-aligned box with half-sizes (hu, hv)."""
    qu, qv = np.abs(u) - hu, np.abs(v) - hv
    outside = np.hypot(np.maximum(qu, 0), np.maximum(qv, 0))
    return outside + np.minimum(np.maximum(qu, qv), 0)


def shape_distance(label: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Signed distance from points (u, v) to the outline of shape ``label``: negative inside.

    Coordinates and distances are in units of the circumradius, in the shape's own (rotated) frame.
    Exact for the circle, square and cross; for the triangle and star it is the distance to the
    nearest edge line, exact near the edges (which is all the anti-aliasing looks at).
    """
    name = SHAPES[label]
    if name == "circle":
        return np.hypot(u, v) - 1.0
    if name == "square":
        return _box(u, v, 0.75, 0.75)
    if name == "triangle":
        # equilateral, vertices on the unit circle, apex up (v grows downwards like image rows):
        # three edge lines at distance 1/2 from the centre
        return np.maximum.reduce([u * np.cos(a) + v * np.sin(a) - 0.5
                                  for a in (np.pi / 2, -np.pi / 6, 7 * np.pi / 6)])
    if name == "cross":
        return np.minimum(_box(u, v, CROSS_ARM, 1.0), _box(u, v, 1.0, CROSS_ARM))
    if name == "star":
        # one spike points up; fold the angle into one half-spike [0, 36°] measured from a spike,
        # where the edge runs from the outer vertex (1, 0) to the inner vertex at 36°
        rho = np.hypot(u, v)
        phi = np.mod(np.arctan2(v, u) + np.pi / 2, 2 * np.pi / 5)
        phi = np.minimum(phi, 2 * np.pi / 5 - phi)
        px, py = rho * np.cos(phi), rho * np.sin(phi)
        ex, ey = _STAR_INNER * np.cos(np.pi / 5) - 1.0, _STAR_INNER * np.sin(np.pi / 5)  # edge direction
        return (ey * (px - 1.0) - ex * py) / np.hypot(ex, ey)
    raise ValueError(f"unknown shape label {label}")


def draw_params(scene_id: int, layout: str = "large") -> dict:
    """Every random choice of scene ``scene_id`` in ``layout`` (a key of LAYOUTS); its label is
    ``scene_id % len(SHAPES)`` (balanced classes).

    Two draws from the scene's own Generator (uniforms, pixel noise); the uniforms are mapped to
    parameters by position, which is cheap and keeps the scene's stream fixed. The "large" stream is the
    original one (seeded by (DATA_SEED, id)), so its scenes did not change when "offcentre" was added.
    """
    if layout not in LAYOUTS:
        raise ValueError(f"unknown scene layout {layout!r} (known: {', '.join(LAYOUTS)})")
    key = [DATA_SEED, int(scene_id)] if layout == "large" else [DATA_SEED, int(scene_id), 1 + list(LAYOUTS).index(layout)]
    rng = np.random.default_rng(key)
    s = SCENE_SIZE
    u = iter(rng.random(56))

    def take(lo: float, hi: float, n: int | None = None):
        if n is None:
            return lo + (hi - lo) * next(u)
        return lo + (hi - lo) * np.array([next(u) for _ in range(n)])

    p = {
        "label": int(scene_id % len(SHAPES)),
        "base": take(*BASE_RANGE, 3),
        "grad_dir": take(0, 2 * np.pi),
        "grad_amp": take(0.0, 0.15, 3),
        "stripes": bool(next(u) < 0.6),
        "stripe_angle": take(0, np.pi),
        "stripe_period": take(*STRIPE_PERIOD),
        "stripe_amp": take(0.04, 0.14, 3),
        "n_blobs": min(3, int(next(u) * 4)),
        "blob_xy": take(0, s, 6).reshape(3, 2),
        "blob_sigma": take(1.5, 4.0, 3),
        "blob_colour": take(0, 1, 9).reshape(3, 3),
        "blob_alpha": take(0.3, 0.7, 3),
    }
    r = take(*LAYOUTS[layout])
    p["radius"] = r
    p["centre"] = take(r + 0.5, s - r - 0.5, 2)  # (x, y): the whole shape stays inside
    p["angle"] = take(-MAX_TILT, MAX_TILT)
    p["noise"] = take(*NOISE_RANGE)
    p["colour"] = take(*SHAPE_RANGE, 3)
    p["edge"] = bool(EDGES and next(u) < EDGE_SHARE)
    p["edge_angle"] = take(0, 2 * np.pi)
    p["edge_offset"] = take(-0.35, 0.35) * s  # from the centre, so both regions are visible
    p["edge_colour"] = take(*BASE_RANGE, 3)
    p["noise_field"] = _grain(rng.standard_normal((s, s, 3), dtype=np.float32), NOISE_GRAIN)
    return p


def _grain(white: np.ndarray, sigma: float) -> np.ndarray:
    """White noise (S, S, C) smoothed by a Gaussian of ``sigma`` pixels (wrapping around the borders, so
    every pixel gets the same statistics) and rescaled to unit standard deviation per channel."""
    if sigma <= 0:
        return white
    g = _circulant_gaussian(white.shape[0], float(sigma))
    # G·X·Gᵀ per channel: a separable Gaussian, rows then columns; each output pixel is Σ kᵢkⱼ·(unit white
    # noise) with Σ (kᵢkⱼ)² = (Σ k²)², so dividing by Σ k² (built into G) restores unit variance
    rows = np.tensordot(g, white, axes=(1, 0))  # (S, S, C): smoothed down the columns
    return np.tensordot(rows, g, axes=(1, 1)).transpose(0, 2, 1).astype(np.float32)  # and along the rows


def _circulant_gaussian(size: int, sigma: float) -> np.ndarray:
    """(size, size) matrix applying a wrapped 1-D Gaussian of ``sigma`` pixels, scaled so that it maps unit
    white noise to unit variance along one axis (its rows have unit Euclidean norm)."""
    offsets = (np.arange(size)[None, :] - np.arange(size)[:, None] + size // 2) % size - size // 2
    kernel = np.exp(-0.5 * (offsets / sigma) ** 2)
    return (kernel / np.sqrt(np.sum(kernel[0] ** 2))).astype(np.float32)


_CENTRES = np.arange(SCENE_SIZE, dtype=np.float32) + 0.5  # pixel centres along one axis
_YY, _XX = np.meshgrid(_CENTRES, _CENTRES, indexing="ij")  # (S, S) each


def _ramp(d: np.ndarray) -> np.ndarray:
    """Coverage of a pixel whose centre lies ``d`` pixels outside an edge: a linear ramp SOFT_EDGE wide,
    0.5 on the edge itself (SOFT_EDGE 1 is plain anti-aliasing: the area a straight edge cuts from a pixel)."""
    return np.clip(0.5 - d / SOFT_EDGE, 0.0, 1.0)


def _coverage(ps: list[dict]) -> np.ndarray:
    """(N, S, S) fraction of each pixel covered by the shape.

    A soft rim from the signed distance d (in pixels) at the pixel centre: :func:`_ramp`, coverage
    ≥ 0.5 exactly where d ≤ 0. Only a window around each shape is evaluated.
    """
    # every shape, with its soft rim, fits in this window
    n, s = len(ps), SCENE_SIZE
    w = min(s, 2 * int(np.ceil(R_MAX + SOFT_EDGE / 2)) + 3)
    win_centres = np.arange(w, dtype=np.float32) + 0.5  # pixel centres across a window
    centre = np.array([p["centre"] for p in ps], dtype=np.float32)  # (N, 2) as (x, y)
    radius = np.array([p["radius"] for p in ps], dtype=np.float32)
    angle = np.array([p["angle"] for p in ps], dtype=np.float32)
    labels = np.array([p["label"] for p in ps])
    corner = np.clip(np.floor(centre - radius[:, None] - SOFT_EDGE / 2).astype(int) - 1, 0, s - w)  # (N, 2) window origin
    dx = (corner[:, 0, None] + win_centres)[:, None, :] - centre[:, 0, None, None]  # (N, 1, W)
    dy = (corner[:, 1, None] + win_centres)[:, :, None] - centre[:, 1, None, None]  # (N, W, 1)
    c, sn, r = np.cos(angle)[:, None, None], np.sin(angle)[:, None, None], radius[:, None, None]
    u, v = (c * dx + sn * dy) / r, (-sn * dx + c * dy) / r  # (N, W, W) in the shape's own frame
    dist = np.empty(u.shape, dtype=np.float32)
    for lab in np.unique(labels):
        sel = labels == lab
        dist[sel] = shape_distance(int(lab), u[sel], v[sel]) * r[sel]  # in pixels
    window = _ramp(dist)
    cov = np.zeros((n, s, s), dtype=np.float32)
    for i, (x0, y0) in enumerate(corner):
        cov[i, y0 : y0 + w, x0 : x0 + w] = window[i]
    return cov


def render_scenes(ps: list[dict], draw_shape: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(images (N, S, S, 3) float, unclipped; coverage (N, S, S)) for parameters of :func:`draw_params`."""
    def stack(key):
        return np.array([p[key] for p in ps], dtype=np.float32)  # float32: half the memory traffic

    def per_image(a):
        return a[:, None, None, None]  # (N,) → (N, 1, 1, 1)

    half = SCENE_SIZE / 2
    gd = stack("grad_dir")[:, None, None]
    ramp = (np.cos(gd) * (_XX - half) + np.sin(gd) * (_YY - half)) / SCENE_SIZE  # (N, S, S)
    img = stack("base")[:, None, None, :] + ramp[..., None] * stack("grad_amp")[:, None, None, :]  # (N, S, S, 3)
    sa = stack("stripe_angle")[:, None, None]
    phase = (np.cos(sa) * _XX + np.sin(sa) * _YY) * (2 * np.pi / stack("stripe_period")[:, None, None])
    amp = stack("stripe_amp") * stack("stripes")[:, None]  # (N, 3), zero without stripes
    img += np.sin(phase)[..., None] * amp[:, None, None, :]
    # the second region: a half-plane with a soft edge beyond a straight line (coverage like the shape's rim)
    ea = stack("edge_angle")[:, None, None]
    dist = np.cos(ea) * (_XX - half) + np.sin(ea) * (_YY - half) - stack("edge_offset")[:, None, None]
    region = (_ramp(-dist) * stack("edge")[:, None, None])[..., None]  # (N, S, S, 1)
    img = img * (1 - region) + region * (stack("edge_colour")[:, None, None, :] + ramp[..., None] * 0.5)
    # blobs: a Gaussian is separable, the outer product of two 1-D profiles; unused blobs get alpha 0
    xy, sigma = stack("blob_xy"), stack("blob_sigma")  # (N, 3, 2), (N, 3)
    alpha = stack("blob_alpha") * (np.arange(3) < stack("n_blobs")[:, None])  # (N, 3)
    kk = -0.5 / sigma**2
    gx = np.exp(kk[..., None] * (_CENTRES - xy[..., 0:1]) ** 2)  # (N, 3, S)
    gy = np.exp(kk[..., None] * (_CENTRES - xy[..., 1:2]) ** 2)
    colours = stack("blob_colour")  # (N, 3, 3)
    for b in range(3):
        g = (gy[:, b, :, None] * gx[:, b, None, :] * alpha[:, b, None, None])[..., None]  # (N, S, S, 1)
        img = img * (1 - g) + g * colours[:, b, None, None, :]
    cov = _coverage(ps)
    if draw_shape:
        c3 = cov[..., None]
        img = img * (1 - c3) + c3 * stack("colour")[:, None, None, :]
    return img + per_image(stack("noise")) * stack("noise_field"), cov


def render_scene(p: dict, draw_shape: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """(image (S, S, 3) float, unclipped; coverage (S, S)) of one scene."""
    img, cov = render_scenes([p], draw_shape)
    return img[0], cov[0]


def make_scenes(scene_ids, layout: str = "large") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Images (N, S, S, 3) uint8, object masks (N, S, S) bool and labels (N,) for many scene ids."""
    ids = np.asarray(scene_ids, dtype=np.int64).ravel()
    ps = [draw_params(int(sid), layout) for sid in ids]
    if not ps:
        s = SCENE_SIZE
        return np.zeros((0, s, s, 3), np.uint8), np.zeros((0, s, s), bool), np.zeros(0, np.int64)
    img, cov = render_scenes(ps)
    pixels = (np.clip(img, 0.0, 1.0) * 255).round().astype(np.uint8)
    return pixels, cov >= MASK_COVERAGE, np.array([p["label"] for p in ps], dtype=np.int64)


def make_scene(scene_id: int, layout: str = "large") -> tuple[np.ndarray, np.ndarray, int]:
    """(image uint8 (S, S, 3), object mask bool (S, S), label) of one scene."""
    images, masks, labels = make_scenes([scene_id], layout)
    return images[0], masks[0], int(labels[0])
