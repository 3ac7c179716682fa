"""File ▸ Save scene… / Open scene… and Lesson ▸ Start lesson: the app's side of scenes and lessons.

A scene saved here is what the window shows: model, input, the view in front (and the walkthrough step),
part, layer, head, query, the What-if tab's switches, colour map and theme. Opening one loads its model
and input and, once the trace is there, restores the selection, the switches and the view. Lessons run in
:mod:`attnviz.gui.lesson_mode`.
"""

from __future__ import annotations

from pathlib import Path

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QFileDialog, QMenu

from attnviz.errors import AttnvizError

__all__ = ["install_scene_actions", "current_scene", "open_scene", "save_scene_as", "start_lesson", "view_name_of"]

FILTER = "attnviz scenes (*.json);;All files (*)"


def view_name_of(view) -> str:
    """The ``--view`` name of a view object (its class in the figure registry), or "head-map"."""
    from attnviz.figures.registry import FIGURES

    for name, spec in FIGURES.items():
        if spec.cls == type(view).__name__:
            return name
    return "head-map"


def current_scene(win):
    """A Scene of what ``win`` shows now; AttnvizError when there is nothing to save."""
    from attnviz.lessons.scene import Scene

    if win.loaded is None or win.trace is None:
        raise AttnvizError("nothing to save yet: load a model and an input")
    text = image = None
    if "image" in win.trace:
        current = win.input_panel.image.current
        if not isinstance(current, (str, Path)):
            raise AttnvizError("this image has no file (it came from memory): open it from a file to save a scene")
        image = str(Path(current).resolve())
    else:
        text = win.input_panel.text
    view = win.current_figure()
    s = win.selection.state
    name = view_name_of(view) if view is not None else "head-map"
    whatif = {}
    panel = getattr(getattr(win, "walkthrough", None), "whatif", None)  # the walkthrough's What-if tab
    if panel is not None:
        switches = panel.current_switches()
    else:  # the walkthrough is not built yet: an opened scene's switches are still waiting for it
        waiting = win.state.lesson.walkthrough_scene
        switches = waiting.whatif_switches() if waiting is not None else None
    if switches is not None and not switches.is_default:
        whatif = {"scale": switches.scale, "temperature": switches.temperature, "causal": switches.causal,
                  "positional": switches.positional, "ablate": [list(p) for p in sorted(switches.ablate)]}
    if view is not None and view is panel:
        name = "what-if"
    step = None
    if name == "steps" and getattr(view, "step_list", None):  # the walkthrough step on screen
        step = view.step_list[view.slider.value()]
    target = getattr(win.input_panel, "target", None) if text is not None else None  # enc–dec: the decoder input
    return Scene(model=win.model_ref, text=text, image=image, target=target, view=name, part=s.part, layer=s.layer, head=s.head,
                 query=s.query, step=step, whatif=whatif, colormap=getattr(win.settings, "colormap", "viridis"),
                 theme=getattr(win.settings, "theme", "light"))


def save_scene_as(win, path: str | None = None) -> Path | None:
    """File ▸ Save scene… (Ctrl+S): ask for a file name (unless ``path``) and write the scene."""
    from attnviz.lessons.scene import save_scene

    try:
        scene = current_scene(win)
    except AttnvizError as exc:
        win.notify(str(exc), "info")
        return None
    if path is None:
        path, _ = QFileDialog.getSaveFileName(win, "Save scene", "scene.json", FILTER)
        if not path:
            return None
    try:
        written = save_scene(scene, path)
    except OSError as exc:
        win.notify(f"cannot save the scene: {exc.strerror or exc}", "error")
        return None
    win.notify(f"scene saved to {written}", "info")
    return written


def open_scene(win, path: str | None = None) -> None:
    """Open a scene file: load its model and input, then restore its selection and view."""
    from attnviz.lessons.scene import load_scene

    if path is None:
        path, _ = QFileDialog.getOpenFileName(win, "Open scene", "", FILTER)
        if not path:
            return
    try:
        scene = load_scene(path)
        image = scene.image_source()
    except AttnvizError as exc:
        win.notify(str(exc), "error")
        return
    apply_scene(win, scene, image)


def apply_scene(win, scene, image=None) -> None:
    """Show ``scene`` in ``win`` (model, input, then selection and view once its trace arrives)."""
    win.state.lesson.pending_scene = scene  # restored when its trace is shown (restore_pending_scene)
    if scene.model != win.model_ref or win.loaded is None:
        win.state.model.first.update(text=scene.text, image=image, target=scene.target)
        win.load_model(scene.model)
    elif scene.text is not None:
        win.input_panel.target_row.set_target(scene.target or "")
        win.input_panel.set_text(scene.text, submit=True)
    else:
        win.input_panel.image.submit(image)


def restore_pending_scene(win, trace) -> None:
    """After each shown trace: restore the pending scene's selection and view (a no-op when no scene is
    pending; connected to the window's ``trace_shown`` by :func:`install_scene_actions`)."""
    lesson = win.state.lesson
    scene = lesson.pending_scene
    if scene is None:
        return
    # imported only when a scene waits: on every shown trace, the first map's turn among them, they froze
    # the window for nothing (the lessons package is not imported otherwise before the first map)
    from attnviz.figures.registry import FIGURES
    from attnviz.lessons.claims import scene_selection

    lesson.pending_scene = None
    try:
        state = scene_selection(scene, trace)
    except AttnvizError as exc:
        win.notify(f"the scene's selection does not fit this input: {exc}", "warning")
        return
    win.selection.update(layer=state.layer, head=state.head, query=state.query, part=state.part)
    spec = FIGURES.get(scene.view)
    dock = win.views_area.docks.get(spec.cls) if spec is not None else None
    if dock is not None:
        dock.raise_()
    _restore_walkthrough(win, scene)


