"""The slide's number formats, kept Qt-free in :mod:`attnviz.text.number_format` (the exported lesson figures use
them too); re-exported here for the walkthrough's widgets."""

from attnviz.text.number_format import *  # noqa: F401,F403
from attnviz.text.number_format import __all__  # noqa: F401
