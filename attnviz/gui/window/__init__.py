"""The main window: its state (:mod:`.state`, Qt-free evented models) and the components that each own one
job and talk through that state (start-up steps, model loading, the shown trace, pages, actions, scenes,
figures, drops). :class:`attnviz.gui.window.main_window.MainWindow` assembles them."""
