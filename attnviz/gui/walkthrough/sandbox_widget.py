"""The toy sandbox: type X and the weight matrices, see every step of self-attention recomputed at once.

Left: editors for X, W_Q, W_K, W_V (and b_Q, b_K, b_V when biases are on), presets and switches. Right: the figure —
Q, K, V, the scores, the scaled and masked scores, P and Z — plus the worked numbers of one query row
(click a row to pick it). A wrong cell is marked in its editor and named in the message; the figure keeps
the last good numbers meanwhile, so typing never makes it flicker or crash.
"""

from __future__ import annotations

import numpy as np
from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor, QFontDatabase, QTextCharFormat, QTextCursor
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QHBoxLayout, QLabel,
                               QPlainTextEdit, QPushButton, QSpinBox, QTextEdit, QVBoxLayout, QWidget)

from attnviz.analysis.sandbox import (PRESET_NAMES, SandboxConfig, check_shapes, compute_sandbox, format_matrix,
                                      make_preset, parse_matrix, parse_vector)
from attnviz.gui.style import ViewStyle
from attnviz.gui.walkthrough.matrix_grid import MatrixGrid
from attnviz.gui.walkthrough.walkthrough_view import WalkthroughView
from attnviz.gui.walkthrough.number_format import format_number, format_vector
from attnviz.gui.walkthrough.rich_controls import FormulaCheckBox, FormulaComboBox, formula_label

__all__ = ["SandboxWidget"]

MATRICES = ("X", "W_Q", "W_K", "W_V")
BIASES = ("b_Q", "b_K", "b_V")
ERROR_BG = QColor("#f4a6a6")


