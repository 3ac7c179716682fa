"""Headless Chromium (Debian's ``chromium``) driven by Playwright, for the interactive HTML page.

Never ``playwright install``: the system browser is launched by path, with a fresh profile, no
background networking. Locally the tests skip (with the reason) when the browser is absent; under CI
(``ATTNVIZ_REQUIRE_BROWSER=1``, set by .ci/run) they fail instead, so they can never silently not run.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

CHROMIUM = os.environ.get("ATTNVIZ_CHROMIUM", "/usr/bin/chromium")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--no-first-run", "--disable-sync"]


def _missing() -> str | None:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        return f"Debian's chromium is not installed ({CHROMIUM}): apt-get install chromium"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "Playwright for Python is not installed (pip install -e '.[test]')"
    return None


@pytest.fixture(scope="session")
def _playwright():
    reason = _missing()
    if reason:
        if os.environ.get("ATTNVIZ_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests must run here: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        yield pw


@pytest.fixture(scope="session")
def browser(_playwright, tmp_path_factory):
    ctx = _playwright.chromium.launch_persistent_context(str(tmp_path_factory.mktemp("profile")),
                                                         executable_path=CHROMIUM, args=FLAGS, headless=True)
    yield ctx
    ctx.close()


@pytest.fixture(scope="session")
def chromium(_playwright):
    """The browser itself, for contexts of their own (JavaScript off, another devicePixelRatio)."""
    b = _playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
    yield b
    b.close()


@pytest.fixture(scope="session")
def chromium_without_scripts(_playwright):
    """The browser with scripting off in Blink's settings, for every frame (a context's
    ``java_script_enabled=False`` leaves an iframe's srcdoc document half-scripted)."""
    b = _playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS + ["--blink-settings=scriptEnabled=false"],
                                    headless=True)
    yield b
    b.close()


@pytest.fixture
def context_with(chromium, chromium_without_scripts):
    """``context_with(scripts=False, device_scale_factor=2, ...)``: a fresh context, closed after."""
    made = []

    def make(scripts: bool = True, **options):
        ctx = (chromium if scripts else chromium_without_scripts).new_context(**options)
        made.append(ctx)
        return ctx
    yield make
    for ctx in made:
        ctx.close()


class Opened:
    """A page with every request and script error recorded; anything but the file itself is blocked."""

    def __init__(self, ctx, url: str):
        self.requests: list[str] = []
        self.errors: list[str] = []
        self.page = ctx.new_page()
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.route(lambda u: not u.startswith("file:") and not u.startswith("about:"),
                        lambda route: route.abort())
        self.page.goto(url)
        self.page.wait_for_function("window.attnviz && window.attnviz.painted", timeout=30000)

    def status(self) -> str:
        return self.page.inner_text("#status")


@pytest.fixture
def open_page(browser):
    pages = []

    def open_(path) -> Opened:
        opened = Opened(browser, Path(path).as_uri())
        pages.append(opened)
        return opened
    yield open_
    for o in pages:
        o.page.close()
    assert [e for o in pages for e in o.errors] == []  # no script error on any page a test opened
