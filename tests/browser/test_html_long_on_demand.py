"""The long-input head map page from a real on-demand capture (issue 34 Deliver 4), in Chromium: a random GPT-2
rigged so that layer 0 head 0 puts ~all its weight on one key from that key on, captured as the CLI captures a
Hugging Face model (q, k and each row's log-sum-exp, no (H, T, T) map), written max-pooled. The rigged column is
drawn at the colour of 1.0 in every pooled row, and the stored values equal the model's own eager attention
(``output_attentions``, an independent computation) max-pooled here in NumPy, within the page's stated bound."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.slow

T, J, D, HEADS = 1000, 617, 64, 8


@pytest.fixture(scope="module")
def rigged():
    """(model, input ids): key J of layer 0 head 0 takes ~all the weight of every query from J on."""
    import torch
    import transformers as tf

    torch.manual_seed(0)
    model = tf.GPT2LMHeadModel(tf.GPT2Config(vocab_size=500, n_embd=D, n_layer=2, n_head=HEADS, n_positions=T,
                                             bos_token_id=0, eos_token_id=0)).eval()
    dh = D // HEADS
    with torch.no_grad():
        attn = model.transformer.h[0].attn.c_attn  # Conv1D: x @ W (D, 3D) + b, [q | k | v], head 0 first
        attn.weight[:, :dh] = 0
        attn.bias[:dh] = 0
        attn.bias[0] = 6.0  # head 0's q: a constant
        attn.weight[:, D:D + dh] = 0
        attn.bias[D:D + dh] = 0
        attn.weight[0, D] = 5.0  # head 0's k: dimension 0 of the normalised input
        model.transformer.wpe.weight[J, 0] += 50.0  # large at position J only
    return model, torch.randint(0, 500, (1, T), generator=torch.Generator().manual_seed(1))


@pytest.fixture(scope="module")
def lut():
    from attnviz.figures.registry import export_style
    from attnviz.gui.style import colour_lut

    return colour_lut(export_style(colormap="viridis"))


def _eager_probs(model, ids, layer: int):
    """(H, T, T) probabilities from transformers' eager attention: the truth, computed without attnviz."""
    import torch

    model.config._attn_implementation = "eager"
    try:
        with torch.no_grad():
            out = model(input_ids=ids, output_attentions=True)
    finally:
        model.config._attn_implementation = "sdpa"
    return out.attentions[layer][0].double().numpy()


class _Page:
    """The page opened in a context of its own window size, its script errors recorded, nothing fetched."""

    def __init__(self, page, path):
        self.page, self.errors = page, []
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.route(lambda u: not u.startswith("file:") and not u.startswith("about:"), lambda route: route.abort())
        page.goto(path.as_uri())
        page.wait_for_function("window.attnviz && window.attnviz.painted", timeout=30000)


def _pool(p, rq: int, rk: int) -> np.ndarray:
    """(H, T, T) → (H, ⌈T/rq⌉, ⌈T/rk⌉): each block's largest weight."""
    H, tq, tk = p.shape
    q, k = -(-tq // rq), -(-tk // rk)
    padded = np.full((H, q * rq, k * rk), -1.0)
    padded[:, :tq, :tk] = p
    return padded.reshape(H, q, rq, k, rk).max(axis=(2, 4))


@pytest.mark.parametrize("size", [(1920, 1080), (1280, 720)])
def test_a_rigged_column_and_the_stored_values_of_an_on_demand_page(context_with, tmp_path, rigged, lut, size):
    """At both window sizes: the map is as large as the window lets it be (larger than map_max on 1,920×1,080,
    map_max where the window is smaller), and still max-pooled: the column of ~1.0 in every pooled row."""
    from attnviz.export.html_layout import LAYOUT
    from attnviz.export.html_page import html_page
    from attnviz.hf.capture import capture_hf

    model, ids = rigged
    trace = capture_hf(model, {"input_ids": ids}, [f"t{i}" for i in range(T)])
    assert not any(k.endswith(".probs") for k in trace.arrays)  # on demand: no (H, T, T) kept
    page, meta = html_page(trace, lut, view="head-map", max_bytes=2**20)  # 1 MB: pooled
    assert meta["pooled"]
    path = tmp_path / "long.html"
    path.write_text(page, encoding="utf-8")
    o = _Page(context_with(viewport={"width": size[0], "height": size[1]}).new_page(), path)
    G = o.page.evaluate("window.attnviz.geometry()")
    rq, rk, dq, dk = G["rq"], G["rk"], G["dq"], G["dk"]
    assert rq > 1 and rk > 1
    side = G["cell"] * max(dq, dk)
    box = o.page.evaluate("(() => { const r = document.getElementById('map').getBoundingClientRect();"
                          " return [r.left + window.scrollX, r.top + window.scrollY]; })()")
    room = min(size[0] - box[0] - LAYOUT["map_left"] - LAYOUT["map_right"] - 24,
               size[1] - box[1] - LAYOUT["map_top"] - LAYOUT["map_bottom"])
    if room > LAYOUT["map_max"]:  # 1,920×1,080: the map takes the window's room (it was capped at 640 px)
        assert LAYOUT["map_max"] < side <= room and side > room - 2, (side, room)
    else:  # 1,280×720: no more room than map_max; the map keeps map_max
        assert side == pytest.approx(LAYOUT["map_max"]), (side, room)

    truth = _pool(_eager_probs(model, ids, 0), rq, rk)  # (H, dq, dk)
    assert truth[0, J // rq + 1:, J // rk].min() > 0.999  # the rig works: a column of ~1.0
    worst = {}
    for head in (0, 1, 5):
        stored = np.array(o.page.evaluate(
            f"Array.from({{length: {dq * dk}}}, (_, n) => window.attnviz.value(0, {head}, Math.floor(n / {dk}), n % {dk}))"),
            float).reshape(dq, dk)
        for name, want in (("same head", truth[head]), ("next head", truth[(head + 1) % HEADS])):
            keep = want >= 0  # blocks wholly above the diagonal hold no weight either way
            bound = want.max(axis=1, keepdims=True) / 510  # the page's rule: 1/510 of the row's largest
            ratio = (np.abs(stored - want) / bound)[keep].max()
            worst[name] = max(worst.get(name, 0.0), ratio)
    assert worst["same head"] <= 1 + 1e-3, worst  # float32 capture against float64 truth: at the bound's edge
    assert worst["next head"] > 10, worst  # control: another head's truth is far outside the bound

    one, zero = [list(map(int, lut[i][:3])) for i in (254, 0)]
    col = J // rk
    colours = o.page.evaluate(f"""(() => {{
        const G = window.attnviz.geometry(), cv = document.getElementById('map'), d = window.devicePixelRatio;
        const ctx = cv.getContext('2d'), out = [];
        for (const dc of [0, 4]) for (let i = {J // rq + 1}; i < G.dq; i++) {{
            const x = Math.floor((G.left + ({col} + dc + 0.5) * G.cell) * d), y = Math.floor((G.top + (i + 0.5) * G.cell) * d);
            out.push([dc, ...ctx.getImageData(x, y, 1, 1).data.slice(0, 3)]);
        }}
        return out; }})()""")
    assert [rgb for dc, *rgb in colours if dc == 0] == [one] * (len(colours) // 2)  # every pooled row from J on
    assert [rgb for dc, *rgb in colours if dc == 4] != [one] * (len(colours) // 2)  # control: 4 blocks on, not 1.0
    assert o.errors == []  # no script error
