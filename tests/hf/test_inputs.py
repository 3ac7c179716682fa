"""Text and images prepared with the model's own tokenizer and image processor; long text truncated visibly."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from attnviz.errors import InputError

from .factories import TEXT, prepare, sample_image, trace_of

LONG = " ".join(["the cat sat on the mat"] * 10)  # 60 words, far beyond the tiny models' 24 positions


@pytest.mark.parametrize("name,closing", [("bert", "[SEP]"), ("roberta", "</s>"), ("gpt2", None)])
def test_long_text_is_refused_or_truncated_with_a_notice(name, closing, hf_loaded):
    loaded = hf_loaded[name]
    assert loaded.config.max_len == 24  # RoBERTa: 26 position rows, counted from padding id + 1
    with pytest.raises(InputError, match=r"tokens but .* takes at most 24; shorten it") as refused:
        prepare(loaded, LONG)
    # the refusal names the way on in both places it is seen (the app cuts by itself)
    assert "--truncate" in str(refused.value) and "truncate=True" in str(refused.value)
    trace, prep = trace_of(loaded, text=LONG, truncate=True)
    assert len(trace.tokens) == 24 and prep.inputs["input_ids"].shape == (1, 24)
    assert "truncated to the model's 24 positions" in trace.meta["notice"]
    if closing:  # the tokenizer's own truncation keeps the closing special token
        assert trace.tokens[-1] == closing


def test_short_text_has_no_notice_and_empty_text_is_refused(hf_loaded):
    loaded = hf_loaded["bert"]
    trace, _ = trace_of(loaded, text=TEXT)
    assert "notice" not in trace.meta
    with pytest.raises(InputError, match="empty"):
        prepare(loaded, "   ")


def test_text_and_image_go_to_the_right_kind_of_model(hf_loaded):
    from attnviz.runtime import prepare_image, prepare_text

    with pytest.raises(InputError, match="vision model"):
        prepare_text(hf_loaded["vit"], TEXT)
    with pytest.raises(InputError, match="text model"):
        prepare_image(hf_loaded["bert"], sample_image())


def _pil_reference(size, resample, crop=None):
    """Independent preprocessing with PIL: resize (then centre crop) and scale to [0, 1]."""
    img = Image.fromarray(sample_image()).resize((size, size), resample)
    arr = np.asarray(img, dtype=np.float64) / 255.0
    if crop:
        off = (size - crop) // 2
        arr = arr[off:off + crop, off:off + crop]
    return arr


@pytest.mark.parametrize("name,reference", [("vit", (16, Image.BILINEAR)), ("deit", (20, Image.BICUBIC, 16))])
def test_images_use_the_processors_size_crop_mean_and_std(name, reference, hf_loaded):
    loaded = hf_loaded[name]
    prep = prepare(loaded)
    expected = _pil_reference(*reference)  # (16, 16, 3) in [0, 1]
    assert prep.image.shape == (16, 16, 3) and prep.image.min() >= 0 and prep.image.max() <= 1
    np.testing.assert_allclose(prep.image, expected, atol=1.5 / 255)
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])  # preprocessor_config.json
    pixels = prep.inputs["pixel_values"][0].numpy().transpose(1, 2, 0)
    np.testing.assert_allclose(pixels, (expected - mean) / std, atol=1.5 / 255 / 0.224)
    assert "notice" not in prep.meta


def test_grey_and_transparent_images_become_rgb(hf_loaded):
    loaded = hf_loaded["vit"]
    grey = sample_image()[:, :, 0]
    rgba = np.dstack([sample_image(), np.full(grey.shape, 128, np.uint8)])
    for img in (grey, rgba):
        prep = prepare(loaded, picture=img)
        assert prep.inputs["pixel_values"].shape == (1, 3, 16, 16)


def test_folder_without_processor_config_uses_defaults_with_a_notice(hf_folders, tmp_path):
    import shutil

    from attnviz.hf.loader import load_hf_model

    folder = shutil.copytree(hf_folders["vit"], tmp_path / "vit")
    (folder / "preprocessor_config.json").unlink()
    loaded = load_hf_model(folder, device="cpu")
    trace, prep = trace_of(loaded)
    assert prep.inputs["pixel_values"].shape == (1, 3, 16, 16)
    assert "no preprocessor_config.json" in trace.meta["notice"] and "mean = std = 0.5" in trace.meta["notice"]


def test_unreadable_image_is_an_input_error(hf_loaded, tmp_path):
    bad = tmp_path / "broken.png"
    bad.write_bytes(b"not a png")
    with pytest.raises(InputError, match="cannot decode image"):
        prepare(hf_loaded["vit"], picture=str(bad))


def test_tokenizer_adapter_gives_the_strip_what_it_reads(hf_loaded):
    bert, gpt2 = hf_loaded["bert"].tokenizer, hf_loaded["gpt2"].tokenizer
    assert bert.kind == "wordpiece" and bert.merges == []
    assert bert.id_of("[CLS]") == 2 and bert.id_of("no-such-token") == bert.hf.unk_token_id
    assert gpt2.kind == "bpe" and gpt2.merges and all(len(m) == 2 for m in gpt2.merges)
    enc = gpt2.encode(TEXT)
    assert gpt2.decode(enc.ids) == TEXT and [gpt2.vocab[i] for i in enc.ids] == enc.tokens
