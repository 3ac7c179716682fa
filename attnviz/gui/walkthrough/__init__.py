"""Self-attention step by step: the model's numbers, the matrix form, a toy sandbox, what-if switches."""

from attnviz.gui.walkthrough.matrix_form_widget import MatrixFormWidget
from attnviz.gui.walkthrough.page import WalkthroughPage
from attnviz.gui.walkthrough.runners import lane_runner, sync_runner
from attnviz.gui.walkthrough.sandbox_widget import SandboxWidget
from attnviz.gui.walkthrough.walkthrough_widget import WalkthroughWidget
from attnviz.gui.walkthrough.whatif_panel import WhatIfPanel

__all__ = ["WalkthroughPage", "WalkthroughWidget", "MatrixFormWidget", "SandboxWidget", "WhatIfPanel",
           "lane_runner", "sync_runner"]
