"""Parts of the matrix form as figures of their own, so ``attnviz export`` and lessons can name them.

``many-heads``: all heads' Z side by side × W_O = the attention output (the lecture's "many heads, one
output"), headed by how much this input's heads differ; ``matrix-z``: one head's Z = P V and its share
of the output. Both are the app's matrix form opened on that part: one renderer for screen and file.
"""

from __future__ import annotations

from attnviz.gui.walkthrough.matrix_form_widget import MatrixFormWidget

__all__ = ["ManyHeadsFigure", "MatrixZFigure"]


class ManyHeadsFigure(MatrixFormWidget):
    """The matrix form on its "heads" part: Z_0 … Z_{H-1}, concat, W_O, the output, with shapes."""

    title = "Many heads, one output"
    opening_section = "heads"

    def _build(self) -> None:
        super()._build()
        self.set_section(self.opening_section)


class MatrixZFigure(ManyHeadsFigure):
    """The matrix form on its "output" part: Z = P V for the selected head."""

    title = "Z = P V"
    opening_section = "output"
