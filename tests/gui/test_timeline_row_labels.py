"""The Training tab's replay names an encoder–decoder's cross-attention rows as the Attention tab does (issue
36): by the token written ("→ x" … "(end): nothing written", that last row washed), not by the token read
("[BOS]" … "[EOS]"). Control: its decoder self-attention rows stay named by the token read, unwashed."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402

from attnviz.analysis.decoder_positions import END_ROW, row_labels  # noqa: E402
from attnviz.training.snapshots import Snapshots  # noqa: E402

TOKENS = ["[BOS]", "lo", "ve", "[EOS]"]


def _snaps() -> Snapshots:
    T, S, H = len(TOKENS), 3, 2
    arrays = {}
    for k in range(2):
        arrays[f"s{k}.p0.L0"] = np.tril(np.ones((H, T, T), np.float32)) / np.arange(1, T + 1)[:, None]
        arrays[f"s{k}.p0.L0.cross"] = np.full((H, T, S), 1 / S, np.float32)
        arrays[f"s{k}.p0.enc.L0"] = np.full((H, S, S), 1 / S, np.float32)
    return Snapshots(steps=[0, 50], probes=[{"input": "I see it", "tokens": TOKENS, "src_tokens": ["I", "see", "it"]}],
                     parts=["self", "cross", "enc"], arrays=arrays)


def test_replay_rows_named_by_the_token_written_and_the_end_row_washed(qtbot):
    from attnviz.gui.panels.attention_timeline import AttentionTimeline, snapshot_trace

    trace = snapshot_trace(_snaps(), 1, 0, causal=True)
    assert row_labels(trace, "cross") == ["→ lo", "→ ve", "→ [EOS]", END_ROW]
    tl = AttentionTimeline()
    qtbot.addWidget(tl)
    tl.show()
    tl.set_snapshots(_snaps(), causal=True)
    assert tl.selection.part == "cross"
    heatmap = tl.view.heatmap
    assert list(tl.view.res.query_tokens) == ["→ lo", "→ ve", "→ [EOS]", END_ROW]
    assert list(heatmap.left.labels) == ["→ lo", "→ ve", "→ [EOS]", END_ROW]  # what the map draws
    assert heatmap.veiled_row == len(TOKENS) - 1 and heatmap.veil.isVisible()
    tl.part_box.setCurrentIndex(tl.part_box.findData("self"))  # the control: the decoder reading itself
    assert tl.selection.part == "self"
    assert list(tl.view.res.query_tokens) == TOKENS and heatmap.veiled_row is None
