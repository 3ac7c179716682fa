"""The All heads grid of a long input: each head on the page max-pooled from q and k on the views' lane.

A long trace keeps no T × T maps; every weight of a head is recomputed from q, k and the rows' log-sum-exp
(about a CPU-second a head at 4,096 tokens, so 30 × 9 heads take minutes). The grid therefore computes the heads
of the page on screen only, one after another on the views' lane (:func:`~attnviz.analysis.head_overview.
page_overviews`), drawing each as it arrives; turning the page (▲▼◀▶, or selecting a head elsewhere) asks for
that page's heads and drops the work for the page no longer shown. Heads computed once are kept for the trace,
shared by every view of it (:func:`computed_heads`).
A figure for the app's export (``export_waits``) asks only for the page its slide shows, as it is painted, and
the exporter waits for it (:mod:`~attnviz.gui.views.export_wait`); the command line's computes it at once.

A mixin of :class:`~attnviz.gui.views.model_view.ModelView` (its ``grid``, ``bar``, ``notes``, titles, pages).
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field

import numpy as np

from attnviz.analysis.head_overview import HeadOverview, overview_pool, page_overviews, pooled_mask
from attnviz.gui.lane import cancel_requested, current_job, report_progress
from attnviz.gui.style import colour_lut
from attnviz.gui.views.colour_scale import scale_note
from attnviz.gui.views.heatmap_data import colourize
from attnviz.gui.views.model_summary import HeadStats, PooledMaps, colour_thumbnails
from attnviz.gui.widgets.legible import is_exporting
from attnviz.gui.widgets.title import set_title

__all__ = ["LongGrid", "LongPages"]

# a head not computed yet is left blank (its note "…", the title counts the heads done): a grey square read as a
# wholly masked map, the scale's lowest colour as a map of zeros
PENDING_RGBA = (0, 0, 0, 0)
# above this many weights a head (32,768 × 32,768) only the selected head is computed: a head costs about a
# CPU-second at 4,096 × 4,096 and grows with its weights (~1,000× that at 131,072 tokens, where a page of 8 heads
# still showed "0 of 8 heads done" after 10 minutes)
SELECTED_ONLY_WEIGHTS = 1 << 30


@dataclass
class LongPages:
    """What the grid of one long trace's part holds: every head's pooled map once computed."""

    trace: object
    part: str
    pool: tuple[int, int]  # (kr, kc) map positions a side of one cell
    pooled: np.ndarray  # (L, H, s_rows, s_cols) float32, zeros where not computed
    done: np.ndarray  # (L, H) bool
    entropy: np.ndarray  # (L, H) nats, NaN where not computed
    distance: np.ndarray | None  # (L, H) tokens, or None (cross-attention, images)
    masked: np.ndarray | None = None  # (s_rows, s_cols) cells the mask blocks wholly
    masked_known: bool = False
    asked: tuple = field(default_factory=tuple)  # heads the running job computes, in order
    seconds: dict = field(default_factory=dict)  # (layer, head) → wall seconds its overview took (measured)

    def caption(self) -> str:
        s_rows, s_cols = self.pooled.shape[2:]
        kr, kc = self.pool
        return f"max-pooled to {s_rows}×{s_cols} cells of {kr}×{kc} positions each"


_COMPUTED: dict[tuple[int, str], tuple] = {}  # (id(trace), part) → (weak ref to the trace, the arrays)


def computed_heads(trace, part: str, make) -> tuple:
    """The (pooled, done, entropy, distance) arrays of ``trace``'s ``part``, one set per trace: every view of it
    (the screen's grid, an export's figure of it) fills and reads the same, so a head is computed once (an
    export of the page on screen computes nothing again). ``make()`` makes them the first time; they go with
    the trace. Written on the GUI thread only (as each head arrives)."""
    key = (id(trace), part)
    hit = _COMPUTED.get(key)
    if hit is not None and hit[0]() is trace:
        return hit[1]
    arrays = make()
    _COMPUTED[key] = (weakref.ref(trace), arrays)
    weakref.finalize(trace, _COMPUTED.pop, key, None)
    return arrays


class LongGrid:
    """Page-by-page overviews of a long input's heads (mixed into ModelView)."""

    _long: LongPages | None = None
    export_waits = False  # built for an export that waits for the page's heads (export_wait.py)

    def _start_long(self, trace, part: str) -> None:
        """Lay the grid out for every head of ``part`` and compute the page on screen."""
        self._halves.cancel()
        self._hold(False)
        L, H = trace.layers_in(part), trace.n_heads
        kr, kc = overview_pool(trace, part)
        _, tq, tk = trace.probs_shape(0, part)
        s = (-(-tq // kr), -(-tk // kc))
        with_distance = part != "cross" and trace.grid is None
        heads = computed_heads(trace, part, lambda: (
            np.zeros((L, H, *s), np.float32), np.zeros((L, H), bool), np.full((L, H), np.nan),
            np.full((L, H), np.nan) if with_distance else None))
        self._long = LongPages(trace, part, (kr, kc), *heads)
        self.stats = None
        self._draw_long()  # lays out the grid (pages, notes) before the page's heads are asked for
        self._write_notes()
        self._set_title()
        self._draw_marks()
        self._ask_page()

    def _long_active(self) -> bool:
        lp = self._long
        return lp is not None and lp.trace is self.trace and lp.part == self._part

    def _page_heads(self) -> list[tuple[int, int]]:
        """(layer, head) of the page on screen, the selected head first (the head map shows it too)."""
        (l0, h0), (rows, cols) = self._page, self.page_shape()
        L, H = self._grid_shape
        heads = [(a, b) for a in range(l0, min(L, l0 + rows)) for b in range(h0, min(H, h0 + cols))]
        r = self.res
        if self._selected_only():
            return [(r.layer, r.head)] if r is not None and (r.layer, r.head) in heads else []
        if r is not None and (r.layer, r.head) in heads:
            heads.remove((r.layer, r.head))
            heads.insert(0, (r.layer, r.head))
        return heads

    def _selected_only(self) -> bool:
        """Whether a head of this input has more weights than SELECTED_ONLY_WEIGHTS (only the selected is computed)."""
        _, tq, tk = self._long.trace.probs_shape(0, self._long.part)
        return tq * tk > SELECTED_ONLY_WEIGHTS

    def _selected_only_note(self) -> str:
        """Why only the selected head is computed, and what a head costs, in one line."""
        lp = self._long
        _, tq, tk = lp.trace.probs_shape(0, lp.part)
        cost = f"{tq * tk / 4096 ** 2:,.0f}× a 4,096-position head"
        if lp.seconds:  # the last head computed: what one took here
            (layer, head), took = list(lp.seconds.items())[-1]
            cost = f"L{layer}·H{head} took {int(took // 60)} min {int(took % 60)} s here"
        return f"{tq:,} positions: only the selected head is computed ({tq:,} × {tk:,} weights a head from q and k; {cost})"

    def _ask_page(self) -> None:
        """Compute the page's heads not computed yet; drop the work for a page no longer shown."""
        if not self._long_active():
            return
        if self.export_waits and not is_exporting():
            return  # a figure for a waiting export computes only the page its slide shows, asked as it is painted
        lp = self._long
        needed = tuple(h for h in self._page_heads() if not lp.done[h])
        if self._work is not None and set(needed) <= set(lp.asked):
            return  # the running job covers them (a resize or a redraw of the same page)
        lp.asked = needed
        if not needed:
            self.cancel_background()
            return
        trace, part, masked_known = lp.trace, lp.part, lp.masked_known
        kr, kc = lp.pool

        def work():
            in_job = current_job() is not None  # ensure_current (an export) runs this on the GUI thread
            out = []

            def deliver(item) -> None:
                if not in_job:
                    out.append(item)
                elif not report_progress(item):  # a newer page or trace dropped this job: stop computing it
                    raise InterruptedError("superseded")

            if not masked_known:
                deliver(("masked", pooled_mask(trace, part, kr, kc, kr)))
            start = time.monotonic()
            for overview in page_overviews(trace, part, needed, stop=cancel_requested):
                lp.seconds[(overview.layer, overview.head)] = time.monotonic() - start
                deliver(overview)
                start = time.monotonic()
            return out

        def ready(result) -> None:
            if lp is not self._long:
                return
            lp.asked = ()
            if isinstance(result, InterruptedError):
                return
            if isinstance(result, Exception):
                set_title(self.title_item, f"All heads unavailable: {result}", self.style)
                return
            for item in result:
                self._long_arrived(lp, item)
            self._set_title()

        self.run_in_background(work, ready, lambda item: self._long_arrived(lp, item))
        if is_exporting() and not self.export_waits:  # a synchronous export (the command line): computed here
            self.ensure_current()
        self._set_title()

    def _long_pending_text(self) -> str:
        """What the page's job computes, for an export waiting for it: "computing heads 12/36 for the export"."""
        lp = self._long
        if not self._long_active() or not lp.asked:
            return ""
        done = sum(1 for h in lp.asked if lp.done[h])
        return f"computing heads {done}/{len(lp.asked)} for the export (from q and k)"

    def _long_arrived(self, lp: LongPages, item) -> None:
        """One computed head (or the mask's pooled cells): stored and drawn at once."""
        if lp is not self._long:
            return
        if isinstance(item, HeadOverview):
            key = (item.layer, item.head)
            lp.pooled[key] = item.pooled
            lp.entropy[key] = item.entropy
            if lp.distance is not None and item.distance is not None:
                lp.distance[key] = item.distance
            lp.done[key] = True
            self._write_notes()
        else:
            lp.masked, lp.masked_known = item[1], True
        self._draw_long()
        self._set_title()
        if self.table.isVisible():
            self._fill_table()

    def _draw_long(self) -> None:
        """Every computed head in the chosen colour scale; heads not computed yet blank."""
        lp, mode = self._long, self.scale_box.mode
        self.thumbs = colour_thumbnails(PooledMaps(lp.pooled, lp.masked, lp.pool), scale=mode)
        L, H = lp.done.shape
        self._ensure_grid(L, H)
        rgba = colourize(self.thumbs.images, colour_lut(self.style))
        rgba[~lp.done] = PENDING_RGBA
        self.grid.set_tiles(rgba)
        self.bar.set_levels(0.0, self.thumbs.vmax)
        n = int(lp.done.sum())
        if mode == "per-map":
            self.bar.set_label("share of each head's own maximum weight")
        elif mode == "shared":
            self.bar.set_label("attention weight · " + scale_note(mode, "heads computed", n))
        else:
            self.bar.set_label("attention weight · " + scale_note(mode))

    def _note_templates(self) -> set[str]:
        """The widest note a long input's head can get (entropy "0.00", a distance up to the key count)."""
        if not self._long_active():
            return set()
        lp = self._long
        return {f"0.00 · {lp.pooled.shape[3] * lp.pool[1]}.0"} if lp.distance is not None else set()

    def _long_note(self, layer: int, head: int) -> str:
        lp = self._long
        if not lp.done[layer, head]:
            return "…"
        text = f"{lp.entropy[layer, head]:.2f}"
        if lp.distance is not None:
            text += f" · {lp.distance[layer, head]:.1f}"
        return text

    def _long_titles(self) -> tuple[str, str]:
        """(title, caption) of a long input's grid: what is computed so far, how the maps are pooled."""
        lp, r = self._long, self.res
        page = self._page_heads()
        todo = sum(1 for h in page if not lp.done[h])
        title = f"All heads · {r.part_name}"
        if todo:
            title += f" · computing from q and k: {len(page) - todo} of {len(page)} heads on this page done"
        if self._selected_only():
            title = f"All heads · {r.part_name}" + (" · computing the selected head from q and k" if todo else "")
        notes = "under each: entropy (nats)" + (" · mean distance (tokens)" if lp.distance is not None else "")
        if self._selected_only():
            notes = self._selected_only_note() + " — " + notes
        # the pooling on a line of its own: joined to the page and the notes it wrapped mid-phrase in a dock
        return title, lp.caption() + "<br>" + " — ".join(t for t in (self.page_note(), notes) if t)

    def _long_table(self) -> tuple[np.ndarray, HeadStats]:
        """(largest weights, statistics) for the table: NaN ("…") where a head is not computed yet."""
        lp = self._long
        return (np.where(lp.done, self.thumbs.max_weight, np.nan),
                HeadStats(lp.entropy, lp.distance, "tokens"))

    def _long_info(self, layer: int, head: int) -> str | None:
        """Status text of a head not computed yet (None: computed, the usual text applies)."""
        if self._long.done[layer, head]:
            return None
        if self._selected_only():
            return f"Layer {layer} · head {head}: not computed ({self._selected_only_note()}; select it to compute it)"
        return f"Layer {layer} · head {head}: not computed yet (the heads on screen are computed first)"
