"""One state for what the window shows: the current trace, or nothing with a notice.

A mixin of :class:`attnviz.gui.window.main_window.MainWindow`. Every view, panel and hidden dock holds the
window's ``trace`` or nothing: a model switch clears them all before the new model's example runs,
and a failed run clears them with a notice instead of leaving another input's figures on screen.
For encoder–decoders the token strip (the source sentence) highlights the source token the selected
decoder position attends to, not the token with the same index.
"""

from __future__ import annotations

__all__ = ["ShownTraceMixin", "strip_position"]


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


class ShownTraceMixin:
    """Clearing and the input strip's selection (uses the window's views, panels and selection)."""

    def clear_shown(self, message: str | None = None, level: str = "warning") -> None:
        """Show nothing in every view and panel (hidden ones too); with ``message``, say why."""
        self.trace = None
        self.views_area.set_trace(None)
        self.prediction_panel.set_trace(None)
        self.input_panel.clear_strip()
        if self.walkthrough is not None:
            self.walkthrough.set_trace(None)
            self._walkthrough_fed = (self._walkthrough_fed[0], None, self._walkthrough_fed[2])
        if message:
            self.notify(message, level)

    def _strip_clicked(self, index: int) -> None:
        """A click on the input strip: the query, or for an encoder–decoder's decoder parts the source
        token as the key (the query there is a decoder position)."""
        decoder = self.trace is not None and self.trace.kind == "encoder-decoder"
        if decoder and self.selection.part != "enc":
            self.selection.update(key=index)
        else:
            self.selection.update(query=index)

    def _sync_strip(self) -> None:
        self.input_panel.set_query(strip_position(self.trace, self.selection.state))
