"""``shapes``: a ViT that names the one shape in a cluttered 32×32 scene — and points at it.

Scenes come from :mod:`attnviz.vision.shape_scenes` (a pure function of the scene id, object mask
included). Training ids are drawn from [0, TEST_OFFSET), held-out ids are TEST_OFFSET + i, so the two
sets are disjoint by construction. Besides accuracy the held-out metrics include the pointing game:
the share of held-out scenes whose CLS attention-rollout maximum lands on a patch of the object.
"""

from __future__ import annotations

import numpy as np
import torch

from attnviz.models.config import ModelConfig
from attnviz.tasks.base import Batch, Task
from attnviz.vision.preprocess import normalise
from attnviz.vision.shape_scenes import SCENE_SIZE, SHAPES, make_scene, make_scenes

MAX_PROBE_SCENES = 10_000  # the probe scenes are found within the first few dozen; the bound ends any search

__all__ = ["ShapesTask", "TEST_OFFSET", "scene_ids", "pointing_chance"]

TEST_OFFSET = 1 << 40  # held-out scene ids start here; training ids lie below
MEAN, STD = [0.35, 0.35, 0.35], [0.21, 0.21, 0.21]  # of generated scenes (measured: 0.350–0.353, 0.209–0.215)


def pointing_chance(masks: np.ndarray, patch: int) -> float:
    """The pointing game's chance level: the mean share of patches that overlap the object, i.e. how often
    a patch picked uniformly at random would count as a hit."""
    from attnviz.tasks.pointing import patch_cover

    return float(patch_cover(masks, patch).mean())


def scene_ids(split: str, indices) -> np.ndarray:
    """Scene ids of ``indices`` in the "train" or "test" id range."""
    idx = np.asarray(indices, dtype=np.int64)
    if np.any(idx < 0) or np.any(idx >= TEST_OFFSET):
        raise ValueError("scene indices must lie in [0, TEST_OFFSET)")
    return idx if split == "train" else idx + TEST_OFFSET


