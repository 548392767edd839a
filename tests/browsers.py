"""Debian's chromium, which the browser tests drive headless (.ci/run installs it as root).

A browser test fails, never skips, when chromium is missing: a skipped test would look green
on a machine where nothing was checked.
"""
import shutil
from contextlib import contextmanager

import pytest

# What keeps a headless chromium quiet and working as root in a container with no network: no
# sandbox (it needs a user namespace), no GPU, and none of its background requests to Google.
QUIET_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync"]


def chromium(needed_by):
    """The path of the chromium executable; fails the test, naming `needed_by`, without one."""
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if not found:
        pytest.fail(f"Chromium is not installed: {needed_by} runs in Debian's headless chromium. "
                    "Install it (as root): apt-get install -y chromium  (.ci/run does this)")
    return found


@contextmanager
def headless_chromium(needed_by):
    """Debian's chromium, launched headless through Playwright (never a browser of Playwright's
    own: it would have to be downloaded); fails the test, naming `needed_by`, without either."""
    executable = chromium(needed_by)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("The Python package playwright is missing: run `make setup` again (it is a dev requirement)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True, args=QUIET_FLAGS)
        try:
            yield launched
        finally:
            launched.close()