class SandboxWidget(WalkthroughView):
    """Hand-typed toy self-attention with every intermediate shown."""

    title = "Sandbox"
    follows_selection = False  # its own toy input: the model's selection does not apply

    def __init__(self, style: ViewStyle | None = None, parent=None, debounce_ms: int = 150):
        self._debounce_ms = debounce_ms
        super().__init__(None, style, parent)
        self.load_preset(PRESET_NAMES[0])

    # -- widgets --------------------------------------------------------------------------------------
    def _editor(self, name: str, lines: int) -> QPlainTextEdit:
        ed = QPlainTextEdit()
        ed.setFont(QFontDatabase.systemFont(QFontDatabase.FixedFont))
        ed.setFixedHeight(int(ed.fontMetrics().lineSpacing() * (lines + 0.6) + 10))
        ed.setLineWrapMode(QPlainTextEdit.NoWrap)
        ed.setMinimumWidth(120)
        ed.setToolTip(f"{name}: one row per line, numbers separated by spaces or commas")
        ed.textChanged.connect(self._timer.start)
        return ed

    def _build(self) -> None:
        self.result = None  # the SandboxResult on screen (the last good one)
        self.errors: list = []
        self.query = 0
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(self._debounce_ms)
        self._timer.timeout.connect(self.recompute)
        left = QWidget()
        form = self._form = QFormLayout(left)
        self._rows: dict[str, int] = {}
        self.preset_box = QComboBox()
        self.preset_box.addItems(PRESET_NAMES)
        self.seed_box = QSpinBox()
        self.seed_box.setRange(0, 9999)
        self.seed_box.setPrefix("seed ")
        load = QPushButton("Load")
        load.clicked.connect(lambda: self.load_preset(self.preset_box.currentText(), self.seed_box.value()))
        row = QHBoxLayout()
        row.addWidget(self.preset_box, 1)
        row.addWidget(self.seed_box)
        row.addWidget(load)
        form.addRow("Preset", row)
        # formulae written as the figure writes them (W_Q with a real subscript), not in plain notation
        self.mode_box = FormulaComboBox()
        self.mode_box.addItem("Q = X W_Q, K = X W_K, V = X W_V", "projected")
        self.mode_box.addItem("parameter-free: softmax(X Xᵀ) X", "parameter-free")
        self.scale_box = FormulaComboBox()
        self.scale_box.addItem("÷ √d_k", "sqrt")
        self.scale_box.addItem("none (× 1)", "none")
        self.scale_box.addItem("custom factor", "custom")
        self.scale_spin = QDoubleSpinBox()
        self.scale_spin.setRange(0.001, 100.0)
        self.scale_spin.setDecimals(3)
        self.scale_spin.setValue(1.0)
        self.causal_box = QCheckBox("causal mask (query i sees keys j ≤ i)")
        self.bias_box = FormulaCheckBox("biases b_Q, b_K, b_V")
        srow = QHBoxLayout()
        srow.addWidget(self.scale_box, 1)
        srow.addWidget(self.scale_spin)
        form.addRow("Attention", self.mode_box)
        form.addRow("Scale", srow)
        form.addRow(self.causal_box)
        form.addRow(self.bias_box)
        for w in (self.mode_box, self.scale_box):
            w.currentIndexChanged.connect(self._options_changed)
        self.scale_spin.valueChanged.connect(self._timer.start)
        for w in (self.causal_box, self.bias_box):
            w.toggled.connect(self._options_changed)
        self.editors: dict[str, QPlainTextEdit] = {}
        self.shape_labels: dict[str, QLabel] = {}
        for name in MATRICES + BIASES:
            self.editors[name] = self._editor(name, 1 if name in BIASES else 4)
            self.shape_labels[name] = QLabel("")
            box = QVBoxLayout()
            box.setSpacing(1)
            box.addWidget(self.editors[name])
            box.addWidget(self.shape_labels[name])
            self._rows[name] = form.rowCount()
            form.addRow(formula_label(name), box)
        self.error_label = QLabel("")
        self.error_label.setWordWrap(True)
        self.error_label.setStyleSheet("color: #b00020;")
        form.addRow(self.error_label)
        holder = QWidget()
        hl = QVBoxLayout(holder)
        hl.setContentsMargins(0, 0, 0, 0)
        hl.addWidget(left)
        hl.addStretch(1)  # rows keep their height; spare room goes below the editors
        self._lay_out(side=holder, side_width=380)
        self._options_changed()

    # -- public ---------------------------------------------------------------------------------------
    def _style_changed(self) -> None:
        self._draw()

    def set_matrix_text(self, name: str, text: str) -> None:
        """Replace the text of one editor (X, W_Q, W_K, W_V, b_Q, b_K, b_V); recomputes after the debounce."""
        self.editors[name].setPlainText(text)

    def load_preset(self, name: str, seed: int = 0) -> None:
        """Fill every editor and switch from a preset of :func:`attnviz.analysis.sandbox.make_preset`."""
        current = parse_matrix(self.editors["X"].toPlainText(), "X")
        p = make_preset(name, seed=seed, X=current.values if current.ok else None)
        for w in (self.mode_box, self.scale_box, self.causal_box, self.bias_box):
            w.blockSignals(True)
        self.mode_box.setCurrentIndex(self.mode_box.findData(p.config.mode))
        self.scale_box.setCurrentIndex(self.scale_box.findData(p.config.scale))
        self.causal_box.setChecked(p.config.causal)
        self.bias_box.setChecked(name == "random")
        for w in (self.mode_box, self.scale_box, self.causal_box, self.bias_box):
            w.blockSignals(False)
        for n in MATRICES + BIASES:
            self.editors[n].blockSignals(True)
            self.editors[n].setPlainText(format_matrix(getattr(p, n)))
            self.editors[n].blockSignals(False)
        self.preset_box.setCurrentText(name)
        self.seed_box.setValue(seed)
        self.query = 0
        self._options_changed()
        self.recompute()

    def config(self) -> SandboxConfig:
        scale = self.scale_box.currentData()
        return SandboxConfig(mode=self.mode_box.currentData(),
                             scale=self.scale_spin.value() if scale == "custom" else scale,
                             causal=self.causal_box.isChecked(), bias=self.bias_box.isChecked())

    # -- computing ------------------------------------------------------------------------------------
    def _options_changed(self, *_args) -> None:
        cfg_mode = self.mode_box.currentData()
        for n in ("W_Q", "W_K", "W_V"):
            self._set_row_visible(n, cfg_mode == "projected")
        for n in BIASES:
            self._set_row_visible(n, cfg_mode == "projected" and self.bias_box.isChecked())
        self.bias_box.setEnabled(cfg_mode == "projected")
        self.scale_spin.setEnabled(self.scale_box.currentData() == "custom")
        self._timer.start()

    def _set_row_visible(self, name: str, visible: bool) -> None:
        self._form.setRowVisible(self._rows[name], visible)

    def recompute(self) -> None:
        """Parse every editor, check shapes, compute; mark errors per cell or keep the last result."""
        self._timer.stop()
        cfg = self.config()
        used = ["X"] + (["W_Q", "W_K", "W_V"] if cfg.mode == "projected" else []) + \
            (list(BIASES) if cfg.mode == "projected" and cfg.bias else [])
        parsed = {n: (parse_vector if n in BIASES else parse_matrix)(self.editors[n].toPlainText(), n) for n in used}
        errors = [e for p in parsed.values() for e in p.errors]
        if not errors and cfg.mode == "projected":
            v = {n: p.values for n, p in parsed.items()}
            errors = check_shapes(v["X"], v["W_Q"], v["W_K"], v["W_V"], v.get("b_Q"), v.get("b_K"), v.get("b_V"))
        self.errors = errors
        self._mark(parsed, used)
        if not errors:
            v = {n: p.values for n, p in parsed.items()}
            self.result = compute_sandbox(v["X"], v.get("W_Q"), v.get("W_K"), v.get("W_V"), cfg,
                                          v.get("b_Q"), v.get("b_K"), v.get("b_V"))
            self.query = min(self.query, self.result.X.shape[0] - 1)
        self.error_label.setText("\n".join(e.message for e in errors))
        self._draw()

    def _mark(self, parsed: dict, used: list[str]) -> None:
        """Red background on every wrong cell; the editor's label says the shape or the first problem."""
        for name, ed in self.editors.items():
            p = parsed.get(name)
            selections = []
            for e in (p.errors if p is not None else []):
                if e.span is None:
                    continue
                sel = QTextEdit.ExtraSelection()
                fmt = QTextCharFormat()
                fmt.setBackground(ERROR_BG)
                fmt.setToolTip(e.message)
                sel.format = fmt
                cur = QTextCursor(ed.document())
                cur.setPosition(e.span[0])
                cur.setPosition(e.span[1], QTextCursor.KeepAnchor)
                sel.cursor = cur
                selections.append(sel)
            ed.setExtraSelections(selections)
            whole = [e for e in self.errors if e.matrix == name and e.span is None]
            bad = bool(whole) or (p is not None and bool(p.errors))
            ed.setStyleSheet("QPlainTextEdit { border: 2px solid #b00020; }" if bad else "")
            lab = self.shape_labels[name]
            if name not in used:
                lab.setText("")
            elif bad:
                lab.setText("✗ " + (whole or p.errors)[0].message)
                lab.setStyleSheet("color: #b00020;")
            else:
                shape = p.values.shape
                lab.setText("✓ " + (f"{shape[0]} × {shape[1]}" if len(shape) == 2 else f"{shape[0]} numbers"))
                lab.setStyleSheet("color: #2e7d32;")

    # -- drawing --------------------------------------------------------------------------------------
    def _grid(self, name: str, values, title: str, **kw) -> MatrixGrid:
        g = MatrixGrid(name, self.style)
        g.digits = 2
        g.set_data(values, title=title, **kw)
        self._adopt(g)
        g.clicked.connect(lambda r, _c, g=g: self._pick_query(g, r))
        return g

    def _pick_query(self, grid: MatrixGrid, row: int) -> None:
        if self.result is not None and grid.values.shape[0] == self.result.X.shape[0]:
            self.query = row
            self._draw()

    def _draw(self) -> None:
        self.board.clear()
        self.grids = {}
        r = self.result
        if r is None:
            self.board.add_heading("Sandbox", "type X and the weight matrices on the left")
            self.board.finish()
            return
        cfg, toks, i = r.config, r.tokens, self.query
        hl = dict(row_labels=toks, highlight_rows=[i])
        if cfg.mode == "parameter-free":
            head = f"Z = softmax(X Xᵀ × {r.scale:.4g}{' + M' if cfg.causal else ''}) X   (no parameters)"
        else:
            b = (lambda n: f" + b_{n}") if cfg.bias else (lambda n: "")
            m = " + M" if cfg.causal else ""
            head = (f"Q = X W_Q{b('Q')}, K = X W_K{b('K')}, V = X W_V{b('V')};   "
                    f"Z = softmax(Q Kᵀ × {r.scale:.4g}{m}) V")
        self.board.add_heading(head, "not updated — fix the marked cells: " + self.errors[0].message if self.errors
                               else f"{len(toks)} tokens, d_model = {r.X.shape[1]}, d_k = {r.Q.shape[1]}; "
                               "click a row to follow that query")
        names = ("Q", "K", "V") if cfg.mode == "projected" else ("Q = K = V = X",)
        first = [self._grid("X", r.X, "X", **hl), "→"]
        for n in names:  # K and V rows are keys: only the query's own rows are outlined
            first.append(self._grid(n[0], getattr(r, n[0]), n, row_labels=toks,
                                    highlight_rows=[i] if n[0] == "Q" else []))
        self.board.add_row(first)
        square = dict(row_labels=toks, col_labels=toks, highlight_rows=[i])
        second = [self._grid("scores", r.scores, "Q Kᵀ", **square), f"× {r.scale:.4g}",
                  self._grid("scaled", r.scaled, "scaled", **square)]
        if cfg.causal:
            second += ["+ M", self._grid("masked", r.masked, "masked", **square)]
        self.board.add_row(second)
        self.board.add_row(["softmax →", self._grid("P", r.P, "P", kind="prob", **square), "V =",
                            self._grid("Z", r.Z, "Z = P V", **hl)])
        s = r.steps(i)
        seen = ", ".join(format_number(x) for x in s.scores)
        self.board.add_note(
            f"query {toks[i]}:  scores q·k = {seen}  →  × {r.scale:.4g}{' + mask' if cfg.causal else ''} = "
            f"{', '.join(format_number(x) for x in s.masked)}  →  softmax = "
            f"{', '.join(format_number(x) for x in s.weights)}  →  z = {format_vector(s.z_i)}", factor=1.35)
        if np.isfinite(s.masked).sum() > 1 and np.max(s.weights) > 0.99:
            self.board.add_note("the softmax has saturated: one key takes (almost) all the weight", factor=1.2)
        self.board.finish()