class ShapesTask(Task):
    name = "shapes"
    kind = "vit"
    description = ("Circle, square, triangle, cross or star on a cluttered 32×32 background: colours, stripes, "
                   "straight edges, blobs, a noise texture, all slightly soft (a 4×4 grid of 8-pixel patches)")
    # Patch filters that look like the ViT paper's smooth basis functions (measured, seed 0). Smoothness = mean
    # share of energy at DCT frequencies u + v < 4 of the top 16 filter components (analysis.filter_smoothness;
    # white noise 16 %). The old model (3 000 steps, d 32, sharp scenes: 1-px rims, stripes ≥ 3 px, white
    # pixel noise, random init): 98.1 %, smoothness 50 %, colour noise to the eye. 1 000-step comparisons,
    # accuracy / smoothness: that baseline 91.8 / 51 %; filters started at zero 83.2 / 64 % (random initial
    # values linger); SGD+momentum for the filters only, lr ×1 / ×10 / ×100: 78 / 60, 61 / 70, 34 / 68 %
    # (zero start, ×30: 47 / 70); Adam lr ×0.1 for the filters 87 / 20 % (the initial noise stays); no pixel
    # noise 94.5 / 52 %; d 64 96.4 / 59 %; whole scene blurred σ 0.7 / 1 / 1.5 px + zero start 88 / 76,
    # 85 / 80, 86.5 / 86 %. The scenes' spectrum decides more than the optimiser: soft rims 5 px wide,
    # stripes ≥ 8 px, a noise texture of 2-px grain (shape_scenes) and zero-started filters: d 32 87.3 / 84 %,
    # d 48 92.4 / 83 %. 3 000 steps, d 48: 98.3 %, pointing game 99.7 %, smoothness 76 % (top 4: 85 %);
    # with patch-filter weight decay 3 (decay_by_name = {"embed.proj.weight": 3.0}): 97.1 % / 82 %, too close
    # to the 97 % target. The model bundled before off-centre scenes (STD re-measured 0.23 → 0.21): 99.3 %, pointing
    # game 98.1 % (chance 44.8 %), smoothness 76 % (top 4: 75 %), 76 s CPU. 4-pixel patches (an older
    # model) gave colour noise too.
    steps = 3000
    batch_size = 32
    lr = 5e-3
    warmup = 60
    weight_decay = 0.3
    labels = list(SHAPES)
    targets = {"accuracy": (">=", 0.97), "pointing_game": (">=", 0.90)}
    n_eval = 1000  # held-out scenes in the stored metrics
    n_train = 8192  # training scenes (ids 0 … n_train-1), each also seen mirrored
    # and as many "offcentre" scenes (small shapes anywhere, ids 0 … n_train-1 of that layout's own stream): a
    # model trained on "large" scenes alone named only 83.7 % of off-centre shapes (pointing 98.8 % there).
    # The small shapes' edges made the patch filters noisier: measured, seed 0, 3 000 steps, accuracy large /
    # off-centre, filter smoothness (claim: ≥ 70 %): share 0.5 without filter decay 99.4 / 97.1 %, 68 %; share 0.3
    # 98.4 / 95.2 %, 70 %; share 0.5 with patch-filter weight decay 1 / 1.5 / 2 / 3: 98.7 / 96.5 % 71 %, 98.6 /
    # 95.4 % 75 %, 98.3 / 93.8 % 75 %, 97.9 / 91.9 % 74 %; decay 2 for 4 000 steps 97.2 / 92.7 % 77 %.
    # Bundled: share 0.5, decay 1.5, 3 000 steps (32 s CPU).
    offcentre_share = 0.5
    decay_by_name = {"embed.proj.weight": 1.5}

    def __init__(self, seed: int = 0):
        super().__init__(seed)
        self._pool: tuple[np.ndarray, np.ndarray] | None = None

    def model_config(self, **overrides) -> ModelConfig:
        # d 48, 3 layers, 2 heads: 48 filters learned the soft scenes better than 32 on the same steps (1 000
        # steps: 92.4 vs 87.3 %) for ~10 % more time per step; a 64 × 4-layer model costs ~2.5× per step;
        # 4 heads cost 30 % more per step than 2 for the same accuracy; 1 500 steps of 32 scenes beat 750 of 64
        cfg = dict(kind="vit", image_size=SCENE_SIZE, patch_size=8, in_chans=3, d_model=48, n_heads=2,
                   n_layers=3, mlp_ratio=2.0, norm="pre", pos="learned", head="classify", pool="cls",
                   n_classes=len(SHAPES), dropout=0.0)
        cfg.update(overrides)
        return ModelConfig(**cfg)

    def prepare_model(self, model) -> None:
        """Start the patch filters at zero: every filter is then built only from the data's gradients (a sum
        of image patches), so random initial values (white noise) never linger in the filters' components."""
        torch.nn.init.zeros_(model.embed.proj.weight)

    @staticmethod
    def _tensor(images_u8: np.ndarray) -> torch.Tensor:
        return normalise(images_u8.astype(np.float32) / 255.0, MEAN, STD)  # (N, 3, S, S)

    def train_pool(self) -> tuple[np.ndarray, np.ndarray]:
        """Images and labels of training scenes 0 … n_train-1 ("large"), then the "offcentre" ones, rendered once
        per task object.

        Rendering a batch costs about half a training step; a pool rendered once (about 4 s),
        seen mirrored half the time, gives twice n_train distinct images for less.
        """
        if self._pool is None:
            n_off = int(round(self.n_train * self.offcentre_share / (1 - self.offcentre_share)))
            chunks = [make_scenes(scene_ids("train", np.arange(a, min(a + 1024, n))), layout)
                      for layout, n in (("large", self.n_train), ("offcentre", n_off)) for a in range(0, n, 1024)]
            self._pool = (np.concatenate([c[0] for c in chunks]), np.concatenate([c[2] for c in chunks]))
        return self._pool

    def sample_batch(self, split: str, batch_size: int, rng: np.random.Generator) -> Batch:
        if split == "train":
            pool, pool_labels = self.train_pool()
            idx = rng.integers(0, len(pool), size=batch_size)
            # every shape is symmetric under a left-right mirror and tilts are symmetric: same distribution
            mirror = rng.random(batch_size) < 0.5
            images = np.where(mirror[:, None, None, None], pool[idx, :, ::-1], pool[idx])
            labels = pool_labels[idx]
        else:
            # held-out scenes are drawn from 2⁴⁰ ids, disjoint from the pool's
            images, _, labels = make_scenes(scene_ids(split, rng.integers(0, TEST_OFFSET, size=batch_size)))
        return Batch({"images": self._tensor(images)}, torch.from_numpy(labels), batch_size)

    def held_out(self, seed: int = 12345, n: int | None = None, layout: str = "large"):
        """Images, masks and labels of ``n`` (default ``n_eval``) held-out scenes of ``layout``; ``seed`` picks
        which (seeds s and s + 1 give disjoint scenes)."""
        n = self.n_eval if n is None else n
        return make_scenes(scene_ids("test", seed * n + np.arange(n)), layout)

    @torch.no_grad()
    def evaluate(self, loaded, seed: int = 12345) -> dict:
        """Accuracy and pointing game on ``n_eval`` held-out scenes chosen by ``seed``, then the same on as many
        "offcentre" scenes (small shapes anywhere), with the baselines rollout must beat: a random patch, raw
        last-layer [CLS] attention and the best fixed patch. The fixed patch needs no model: its figure is the
        one shipped in ``assets/data/shape_baselines.json`` (:mod:`attnviz.tasks.shape_baselines`, 4,000 scenes
        per layout), the same whatever ``seed``, so the model list and the lesson state one number."""
        from attnviz.tasks.pointing import classify_and_point, pointing_baselines
        from attnviz.tasks.shape_baselines import fixed_patch

        out, patch = {}, loaded.config.patch_size
        for layout, pre in (("large", ""), ("offcentre", "offcentre_")):
            images, masks, labels = self.held_out(seed, layout=layout)
            preds, peaks, raw = classify_and_point(loaded.model, self._tensor(images).to(loaded.device), with_raw=True)
            base = pointing_baselines(peaks, raw, masks, patch)
            base["fixed"], base["fixed_patch"] = fixed_patch(layout, patch)
            acc = float((preds == labels).mean())
            if not pre:  # the first four keys are the ones bundled models have always stored
                out.update(accuracy=acc, pointing_game=base["rollout"], pointing_chance=base["chance"],
                           n_test=int(len(labels)), pointing_raw=base["raw"], pointing_fixed=base["fixed"])
            else:
                out.update(offcentre_accuracy=acc, offcentre_rollout=base["rollout"], offcentre_raw=base["raw"],
                           offcentre_fixed=base["fixed"], offcentre_fixed_patch=base["fixed_patch"],
                           offcentre_chance=base["chance"], offcentre_n=int(len(labels)))
        return out

    def probe_mask(self, label: int, layout: str = "large") -> np.ndarray:
        """The object mask of the probe scene (and bundled sample image) of class ``label`` in ``layout``."""
        return self._probe(label, layout)[1]

    @staticmethod
    def _probe(label: int, layout: str = "large") -> tuple[np.ndarray, np.ndarray]:
        """(image, mask) of the first held-out scene of class ``label``; in "offcentre" the first whose shape
        reaches a corner patch of the 4×4 grid, so the sample shows rollout away from the centre."""
        from attnviz.errors import InputError

        # label and layout may come from a shared lesson: checked, and the search bounded, never endless
        if isinstance(label, bool) or not isinstance(label, (int, np.integer)) or not 0 <= label < len(SHAPES):
            raise InputError(f"no shape class {label!r}: the shapes model has classes 0..{len(SHAPES) - 1}")
        if layout not in ("large", "offcentre"):
            raise InputError(f"no scene layout {layout!r}: large or offcentre")
        for i in range(MAX_PROBE_SCENES):
            image, mask, lab = make_scene(int(scene_ids("test", [i])[0]), layout)
            corner = mask[:8, :8].any() or mask[:8, -8:].any() or mask[-8:, :8].any() or mask[-8:, -8:].any()
            if lab == label and (layout == "large" or corner):
                return image, mask
        raise InputError(f"no held-out {layout} scene of class {label} among the first {MAX_PROBE_SCENES:,}")

    def offcentre_probe_inputs(self) -> list:
        """One held-out "offcentre" scene of each shape, reaching a corner patch, as uint8 (32, 32, 3) arrays."""
        return [self._probe(c, "offcentre")[0] for c in range(len(SHAPES))]

    def probe_inputs(self) -> list:
        """One held-out scene of each shape, as uint8 (32, 32, 3) arrays."""
        out = {}
        for i in range(MAX_PROBE_SCENES):
            if len(out) == len(SHAPES):
                break
            image, _, label = make_scene(int(scene_ids("test", [i])[0]))
            out.setdefault(label, image)
        return [out[c] for c in range(len(SHAPES))]

    def example_input(self):
        from attnviz.vision.samples import sample_path

        return sample_path("shapes-star") or self.probe_inputs()[SHAPES.index("star")]

    def info(self) -> dict:
        return {"labels": self.labels, "preprocess": {"mean": MEAN, "std": STD}}
