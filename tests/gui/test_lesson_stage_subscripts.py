"""The live lesson's titles and captions write indices as subscripts, as the exported deck does: scene 5's title
read "concat · W_O" and scenes 7 and 8 "√d_k" with the underscore on screen (issue 36, live lesson = deck)."""

from __future__ import annotations

from PySide6.QtCore import Qt


def test_titles_with_indices_are_drawn_with_subscripts_and_plain_titles_stay_plain(qtbot):
    from attnviz.gui.lesson_mode import LessonStage
    from attnviz.lessons.lesson import load_lesson

    lesson = load_lesson("attention")
    stage = LessonStage(lesson, measure_n=4)
    qtbot.addWidget(stage)
    many = next(i for i, s in enumerate(lesson.scenes) if "W_O" in s.title)
    stage.show_scene(many)
    assert stage.title.textFormat() == Qt.TextFormat.RichText
    assert "W<sub>O</sub>" in stage.title.text() and "W_O" not in stage.title.text()
    plain = next(i for i, s in enumerate(lesson.scenes) if "_" not in s.title and "<" not in s.title)
    stage.show_scene(plain)  # control: a title without indices is set as plain text, unchanged
    assert stage.title.textFormat() == Qt.TextFormat.PlainText and stage.title.text() == lesson.scenes[plain].title


def test_a_token_with_markup_characters_stays_literal(qapp):
    from PySide6.QtWidgets import QLabel

    from attnviz.gui.widgets.formula_text import show_formula

    label = QLabel()
    show_formula(label, "“<b>” reads W_O")
    assert "&lt;b&gt;" in label.text() and "W<sub>O</sub>" in label.text()
