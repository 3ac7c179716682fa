"""QKEmbeddingView: one head's queries and keys of a whole data set in one 2-D embedding (AttentionViz).

Keys are translated onto the queries' centroid and queries and keys scaled to the same mean norm
(:mod:`attnviz.analysis.qk_embedding`): the attention weights stay the same, and a query lands near
the keys it attends to. Points are coloured by query/key, position or token; hovering shows the
token in its sentence; clicking opens that input in every view of the app.
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pyqtgraph as pg
from PySide6.QtCore import QSize, Signal
from PySide6.QtWidgets import QComboBox, QLabel

from attnviz.errors import AttnvizError
from attnviz.gui.style import HEAD_COLOURS, colour_lut
from attnviz.gui.views.base import BaseView
from attnviz.gui.views.dataset_links import describe_item, open_input_in_app, window_model_ref
from attnviz.gui.views.dataset_sources import has_task, model_name
from attnviz.gui.widgets.plot_style import style_plot
from attnviz.gui.widgets.title import make_title, set_title
from attnviz.gui.widgets.token_axis import display_token
from attnviz.runtime.model_copies import model_stamp
from attnviz.runtime.qk_collect import VIEW_INPUTS as N_INPUTS  # held-out inputs of the task
from attnviz.runtime.qk_collect import VIEW_MAX_TOKENS as MAX_TOKENS  # positions kept

__all__ = ["QKEmbeddingView", "N_INPUTS", "MAX_TOKENS"]

COLOURINGS = ("query / key", "position", "token")
QUERY_COLOUR, KEY_COLOUR = "#CC6677", "#4477AA"  # Tol's rose and blue: colour-blind safe
OTHER_COLOUR = "#BBBBBB"
N_TOKEN_COLOURS = len(HEAD_COLOURS)


def _collect(ref: str):
    """Worker: the model's private copy run over the data set (q and k of every layer and head)."""
    from attnviz.runtime.qk_collect import dataset_qk

    return dataset_qk(ref, N_INPUTS, MAX_TOKENS)


def _tagged(job_id: int, work):
    """Worker: ``work()`` with the id of the request it answers."""
    return job_id, work()


def _embed(data, part: str, layer: int, head: int, method: str):
    from attnviz.analysis.qk_embedding import embed_qk

    q, k = data.head_vectors(part, layer, head)
    return embed_qk(q, k, method=method)


