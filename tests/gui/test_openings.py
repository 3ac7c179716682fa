"""What a figure opens on, and what its labels say: the vision walkthrough on [CLS] (the token the classifier
reads), a learned positional table not called sin/cos."""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from attnviz.bench.traces import sample_trace  # noqa: E402
from attnviz.selection import Selection  # noqa: E402


def test_vision_walkthrough_opens_on_cls_and_text_on_its_last_token(qtbot):
    from attnviz.gui.walkthrough.walkthrough_widget import WalkthroughWidget

    for kind, want in (("vit", 0), ("encoder", 7)):
        trace = sample_trace(kind, T=8)
        w = WalkthroughWidget(selection=Selection())
        qtbot.addWidget(w)
        w.set_trace(trace)
        part, layer, head, query = w._resolved()
        assert query == want, kind
        if kind == "vit":
            assert str(trace.tokens[query]) == "[CLS]"


def test_positional_encoding_bar_names_the_kind_of_table(qtbot):
    from attnviz.gui.views.positional_encoding_view import PositionalEncodingView

    for pos, words in (("learned", "(learned)"), ("sinusoidal", "(sin / cos)")):
        trace = sample_trace("encoder", T=8, pos=pos)
        view = PositionalEncodingView(selection=Selection())
        qtbot.addWidget(view)
        view.set_trace(trace)
        assert words in view.heatmap.bar.label, (pos, view.heatmap.bar.label)
        assert ("sin" in view.heatmap.bar.label) == (pos == "sinusoidal")
