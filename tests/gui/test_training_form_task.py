"""The Training form offers the loaded model's own task (issue 36: with induction loaded it offered "coref",
the first task of the list)."""

from __future__ import annotations

from types import SimpleNamespace

from attnviz.tasks import task_names


def _loaded(task):
    return SimpleNamespace(task=task, name=str(task), info={"task": task})


def test_the_form_follows_the_loaded_models_task(qtbot):
    from attnviz.gui.panels.training_panel import TrainingPanel

    panel = TrainingPanel(task_names())
    qtbot.addWidget(panel)
    assert panel.task_box.currentText() != "induction"  # control: the form starts elsewhere
    panel.show_loaded(_loaded("induction"))
    assert panel.task_box.currentText() == "induction"
    panel.show_loaded(_loaded("shapes"))
    assert panel.task_box.currentText() == "shapes"


def test_a_model_without_a_built_in_task_leaves_the_form_alone(qtbot):
    from attnviz.gui.panels.training_panel import TrainingPanel

    panel = TrainingPanel(task_names())
    qtbot.addWidget(panel)
    panel.show_loaded(_loaded("reverse"))
    panel.show_loaded(_loaded(None))  # a Hugging Face folder: no task
    panel.show_loaded(_loaded("not-a-task"))
    assert panel.task_box.currentText() == "reverse"
