"""Image preprocessing: every PIL mode and array type the user may give, and files that must be refused."""

from __future__ import annotations

import struct
import zlib

import numpy as np
import pytest
import torch
from PIL import Image

from attnviz.errors import InputError
from attnviz.models.config import ModelConfig
from attnviz.vision.preprocess import MAX_PIXELS, load_image, normalise, patch_labels, preprocess_image

RGB = ModelConfig(kind="vit", image_size=8, patch_size=4, in_chans=3, n_classes=2)
GREY = ModelConfig(kind="vit", image_size=8, patch_size=4, in_chans=1, n_classes=2)
PLAIN = {"mean": [0.0, 0.0, 0.0], "std": [1.0, 1.0, 1.0]}  # tensor == shown: checks the pixels directly
PLAIN1 = {"mean": [0.0], "std": [1.0]}


def shown(image, cfg=RGB, prep=None):
    tensor, arr = preprocess_image(image, cfg, prep or (PLAIN if cfg.in_chans == 3 else PLAIN1))
    assert tensor.shape == (1, cfg.in_chans, cfg.image_size, cfg.image_size)
    assert arr.shape == (cfg.image_size, cfg.image_size, cfg.in_chans)
    assert tensor.dtype == torch.float32 and arr.min() >= 0 and arr.max() <= 1
    np.testing.assert_allclose(tensor[0].numpy().transpose(1, 2, 0), arr, atol=1e-6)
    return arr


def test_normalise_matches_numpy():
    rng = np.random.default_rng(0)
    px = rng.random((2, 4, 4, 3)).astype(np.float32)
    mean, std = [0.1, 0.2, 0.3], [0.5, 0.25, 2.0]
    got = normalise(px, mean, std).numpy()
    want = np.stack([(px[..., c] - mean[c]) / std[c] for c in range(3)], axis=1)  # (N, C, S, S)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert normalise(px[0], mean, std).shape == (1, 3, 4, 4)


def test_grey_image_to_rgb_model_repeats_the_channel():
    g = np.arange(64, dtype=np.uint8).reshape(8, 8) * 3
    arr = shown(Image.fromarray(g, "L"))
    for c in range(3):
        np.testing.assert_allclose(arr[..., c], g / 255.0, atol=1e-6)


def test_rgb_image_to_grey_model_uses_luminance():
    rgb = np.zeros((8, 8, 3), dtype=np.uint8)
    rgb[..., 1] = 200  # pure green: ITU-R 601 luma 0.587
    arr = shown(rgb, GREY)
    np.testing.assert_allclose(arr, 0.587 * 200 / 255, atol=1.5 / 255)


@pytest.mark.parametrize("matte, expected", [((1.0, 1.0, 1.0), 1.0), ((0.0, 0.0, 0.0), 0.0)])
def test_rgba_is_composited_onto_the_matte(matte, expected):
    rgba = np.zeros((8, 8, 4), dtype=np.uint8)
    rgba[..., 0] = 255  # red everywhere ...
    rgba[:, :4, 3] = 255  # ... but opaque only on the left half
    arr = shown(rgba, prep={**PLAIN, "matte": list(matte)})
    np.testing.assert_allclose(arr[:, :4], np.broadcast_to([1.0, 0.0, 0.0], (8, 4, 3)), atol=1e-6)
    np.testing.assert_allclose(arr[:, 4:], expected, atol=1e-6)


def test_half_transparent_pixel_blends_with_the_matte():
    rgba = np.zeros((8, 8, 4), dtype=np.uint8)
    rgba[..., 3] = 128  # black at ~50 % over white
    arr = shown(rgba)
    np.testing.assert_allclose(arr, 1 - 128 / 255, atol=1.5 / 255)


def test_grey_with_alpha_on_grey_model():
    la = np.zeros((8, 8, 2), dtype=np.uint8)
    la[..., 0] = 255
    la[:4, :, 1] = 255  # top half opaque white, bottom transparent
    arr = shown(la, GREY, {**PLAIN1, "matte": [0.0]})
    assert np.all(arr[:4] == 1.0) and np.all(arr[4:] == 0.0)


def test_palette_image_with_transparent_index(tmp_path):
    img = Image.new("P", (8, 8), 0)
    img.putpalette([255, 0, 0, 0, 0, 255] + [0] * 762)  # index 0 red, 1 blue
    img.paste(1, (0, 0, 8, 4))  # top half blue
    path = tmp_path / "pal.png"
    img.save(path, transparency=0)  # red is the transparent colour
    arr = shown(path)
    np.testing.assert_allclose(arr[:4], np.broadcast_to([0.0, 0.0, 1.0], (4, 8, 3)), atol=1e-6)
    np.testing.assert_allclose(arr[4:], 1.0, atol=1e-6)  # transparent → white matte


def test_palette_image_without_transparency():
    img = Image.new("P", (8, 8), 1)
    img.putpalette([0, 0, 0, 10, 200, 30] + [0] * 762)
    arr = shown(img)
    np.testing.assert_allclose(arr, np.broadcast_to(np.array([10, 200, 30]) / 255, (8, 8, 3)), atol=1e-6)


def test_16_bit_png_is_scaled_not_clipped(tmp_path):
    # PIL's own I;16 → L conversion clips at 255, which would turn mid-grey white
    data = np.full((8, 8), 32768, dtype=np.uint16)
    data[:, :4] = 65535
    path = tmp_path / "deep.png"
    Image.fromarray(data).save(path)
    with Image.open(path) as img:
        assert img.mode.startswith("I")
    arr = shown(path, GREY)
    np.testing.assert_allclose(arr[:, :4], 1.0, atol=1e-6)
    np.testing.assert_allclose(arr[:, 4:], 32768 / 65535, atol=1 / 255)


