"""Build hook: copy the top-level ``assets/`` folder into the package as ``attnviz/_assets``.

``assets/`` stays the one source (``make assets`` writes there, the checkout and editable installs read
it in place); a wheel carries a copy as package data, which ``attnviz.io.assets`` finds with
``importlib.resources``. Everything else about the package is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
SOURCE = ROOT / "assets"
TARGET = ("attnviz", "_assets")
# written by tools, never shipped
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.part", ".*")


class build_py_with_assets(build_py):
    def run(self):
        super().run()
        # An editable install reads assets/ from the checkout: copying would only leave a stale twin.
        if getattr(self, "editable_mode", False) or not SOURCE.is_dir():
            return
        target = Path(self.build_lib, *TARGET)
        if target.exists():
            shutil.rmtree(target)
        shutil.copytree(SOURCE, target, ignore=SKIP)


setup(cmdclass={"build_py": build_py_with_assets})
