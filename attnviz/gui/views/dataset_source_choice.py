"""Which inputs the data-set view scores (mixed into DatasetView): the sources its model has in the data box,
the one chosen, and with no data set at all the input on screen and a line saying what is missing."""

from __future__ import annotations

from attnviz.gui.views.dataset_links import describe_item
from attnviz.gui.views.dataset_sources import ask_for_source, missing_words, source_words

__all__ = ["SourceChoice"]


class SourceChoice:
    """The data box's part of DatasetView (its ``data_source``, ``_kinds``, ``_parts`` and jobs are the view's)."""

    def _on_screen_only(self) -> bool:
        """Whether there is no data set to score: no source chosen and no task to draw held-out inputs from."""
        return self.data_source is None and self._kinds[0] == "screen"

    def _offer(self) -> None:
        """The data box offers this model's sources, showing the one scored."""
        self._parts.offer_sources(self._kinds, self.data_source[0] if self.data_source else self._kinds[0])

    def _run_source(self) -> None:
        """Score the chosen data set, or, with none, the input on screen and say in one line what is missing."""
        if not self._on_screen_only():
            self.start(force=True)
            return
        self._cancel.set()  # a job for the previous model or source stops; whatever it sends is dropped
        self._job, self._job_id = None, self._job_id + 1
        self._timer.stop()
        self.run_button.setText("Score")
        self.set_hover_text("")
        self._show_current_only(missing_words(self.trace))

    def _data_words(self, n: int) -> str:
        return source_words(self.data_source, n)

    def set_data_source(self, kind: str | None, path: str | None = None) -> None:
        """Score the task's held-out inputs (``kind`` None), a text file ("corpus") or an image folder ("images")."""
        self.data_source = None if kind is None else (kind, str(path))
        self._offer()
        if self.data_source is not None:
            self.source_box.setItemText(self.source_box.currentIndex(), f"{'file' if kind == 'corpus' else 'folder'}: "
                                        f"{describe_item(str(path), 40)}")
        self._run_source()

    def _source_picked(self, index: int) -> None:
        chosen = ask_for_source(self, self.source_box.itemData(index))
        if chosen is not None:
            self.set_data_source(*chosen)
        else:  # cancelled: back to what is scored now
            self._offer()
