# PyInstaller runtime hook: point attnviz at the assets folder inside the bundle.
import os
import sys

os.environ.setdefault("ATTNVIZ_ASSETS", os.path.join(getattr(sys, "_MEIPASS", os.path.dirname(sys.executable)), "assets"))