# the walkthrough sub-tab that shows a scene's view
_WALKTHROUGH_TABS = {"steps": "steps", "matrix-form": "matrix", "what-if": "whatif"}


def _restore_walkthrough(win, scene) -> None:
    """The What-if switches as the scene saved them (as trained when it saved none) and, for a walkthrough
    view, its tab in front. The walkthrough is built after start-up: until then the scene waits on the
    window and :func:`apply_pending_walkthrough` finishes the job."""
    page = getattr(win, "walkthrough", None)
    if page is None:
        win.state.lesson.walkthrough_scene = scene
        return
    win.state.lesson.walkthrough_scene = None
    missing = page.whatif.set_switches(scene.whatif_switches(), win.loaded)
    if missing:
        heads = ", ".join(f"layer {layer} head {head}" for layer, head in missing)
        win.notify(f"the scene ablates heads this model does not have ({heads}): ignored", "warning")
    tab = _WALKTHROUGH_TABS.get(scene.view)
    if tab is not None:
        if win.trace is not None:  # the scene's head is the walkthrough's own: opening it keeps that head
            from attnviz.analysis.walkthrough_default import page_model

            win.selection.choose_on_page("walkthrough", page_model(win.trace))
        win.tabs.setCurrentWidget(win.walkthrough_page)
        page.setCurrentWidget(getattr(page, tab))
        if tab == "steps" and scene.step is not None:
            from attnviz.figures.registry import goto_step

            try:
                goto_step(page.steps, "steps", scene.step)
            except AttnvizError as exc:
                win.notify(str(exc), "warning")


def apply_pending_walkthrough(win) -> None:
    """Called once the walkthrough page exists: apply a scene opened before it was built."""
    scene = win.state.lesson.walkthrough_scene
    if scene is not None:
        _restore_walkthrough(win, scene)


def start_lesson(win, name: str = "attention", view: str | None = None):
    """Lesson ▸ Start: the lesson in presentation mode, a scene at a time; Esc comes back to the app. ``view``:
    start on the lesson's first scene showing that figure (Lesson ▸ Attention's cost starts on its T² slide)."""
    from attnviz.gui.lesson_mode import start_lesson as present_lesson
    from attnviz.lessons.lesson import load_lesson

    try:
        lesson = load_lesson(name)
    except AttnvizError as exc:
        win.notify(str(exc), "error")
        return None
    first = next((i for i, scene in enumerate(lesson.scenes) if scene.view == view), 0) if view else 0
    stage = present_lesson(win, lesson, first=first)
    state = win.state.lesson
    state.stage = stage
    stage.closed.connect(lambda: state.update(stage=None))
    return stage


def install_scene_actions(win) -> dict:
    """Add the scene and lesson actions to ``win``'s File menu and a Lesson menu; returns them by name."""
    from attnviz.lessons.lesson import lesson_names

    win.trace_shown.connect(lambda trace: restore_pending_scene(win, trace))
    file_menu = win.menuBar().actions()[0].menu()
    first = file_menu.actions()[0] if file_menu.actions() else None
    acts = {}
    for key, text, slot, shortcut in (("save_scene", "&Save scene…", lambda: save_scene_as(win), "Ctrl+S"),
                                      ("open_scene", "Open &scene…", lambda: open_scene(win), "Ctrl+Shift+S")):
        act = QAction(text, win)
        act.setShortcut(QKeySequence(shortcut))
        act.setStatusTip("A scene is a small JSON file: model, input, view, layer, head, query and colours")
        act.triggered.connect(slot)
        win.addAction(act)
        file_menu.insertAction(first, act)
        acts[key] = act
    file_menu.insertSeparator(first)
    bar = win.menuBar()
    lesson_menu = QMenu("&Lesson", bar)
    help_menu = next((a for a in bar.actions() if a.text() == "&Help"), None)
    bar.insertMenu(help_menu, lesson_menu) if help_menu is not None else bar.addMenu(lesson_menu)  # Help stays last
    for name in lesson_names():
        act = QAction(f"Start lesson “{name}”", win)
        act.setStatusTip("Full screen, one scene at a time: PageDown / PageUp; Esc comes back")
        act.triggered.connect(lambda _=False, n=name: start_lesson(win, n))
        lesson_menu.addAction(act)
        acts[f"lesson_{name}"] = act
    cost = QAction("Attention's cost against length (T², measured on this machine)", win)
    cost.setStatusTip("The attention lesson's slide of time and memory against T: the full T×T matrix against the "
                      "tiled path, measured when shown; Page Up for the rest of the lesson")
    cost.triggered.connect(lambda: start_lesson(win, "attention", view="attention-cost"))
    lesson_menu.addAction(cost)
    acts["attention_cost"] = cost
    open_file = QAction("Start lesson from a file…", win)
    open_file.triggered.connect(lambda: _lesson_from_file(win))
    lesson_menu.addAction(open_file)
    acts["lesson_file"] = open_file
    return acts


def _lesson_from_file(win) -> None:
    path, _ = QFileDialog.getOpenFileName(win, "Start a lesson", "", "attnviz lessons (*.json);;All files (*)")
    if path:
        start_lesson(win, path)


def open_scene_at_start(win, path: str) -> None:
    """``attnviz FILE`` / ``attnviz gui --scene FILE``: the window starts on the scene (before start())."""
    from attnviz.lessons.scene import load_scene

    try:
        scene = load_scene(path)
        image = scene.image_source()
    except AttnvizError as exc:
        win.state.model.first["model"] = None
        win.notify(str(exc), "error")
        return
    win.state.model.first.update(model=scene.model, text=scene.text, image=image, target=scene.target)
    win.state.lesson.pending_scene = scene
