"""Dialogs and the non-blocking notice bar.

Import the modules by name (``attnviz.gui.dialogs.notice_bar``…): the About box reads package
metadata, which start-up has no time for, so nothing is imported here.
"""

__all__: list[str] = []