class QKEmbeddingView(BaseView):
    title = "Queries and keys (data set)"
    tab_title = "Queries and keys"  # the dock's tab: twelve tabs fit a 1920-px window without scrolling

    input_requested = Signal(object)  # an input of the data set to open (text, image path or array)

    def _build(self) -> None:
        self.title_item = make_title()
        self.plot = pg.PlotItem(enableMenu=False)
        self.plot.hideButtons()
        self.plot.setAspectLocked(True)  # distances are what the figure is about: one unit is one unit
        self.scatter = pg.ScatterPlotItem(hoverable=True, tip=None)
        self.scatter.sigClicked.connect(self._clicked)
        self.scatter.sigHovered.connect(self._hovered)
        self.plot.addItem(self.scatter)
        self.legend = make_title()
        self.figure.addItem(self.title_item, row=0, col=0)
        self.figure.addItem(self.plot, row=1, col=0)
        self.figure.addItem(self.legend, row=2, col=0)
        self.colouring = QComboBox()
        self.colouring.addItems(list(COLOURINGS))
        self.colouring.currentIndexChanged.connect(lambda *_: self._draw())
        self.method = QComboBox()
        from attnviz.analysis.qk_embedding import embedding_methods

        self.method.addItems(embedding_methods())
        self.method.currentIndexChanged.connect(lambda *_: self._recompute())
        self.controls.addWidget(QLabel("colour by:"))
        self.controls.addWidget(self.colouring)
        self.controls.addWidget(QLabel("embedding:"))
        self.controls.addWidget(self.method)
        self.controls.addStretch(1)
        self.failure = ""  # why only the current input is shown, if so
        self._collect_id = 0
        self._collecting = None  # (id, work) of the data-set run in flight
        self.data = None  # QKData of the current model
        self.embedding = None
        self._ref = None
        self._shown_key = None
        self.message = ""
        style_plot(self.plot, self.style)

    def figure_size(self) -> QSize:
        return QSize(1000, 900)

    # -- data ----------------------------------------------------------------------------------
    def _head(self) -> tuple[str, int, int]:
        s = self.state
        part = s.part if s.part in ("self", "enc") else "self"
        return part, s.layer, s.head

    def _trace_changed(self) -> None:
        ref = window_model_ref(self, self.trace)
        self._stamp_was, self._stamp = getattr(self, "_stamp", None), model_stamp(ref) if ref else None
        if ref is None:
            self.data, self._ref, self._collecting = None, None, None
            if self.trace is None:
                self._show_message("no model: open a model to see its queries and keys")
            else:  # a trace read from a file: its own queries and keys
                self._collected(AttnvizError("no model to run a data set with"))
            return
        if ref == self._ref and self._stamp == self._stamp_was and self.data is not None and not self.failure:
            return  # same model, same data set: the current input changes nothing here
        self._ref, self.data, self.embedding = ref, None, None
        self._show_message(f"running {N_INPUTS} held-out inputs of {self.trace.description.model_name or ref}…")
        method = self.method.currentText()
        part, layer, head = self._head()

        def work():
            data = _collect(ref)
            return data, _embed(data, part, layer, head, method), (part, layer, head, method)

        # the model runs on the app's background lane (torch), not the views' numpy lane; an export
        # (ensure_current) runs it here instead
        from attnviz.gui.workers import run_job

        self.cancel_background()
        self._collect_id += 1
        self._collecting = (self._collect_id, work)
        run_job(_tagged, self._collect_id, work, on_result=self._collected_job, on_error=self._collect_failed)

    def ensure_current(self) -> None:
        """Finish the data set now, on this thread (export), then any pending embedding."""
        if self._collecting is not None:
            _, work = self._collecting
            self._collecting = None
            self._collect_id += 1  # the lane's answer, when it comes, is dropped
            try:
                result = work()
            except Exception as exc:  # noqa: BLE001 - shown like a background failure
                result = exc
            self._collected(result)
        super().ensure_current()

    def _collected_job(self, value) -> None:
        job_id, result = value
        if self._collecting is None or job_id != self._collecting[0]:
            return  # superseded by another model, or already done by ensure_current
        self._collecting = None
        self._collected(result)

    def _collect_failed(self, message: str) -> None:
        if self._collecting is not None:
            self._collecting = None
            self._collected(AttnvizError(message))

    def _collected(self, result) -> None:
        if isinstance(result, Exception):
            reason = (str(result) if isinstance(result, AttnvizError)
                      else f"{type(result).__name__}: {result}")
            if self.trace is not None and not has_task(self.trace) and self._ref is not None:
                # one line, not the job's paragraph of command-line advice (a three-line title at 1280×720)
                reason = f"{model_name(self.trace)} has no built-in task to draw a data set from"
            self.failure = reason
            self._show_message(f"cannot collect queries and keys: {reason}")
            self._from_trace()
            return
        self.failure = ""
        self.data, self.embedding, self._shown_key = result
        self._recompute()  # the selection may have moved meanwhile

    def _from_trace(self) -> None:
        """Still show the input on screen: its own queries and keys (numpy, views lane)."""
        if self.trace is None:
            return
        from attnviz.runtime.qk_collect import qk_from_trace

        trace = self.trace
        part, layer, head = self._head()
        method = self.method.currentText()

        def work():
            data = qk_from_trace(trace)
            return data, _embed(data, part, layer, head, method), (part, layer, head, method)

        def done(result):
            if not isinstance(result, Exception):
                self.data, self.embedding, self._shown_key = result
                self._recompute()

        self.run_in_background(work, done)

    def _recompute(self) -> None:
        if self.data is None:
            return
        part, layer, head = self._head()
        key = (part, layer, head, self.method.currentText())
        # before drawing what is at hand: the data set's first embedding is the decoder's self-attention, and drawn
        # under cross-attention it was titled "layer 1, head 0" as if it were cross-attention's (translate)
        if self.state.part == "cross":
            self._show_message("queries and keys of cross-attention come from different sequences: "
                               "choose self-attention")
            return
        if key == self._shown_key and self.embedding is not None:
            self._draw()
            return
        data = self.data
        self.run_in_background(lambda: (_embed(data, *key), key), self._embedded)

    def _embedded(self, result) -> None:
        if isinstance(result, Exception):
            self._show_message(str(result))
            return
        self.embedding, self._shown_key = result
        self._draw()

    def _selection_changed(self, state, changed) -> None:
        if changed & {"layer", "head", "part"}:
            self._recompute()

    # -- drawing -------------------------------------------------------------------------------
    def _show_message(self, text: str) -> None:
        self.message = text
        self.scatter.clear()
        set_title(self.title_item, text, self.style)
        set_title(self.legend, "", self.style)
        for name in ("bottom", "left"):  # no points, no axes: their range and "PC1 (91 %…)" were another head's
            self.plot.showAxis(name, False)

    def _colours(self, n_q: int) -> tuple[list, str]:
        """Brush per point (queries then keys) and the legend text of the current colouring."""
        part = self._shown_key[0]
        mode = self.colouring.currentText()
        st = self.style
        if mode == "position":
            pos = self.data.position[part]
            top = max(1, int(pos.max()))
            lut = colour_lut(st)
            idx = np.clip(np.round(pos / top * 254), 0, 254).astype(int)
            brushes = [pg.mkBrush(*lut[i][:3]) for i in idx]
            return brushes * 2, (f"colour: position in the input, 0 → {top} ({st.cmap}); "
                                 "● query  ▲ key")
        if mode == "token":
            tokens = self.data.token[part]
            common = [t for t, _ in Counter(tokens).most_common(N_TOKEN_COLOURS)]
            colour = {t: HEAD_COLOURS[i] for i, t in enumerate(common)}
            brushes = [pg.mkBrush(colour.get(t, OTHER_COLOUR)) for t in tokens]
            names = "  ".join(f"<span style='color:{colour[t]}'>■</span> {display_token(t)}" for t in common)
            return brushes * 2, f"colour: the {len(common)} most frequent tokens {names}  (grey: others); ● query  ▲ key"
        brushes = [pg.mkBrush(QUERY_COLOUR)] * n_q + [pg.mkBrush(KEY_COLOUR)] * n_q
        return brushes, (f"<span style='color:{QUERY_COLOUR}'>●</span> query  "
                         f"<span style='color:{KEY_COLOUR}'>▲</span> key")

    def _draw(self) -> None:
        if self.data is None or self.embedding is None or self._shown_key is None:
            return
        emb, st = self.embedding, self.style
        part, layer, head, method = self._shown_key
        n_q = emb.n_queries
        brushes, legend = self._colours(n_q)
        size = 5 * max(1.0, st.font_scale)
        symbols = ["o"] * n_q + ["t1"] * (len(emb.points) - n_q)
        self.scatter.setData(pos=emb.points, data=np.arange(len(emb.points)), size=size, symbol=symbols,
                             brush=brushes, pen=None)
        x_label, y_label = emb.axis_labels()
        for name in ("bottom", "left"):
            self.plot.showAxis(name, True)
        style_plot(self.plot, st, bottom=x_label, left=y_label)
        n_inputs = len(self.data.items)
        two = "enc" in self.data.parts  # beside an encoder's, "self" is the decoder's self-attention
        where = {"self": "decoder self-attention " if two else "", "enc": "encoder self-attention "}[part]
        source = (f"the current input only ({self.failure})" if self.failure
                  else f"{n_inputs} held-out inputs of {self.data.model}")
        set_title(self.title_item, f"Queries and keys of {where}layer {layer}, head {head}: {n_q} positions of "
                  f"{source}", st)
        # how the points are placed goes under the plot with the legend: in the title it made three lines of a
        # 1280×720 dock beside a no-data-set reason
        set_title(self.legend, f"{legend}<br>keys translated and scaled as in AttentionViz: near means high "
                  f"attention (α = {emb.alpha:.2f})", st)
        self.plot.autoRange()

    def _style_changed(self) -> None:
        style_plot(self.plot, self.style)
        if self.message and self.embedding is None:
            set_title(self.title_item, self.message, self.style)
        self._draw()

    # -- interaction ---------------------------------------------------------------------------
    def point_text(self, i: int) -> str:
        """What the status line says about point ``i`` (queries first, then keys)."""
        n_q = self.embedding.n_queries
        kind, j = ("query", i) if i < n_q else ("key", i - n_q)
        part = self._shown_key[0]
        d = self.data
        token = display_token(d.token[part][j])
        return (f"{kind} {token!r} at position {int(d.position[part][j])} of input "
                f"{int(d.input_index[part][j])}: {d.context(part, j)}")

    def point_input(self, i: int):
        """The input (text, image path or array) point ``i`` belongs to."""
        j = i % self.embedding.n_queries
        return self.data.items[int(self.data.input_index[self._shown_key[0]][j])]

    def open_point(self, i: int) -> None:
        item = self.point_input(i)
        self.input_requested.emit(item)
        if open_input_in_app(self, item):
            self.set_hover_text(f"opened {describe_item(item)}")

    def _clicked(self, item, points, ev=None) -> None:
        if len(points):
            self.open_point(int(points[0].data()))

    def _hovered(self, item, points, ev=None) -> None:
        self.set_hover_text(self.point_text(int(points[0].data())) if len(points) else "")
