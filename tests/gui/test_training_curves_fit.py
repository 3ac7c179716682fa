"""The training curves in a narrow column (the form shown in a 1280×720 window gives them ~150 px): the
titles wrap and the plots stay inside the column (issue 36: "training loss (" and the x axis were cut)."""

from __future__ import annotations

from PySide6.QtWidgets import QApplication

from attnviz.tasks import task_names


def test_the_curves_titles_and_axes_fit_a_narrow_column(qtbot):
    from attnviz.gui.panels.training_panel import LOSS_TITLE, TrainingPanel

    panel = TrainingPanel(task_names())
    qtbot.addWidget(panel)
    panel.resize(1000, 600)
    panel.show()
    panel.show_model_history({"step": [0, 600, 1200], "loss": [3.5, 1.0, 0.1], "accuracy": [0.1, 0.6, 1.0]})
    right = panel.splitter.widget(1)
    right.setSizes([150, 500])
    for _ in range(10):
        QApplication.processEvents()
    width = panel.plots.width()
    one_line = panel.loss_title.item.document().clone()
    one_line.setTextWidth(-1)
    assert LOSS_TITLE in one_line.toPlainText() and one_line.idealWidth() > width  # control: one line is cut
    for item in (panel.loss_title, panel.loss_plot, panel.acc_title, panel.acc_plot):
        rect = item.mapRectToScene(item.boundingRect())
        assert rect.left() >= -0.5 and rect.right() <= width + 0.5, f"{item} spans {rect} of {width} px"
    for title in (panel.loss_title, panel.acc_title):
        text = title.item.mapRectToScene(title.item.boundingRect())
        box = title.mapRectToScene(title.boundingRect())
        assert text.right() <= width + 0.5 and text.height() <= box.height() + 0.5, "a title is cut"
