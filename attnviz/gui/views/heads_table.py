"""The All heads view's sortable table: one row per head (layer, head, entropy, mean distance, largest
weight), what its "Table" button shows instead of the thumbnails. Split from
:mod:`attnviz.gui.views.model_view` along this seam (the table reads the view's numbers, never computes
them); a clicked row selects its head."""

from __future__ import annotations

from typing import Callable

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QAbstractItemView, QTableWidget, QTableWidgetItem

__all__ = ["HeadsTable", "COLUMNS"]

COLUMNS = ["layer", "head", "entropy (nats)", "mean distance", "max weight"]


class HeadsTable(QTableWidget):
    """Every head's statistics, sortable; ``pick(layer, head)`` on a click."""

    def __init__(self, parent, pick: Callable[[int, int], None]):
        super().__init__(0, len(COLUMNS), parent)
        self.setHorizontalHeaderLabels(COLUMNS)
        self.setSortingEnabled(True)
        self.setEditTriggers(QAbstractItemView.NoEditTriggers)
        self.setSelectionBehavior(QAbstractItemView.SelectRows)
        self.cellClicked.connect(lambda row, col: pick(*self.item(row, col).data(Qt.UserRole)))

    def fill(self, max_weight, stats) -> None:
        """One row per head of ``max_weight`` ((L, H) largest weights, None: empty); ``stats`` (a
        ``HeadStats`` or None while it is computed: "…")."""
        self.setSortingEnabled(False)  # rows are written in place: sorting now would move them under us
        if max_weight is None:
            self.setRowCount(0)
            return
        L, H = max_weight.shape
        self.setRowCount(L * H)
        for i, (layer, h) in enumerate(np.ndindex(L, H)):
            values = [layer, h, None if stats is None else float(stats.entropy[layer, h]),
                      None if stats is None or stats.distance is None else float(stats.distance[layer, h]),
                      float(max_weight[layer, h])]
            for j, v in enumerate(values):
                item = QTableWidgetItem()
                # NaN: a long input's head not computed yet (all_heads_long.py)
                item.setData(Qt.DisplayRole, "…" if v is None or v != v else (round(v, 4) if isinstance(v, float) else v))
                item.setData(Qt.UserRole, (layer, h))
                self.setItem(i, j, item)
        self.setSortingEnabled(True)