def test_integer_and_bool_and_float_arrays():
    u16 = np.full((8, 8), 16384, dtype=np.uint16)
    np.testing.assert_allclose(shown(u16, GREY), 16384 / 65535, atol=1 / 255)
    b = np.zeros((8, 8), dtype=bool)
    b[2] = True
    assert np.array_equal(shown(b, GREY)[..., 0], b.astype(np.float32))
    f = np.full((8, 8, 3), 0.25)
    np.testing.assert_allclose(shown(f), 0.25, atol=1 / 255)
    np.testing.assert_allclose(shown(np.full((8, 8, 1), 7.0), GREY), 1.0)  # floats clip to [0, 1]


def test_float_and_bilevel_and_cmyk_images():
    fimg = Image.fromarray(np.full((8, 8), 0.5, dtype=np.float32), "F")
    np.testing.assert_allclose(shown(fimg, GREY), 0.5, atol=1 / 255)
    one = Image.new("1", (8, 8), 1)
    np.testing.assert_allclose(shown(one, GREY), 1.0)
    cmyk = Image.new("CMYK", (8, 8), (0, 255, 255, 0))  # no cyan, full magenta + yellow: red
    np.testing.assert_allclose(shown(cmyk), np.broadcast_to([1.0, 0.0, 0.0], (8, 8, 3)), atol=1e-6)


def test_non_square_image_is_centre_cropped_not_squashed():
    wide = np.zeros((8, 24), dtype=np.uint8)
    wide[:, 8:16] = 255  # the centre square is white, the sides black
    np.testing.assert_allclose(shown(wide, GREY), 1.0)


def test_large_image_is_downscaled_with_the_mean_kept():
    rng = np.random.default_rng(1)
    big = rng.integers(0, 256, size=(64, 64, 3), dtype=np.uint8)
    arr = shown(big)
    np.testing.assert_allclose(arr.mean(axis=(0, 1)), big.mean(axis=(0, 1)) / 255, atol=0.02)


def test_light_background_is_inverted_for_dark_background_models():
    img = np.full((8, 8), 255, dtype=np.uint8)
    img[2:6, 3:5] = 0  # black ink on white paper
    arr = shown(img, GREY, {**PLAIN1, "background": "dark"})
    assert np.all(arr[2:6, 3:5] == 1.0) and arr.sum() == 8  # ink bright, paper black
    dark = 255 - img
    np.testing.assert_array_equal(shown(dark, GREY, {**PLAIN1, "background": "dark"}), arr)


def test_exif_orientation_is_applied(tmp_path):
    img = Image.new("RGB", (16, 8), (0, 0, 0))
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90° clockwise to display"
    path = tmp_path / "phone.jpg"
    img.save(path, exif=exif)
    assert load_image(path).size == (8, 16)


def test_patch_labels():
    assert patch_labels((2, 3)) == ["[CLS]", "0,0", "0,1", "0,2", "1,0", "1,1", "1,2"]


# --- inputs that must be refused with an InputError ---------------------------------------------

def _png_header(width: int, height: int) -> bytes:
    """A PNG signature and IHDR claiming the given size, with no pixel data."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IEND", b"")


@pytest.mark.parametrize("side", [9_000, 10_000, 100_000])  # ours; PIL's warning band; PIL's error band
def test_enormous_image_is_refused(tmp_path, side):
    assert side * side > MAX_PIXELS
    path = tmp_path / "bomb.png"
    path.write_bytes(_png_header(side, side))
    with pytest.raises(InputError, match="too large"):
        preprocess_image(path, RGB)


def test_enormous_array_is_refused():
    huge = np.broadcast_to(np.uint8(0), (9_000, 9_000))  # no memory behind it
    with pytest.raises(InputError, match="too large"):
        preprocess_image(huge, RGB)


@pytest.mark.parametrize("content", [b"", b"not an image at all", _png_header(8, 8)[:20]])
def test_undecodable_file_is_refused(tmp_path, content):
    path = tmp_path / "bad.png"
    path.write_bytes(content)
    with pytest.raises(InputError, match="cannot decode"):
        preprocess_image(path, RGB)


def test_truncated_png_is_refused(tmp_path):
    good = tmp_path / "good.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(good)
    bad = tmp_path / "cut.png"
    bad.write_bytes(good.read_bytes()[:300])
    with pytest.raises(InputError, match="cannot decode"):
        preprocess_image(bad, RGB)


def test_missing_file_and_directory_are_refused(tmp_path):
    with pytest.raises(InputError, match="not found"):
        preprocess_image(tmp_path / "nope.png", RGB)
    with pytest.raises(InputError, match="directory"):
        preprocess_image(tmp_path, RGB)
    with pytest.raises(InputError, match="cannot read an image"):
        preprocess_image(3.5, RGB)


@pytest.mark.parametrize("bad, message", [
    (np.zeros((8,), dtype=np.uint8), "must be"),
    (np.zeros((8, 8, 5), dtype=np.uint8), "must be"),
    (np.zeros((0, 8), dtype=np.uint8), "empty"),
    (np.full((8, 8), np.nan), "NaN"),
    (np.array([["a"] * 8] * 8), "numbers"),
])
def test_bad_arrays_are_refused(bad, message):
    with pytest.raises(InputError, match=message):
        preprocess_image(bad, RGB)
