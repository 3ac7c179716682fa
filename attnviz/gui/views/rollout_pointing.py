"""The rollout view's pointing: hover text for a map's patch or a strip's token, and a click that selects that
position as the query (split from rollout_view.py, which holds the drawing)."""

from __future__ import annotations

from attnviz.analysis.trace_parts import format_value

__all__ = ["RolloutPointing", "SHORT"]

SHORT = {"raw": "raw attention", "rollout": "rollout", "grad": "gradient rollout"}


class RolloutPointing:
    """Mixed into RolloutView: uses its trace, maps, selection, strip_set, _image_size and set_hover_text."""

    def patch_text(self, name: str, r: int, c: int) -> str:
        """Hover text for patch (r, c) of map ``name``."""
        gh, gw = self.trace.grid
        values = self.maps.maps[name]
        v = "—" if values is None else format_value(values[r * gw + c])
        return f"patch {r},{c} · {SHORT[name]}: {v}"

    def _patch_of(self, y: int, x: int) -> tuple[int, int]:
        gh, gw = self.trace.grid
        S = self._image_size
        return y * gh // S[0], x * gw // S[1]

    def _hover_pixel(self, name, y, x) -> None:
        self.set_hover_text("" if y is None or self.maps is None else self.patch_text(name, *self._patch_of(y, x)))

    def _click_pixel(self, y, x) -> None:
        if self.selection is not None:
            r, c = self._patch_of(y, x)
            self.selection.update(query=1 + r * self.trace.grid[1] + c)  # token 0 is CLS

    def _hover_token(self, name, i) -> None:
        """``i``: an input position (the strips add their window's start)."""
        values = None if self.maps is None else self.maps.maps[name]
        if i is None or values is None:
            self.set_hover_text("")
            return
        tok = self.trace.key_tokens("self" if self.res.part == "cross" else self.res.part)[i]
        what = "masked (after the query)" if self.strip_set.is_masked(i) else format_value(values[i])
        self.set_hover_text(f"{tok} [{i}] · {SHORT[name]}: {what}")

    def _click_token(self, i: int) -> None:
        self.selection is not None and self.selection.update(query=i)
