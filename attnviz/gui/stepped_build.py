"""A widget built in parts, a part per call, so a window can spread its building over event-loop turns.

Building the Training page in one go froze the GUI thread for ~0.1 s after the first attention map
(issue 18). A widget using :class:`SteppedBuild` puts its construction in a generator (``_build_steps``,
one ``yield`` between parts) and either finishes it in its constructor or leaves it to the caller:
:meth:`SteppedBuild.build_step` builds one part, :meth:`SteppedBuild.finish_building` the rest at once.
Such a widget is put on screen only once :attr:`SteppedBuild.built`: it is never seen or used half-built.
"""

from __future__ import annotations

__all__ = ["SteppedBuild"]


class SteppedBuild:
    """Mixin: ``self._building`` holds the generator of the parts still to build (None once built)."""

    _building = None

    def _start_building(self, parts, stepped: bool) -> None:
        """Hold generator ``parts``; without ``stepped`` build every part now (a plain constructor)."""
        self._building = parts
        if not stepped:
            self.finish_building()

    @property
    def built(self) -> bool:
        """Every part is built: the widget may be shown and used."""
        return self._building is None

    def build_step(self) -> bool:
        """Build the next part; returns whether parts remain."""
        if self._building is None:
            return False
        try:
            next(self._building)
        except StopIteration:
            self._building = None
            return False
        return True

    def finish_building(self) -> None:
        """Build every part not built yet, now."""
        while self.build_step():
            pass
