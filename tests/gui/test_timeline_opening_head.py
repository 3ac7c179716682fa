"""The training replay opens on the head where the story of training shows (issue 36, finding 9), not on
layer 0 · head 0: the head whose attention sharpened most from the first snapshot to the last."""

from __future__ import annotations

import numpy as np

from attnviz.analysis.walkthrough_default import emerged_head
from attnviz.training.snapshots import Snapshots


def _snaps(sharp_at=(1, 2)) -> Snapshots:
    T, H = 4, 3
    flat = np.full((H, T, T), 1 / T, np.float32)
    arrays = {}
    for k in range(3):
        for layer in range(2):
            p = flat.copy()
            if (layer, k) in ((sharp_at[0], 2),):  # only this head, only at the end, points one-hot
                p[sharp_at[1]] = np.eye(T, dtype=np.float32)
            elif layer == 0:  # a head sharp from the start: sharp, but nothing emerged there
                p[0] = np.eye(T, dtype=np.float32)
            arrays[f"s{k}.p0.L{layer}"] = p
    return Snapshots(steps=[0, 50, 100], probes=[{"input": "a b c d", "tokens": list("abcd")}], parts=["self"],
                     arrays=arrays)


def test_the_head_that_sharpened_most_is_found():
    assert emerged_head(_snaps((1, 2))) == (1, 2)
    assert emerged_head(_snaps((0, 1))) == (0, 1)  # negative control: another head, another answer


def test_the_timeline_opens_on_it(qtbot):
    from attnviz.gui.panels.attention_timeline import AttentionTimeline

    tl = AttentionTimeline()
    qtbot.addWidget(tl)
    tl.set_snapshots(_snaps((1, 2)))
    assert (tl.selection.layer, tl.selection.head) == (1, 2)
    assert (tl.layer_box.value(), tl.head_box.value()) == (1, 2)


def test_an_encoder_decoder_replay_opens_on_cross_attention_and_offers_every_part(qtbot):
    """translate's replay showed only the decoder's self-attention (the alignment forms in cross-attention, with
    no way there): it opens on cross-attention at the head that sharpened most there, and the chooser offers
    the three attentions. Control: a decoder-only replay shows no chooser."""
    from attnviz.gui.panels.attention_timeline import AttentionTimeline

    T, S, H = 4, 5, 2
    arrays = {}
    for k in range(3):
        for layer in range(2):
            arrays[f"s{k}.p0.L{layer}"] = np.tril(np.ones((H, T, T), np.float32)) / np.arange(1, T + 1)[:, None]
            cross = np.full((H, T, S), 1 / S, np.float32)
            if (layer, k) == (1, 2):
                cross[1] = np.eye(T, S, dtype=np.float32)  # the alignment, formed at the end in L1 h1
            arrays[f"s{k}.p0.L{layer}.cross"] = cross
            arrays[f"s{k}.p0.enc.L{layer}"] = np.full((H, S, S), 1 / S, np.float32)
    snaps = Snapshots(steps=[0, 50, 100], probes=[{"input": "a b c d e", "tokens": list("wxyz"),
                                                  "src_tokens": list("abcde")}],
                      parts=["self", "cross", "enc"], arrays=arrays)
    tl = AttentionTimeline()
    qtbot.addWidget(tl)
    tl.show()
    tl.set_snapshots(snaps, causal=True)
    assert tl.part_box.isVisible() and tl.part_box.count() == 3
    assert tl.selection.part == "cross" and (tl.selection.layer, tl.selection.head) == (1, 1)
    assert tl.view.trace is not None and tl.view.trace.has_cross
    tl.part_box.setCurrentIndex(tl.part_box.findData("enc"))
    assert tl.selection.part == "enc"
    tl.set_snapshots(_snaps((1, 2)))
    assert not tl.part_box.isVisible() and tl.selection.part == "self"
