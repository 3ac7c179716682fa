"""One state for what the window shows: the current trace, or nothing with a notice.

A component of :class:`attnviz.gui.window.main_window.MainWindow`; the trace lives in the window's state
(``state.shown``). Every view, panel and hidden dock holds the
window's ``trace`` or nothing: a model switch clears them all before the new model's example runs,
and a failed run clears them with a notice instead of leaving another input's figures on screen.
For encoder–decoders the token strip (the source sentence) highlights the source token the selected
decoder position attends to, not the token with the same index.
"""

from __future__ import annotations

from attnviz.gui.panels.trace_defaults import trace_defaults

__all__ = ["ShownTrace", "strip_position", "run_summary", "selection_words"]


def strip_position(trace, state) -> int | None:
    """Which token of the input strip to highlight for selection ``state``.

    The strip shows the model's input. For an encoder–decoder that is the source sentence, while the
    query is a decoder position: highlight the source it attends to most (cross-attention of the
    selected layer and head). Otherwise (and in encoder self-attention, whose queries are source
    tokens) the query itself.
    """
    if trace is None or state.query is None:
        return None
    # imported here: the window is built before numpy and the analyses are (start-up paints first)
    from attnviz.analysis.decoder_positions import attended_source, produces_tokens

    if produces_tokens(trace) and state.part != "enc":  # the query is a decoder position
        return attended_source(trace, state.layer, state.head, state.query)
    return state.query  # the strip's own tokens (encoder self-attention reads the source)


def strip_note(trace, state, index: int | None) -> str:
    """Why the strip highlights ``index`` when it is not the query itself (an encoder–decoder's decoder
    position: the source its cross-attention weights most), said beside the strip's title; "" otherwise.
    Issue 36: translate's strip highlighted "cat" for "→ vidas" with nothing on screen saying why."""
    if trace is None or index is None or state.query is None:
        return ""
    from attnviz.analysis.decoder_positions import produces_tokens, row_labels
    from attnviz.text.token_display import display_token

    if not produces_tokens(trace) or state.part == "enc":
        return ""  # the strip's own token is the query
    rows = row_labels(trace, state.part)  # the decoder row as every view names it ("→ vidas": what it writes)
    query = display_token(str(rows[state.query])) if 0 <= state.query < len(rows) else str(state.query)
    source = display_token(str(trace.src_tokens[index]))
    return (f"'{source}' highlighted: the source cross-attention layer {state.layer} · head {state.head} "
            f"weights most for the decoder's '{query}'")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"  # coref-emergent's status read "2 layers × 1 heads"


def run_summary(trace, seconds: float) -> str:
    """The status line after a run: model, positions, layers × heads, run time."""
    from attnviz.analysis.decoder_positions import length_words

    return (f"{trace.description.model_name or ''} · {length_words(trace, 'position')} · "
            f"{_count(trace.n_layers, 'layer')} × {_count(trace.n_heads, 'head')} · run {1000 * seconds:.0f} ms")


def selection_words(trace, state) -> str:
    """The status line for a selection: layer, head, and the query and key named by their tokens (a clicked
    key was left out: after clicking "because" the line said only "layer 1 · head 3 · query 8")."""
    words = f"layer {state.layer} · head {state.head}"
    if trace is None:
        return words + (f" · query {state.query}" if state.query is not None else "")
    from attnviz.analysis.trace_parts import resolve  # numpy: loaded once a trace exists
    from attnviz.text.token_display import display_token

    r = resolve(trace, state)
    for what, index, tokens in (("query", r.query, r.query_tokens), ("key", r.key, r.key_tokens)):
        if index is not None:
            words += f" · {what} {index} '{display_token(str(tokens[index]))}'"
    return words


class ShownTrace:
    """Shows a run's trace (or nothing) in every view and panel; the input strip's selection."""

    def __init__(self, win):
        self.win = win
        self.state = win.state

    def show_run(self, res) -> None:
        """Show a :class:`~attnviz.gui.panels.model_jobs.RunResult` in every view and panel."""
        win, shown, model, selection = self.win, self.state.shown, self.state.model, self.state.selection
        previous, trace = shown.trace, res.trace
        shown.update(source=res.source, empty_reason=None, trace=trace)  # the source first: the trace's listeners read it
        win.views_area.set_trace(trace)
        changes = trace_defaults(previous, trace, selection.query, model.new_model,
                                 selection.kept(model.ref or model.opening_ref or ""))
        model.new_model = False
        if changes:
            selection.update(**changes)
        win.part_bar.set_trace(trace)  # after the trace's part is chosen: the row never shows the one before
        win.prediction_panel.set_trace(trace)
        if res.strip is not None:
            win.input_panel.set_strip(res.strip)
        self.sync_strip()
        if "image" in trace:
            win.input_panel.image.set_preview(trace["image"])
        win.pages.tab_changed(win.tabs.currentIndex())
        notice = trace.description.notice
        if notice:
            win.notify(notice, "warning")
        elif win.notice.level == "warning":
            win.notice.dismiss()  # the input problem is gone
        win.statusBar().showMessage(run_summary(trace, res.seconds))
        win.trace_shown.emit(trace)
        win.pages.prepare()

    def show_trace(self, trace, source=None, strip=None) -> None:
        """Show a trace made elsewhere (a saved .npz: ``attnviz FILE``) as if the model had just run it;
        ``strip``: what the input strip shows for it (None: it keeps what it shows)."""
        from attnviz.gui.panels.model_jobs import RunResult

        self.show_run(RunResult(trace, strip, source, 0.0))

    def clear(self, message: str | None = None, level: str = "warning", empty_reason: str | None = None) -> None:
        """Show nothing in every view and panel (hidden ones too); with ``message``, say why in a notice,
        with ``empty_reason``, in the views themselves (instead of "no input yet")."""
        win = self.win
        self.state.shown.empty_reason = empty_reason  # before the trace: its listeners read it
        self.state.shown.trace = None  # the walkthrough follows through the state
        win.views_area.set_trace(None, empty_reason)
        win.prediction_panel.set_trace(None, empty_reason)
        win.input_panel.clear_strip()
        if message:
            win.notify(message, level)

    def strip_clicked(self, index: int) -> None:
        """A click on the input strip: the query, or for an encoder–decoder's decoder parts the source
        token as the key (the query there is a decoder position)."""
        trace, selection = self.state.shown.trace, self.state.selection
        decoder = trace is not None and trace.kind == "encoder-decoder"
        if decoder and selection.part != "enc":
            selection.update(key=index)
        else:
            selection.update(query=index)

    def sync_strip(self) -> None:
        """The input strip highlights the token of the selection (see :func:`strip_position`)."""
        trace, state = self.state.shown.trace, self.state.selection.state
        index = strip_position(trace, state)
        self.win.input_panel.set_query(index, strip_note(trace, state, index))
