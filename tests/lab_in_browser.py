"""JupyterLab as a student uses it, for tests/notebooks/test_jupyterlab.py.

`LabServer` starts the JupyterLab that `make setup` installs (this interpreter's), on a free
port of 127.0.0.1 with a token, serving one folder, with user settings, kernels and runtime
files of its own; the environment's defaults stay those `make setup` wrote (no news pop-up:
gptcourse/lab_settings.py). `stop()` ends it and the kernels it started, by pid. `NotebookPage` drives one notebook
in a browser page the way a student does: it clicks a cell, types into the cell editor, presses
Shift+Enter, and reads what the page shows.
"""
import os
import secrets
import socket
import subprocess
import sys
import time
import urllib.request

import psutil

# What JupyterLab's news pop-up asks, over the cells, when the environment has not answered it.
NEWS_QUESTION = "Would you like to get notified about official Jupyter news?"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class LabServer:
    """`python -m jupyterlab` serving `root`; its own configuration lives under `home`."""

    def __init__(self, root, home, env):
        self.root, self.home = root, home
        self.port, self.token = free_port(), secrets.token_hex(16)
        self.log_path = home / "jupyterlab.log"
        # The kernels inherit this environment. Its own folders keep a developer's JupyterLab
        # settings and kernels (a "python3" of another environment) out of the test.
        self.env = dict(env, JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_DATA_DIR=str(home / "data"),
                        JUPYTER_RUNTIME_DIR=str(home / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
                        JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), IPYTHONDIR=str(home / "ipython"))
        self.process = None

    def url(self, path):
        return f"http://127.0.0.1:{self.port}/{path}"

    def start(self, timeout=60):
        command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={self.port}",
                   "--ServerApp.port_retries=0",  # the port chosen, or fail: never another one
                   f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={self.root}",
                   "--allow-root"]  # CI runs as root
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen(command, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self._wait_until_it_answers(timeout)
        return self

    def _wait_until_it_answers(self, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterLab stopped at once (exit {self.process.returncode}):\n{self.log()}")
            try:
                self._request("api/status")
                return
            except OSError:  # refused, reset or timed out (urllib's URLError is one): not up yet
                time.sleep(0.2)
        raise TimeoutError(f"JupyterLab did not answer within {timeout} s:\n{self.log()}")

    def _request(self, path, method="GET"):
        request = urllib.request.Request(self.url(path), method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.read()

    def log(self, tail=4000):
        return self.log_path.read_text(errors="replace")[-tail:] if self.log_path.exists() else ""

    def stop(self):
        """Shut the server down with its kernels; kill by pid whatever of them is still running."""
        if self.process is None or self.process.poll() is not None:
            return
        started = psutil.Process(self.process.pid).children(recursive=True)  # its kernels
        try:
            self._request("api/shutdown", method="POST")  # shuts its kernels down first
            self.process.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        for child in started:
            if child.is_running():  # psutil checks the start time too: never a reused pid
                child.kill()


class NotebookPage:
    """One notebook open in JupyterLab in a browser page; cells are found by their index."""

    def __init__(self, page, server, notebook):
        self.page = page
        # A workspace of its own: JupyterLab would otherwise reopen the notebooks of earlier
        # pages beside this one, and their cells would answer the selectors below too.
        workspace = "test-" + notebook.replace(".", "-")
        page.goto(server.url(f"lab/workspaces/{workspace}/tree/{notebook}?token={server.token}"))
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
        page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=60_000)  # its kernel is ready
        assert page.locator(".jp-Notebook").count() == 1, "more than this notebook is open in the page"

    def cell(self, index):
        # JupyterLab numbers the cells it lays out in this attribute, from 0 as in the file.
        cell = self.page.locator(f".jp-Notebook .jp-Cell[data-windowed-list-index='{index}']")
        cell.scroll_into_view_if_needed()
        return cell

    def select(self, index):
        """Click the cell's prompt: the cell is selected, in command mode."""
        self.cell(index).locator(".jp-InputPrompt").click()

    def type_code(self, index, code):
        """Replace the cell's code as a student does: click into it, select all, type."""
        self.cell(index).locator(".cm-content").click()
        self.page.keyboard.press("Control+A")
        self.page.keyboard.insert_text(code)  # as typed, without the editor's auto-indent

    def run(self, index, timeout=120):
        """Shift+Enter on the cell; returns when its prompt shows an execution count."""
        self.select(index)
        self.page.keyboard.press("Shift+Enter")
        self.wait_until_ran(index, timeout)

    def wait_until_ran(self, index, timeout=120):
        prompt = self.cell(index).locator(".jp-InputPrompt").element_handle()
        self.page.wait_for_function(r"prompt => /\[\d+\]/.test(prompt.textContent)", arg=prompt,
                                    timeout=timeout * 1000)

    def run_all_above(self, index, timeout=300):
        """Select the cell, then Run > Run All Above Selected Cell; returns when all have run."""
        self.select(index)
        self.page.get_by_role("menuitem", name="Run", exact=True).click()
        self.page.get_by_role("menuitem", name="Run All Above Selected Cell").click()
        self.page.wait_for_function(
            r"""last => [...document.querySelectorAll('.jp-Notebook .jp-CodeCell')]
                  .filter(cell => Number(cell.dataset.windowedListIndex) < last)
                  .every(cell => /\[\d+\]/.test(cell.querySelector('.jp-InputPrompt').textContent))""",
            arg=index, timeout=timeout * 1000)

    def news_question_shown(self):
        """Whether JupyterLab's news pop-up is in the page (it comes once the page is restored)."""
        return self.page.get_by_text(NEWS_QUESTION).count() > 0

    def outputs(self, index):
        """[(data-mime-type or "", text)] of the cell's outputs, as the page shows them."""
        return self.cell(index).locator(".jp-OutputArea-output").evaluate_all(
            "outputs => outputs.map(o => [o.dataset.mimeType || '', o.innerText])")


# Where the page broke the lines of a <pre>: for each word (a run of non-spaces), the visual lines
# its characters sit on, from Range.getClientRects(). A word on two lines was broken inside.
MEASURE_LINE_BREAKS = r"""pre => {
    const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    const broken = [], lineTops = new Set();
    let charWidth = 0;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        for (const word of node.data.matchAll(/\S+/g)) {
            const range = document.createRange();
            range.setStart(node, word.index);
            range.setEnd(node, word.index + word[0].length);
            const tops = new Set([...range.getClientRects()].filter(r => r.width > 0).map(r => Math.round(r.top)));
            if (tops.size > 1) broken.push(word[0]);
            tops.forEach(top => lineTops.add(top));
            if (!charWidth) {
                range.setEnd(node, word.index + 1);
                charWidth = range.getBoundingClientRect().width;
            }
        }
    }
    return {broken_words: broken, visual_lines: lineTops.size, fits_chars: Math.floor(pre.clientWidth / charWidth)};
}"""


def line_breaks(output):
    """{broken_words, visual_lines, fits_chars} of an output's <pre> (a Playwright locator):
    the words the page broke across two lines, how many lines it shows, and how many characters
    of its monospace font fit on one line."""
    return output.locator("pre").evaluate(MEASURE_LINE_BREAKS)


def chat_answer(page):
    """The answer box of the chat panel (gptcourse.chat) in the page: its text now."""
    return page.locator(".widget-textarea textarea").first.input_value()


def watch_a_chat_answer_grow(page, prompt, longer=3, timeout=60):
    """Type `prompt` into the chat panel and press Enter; returns the distinct answers seen as
    the page showed them, from the prompt alone until `longer` longer ones (or the timeout)."""
    box = page.locator(".widget-text input").first
    box.fill(prompt)
    box.press("Enter")
    seen, deadline = [], time.monotonic() + timeout
    while time.monotonic() < deadline and len(seen) <= longer:
        value = chat_answer(page)
        if value.startswith(prompt) and value not in seen:
            seen.append(value)
        time.sleep(0.05)
    return seen


def stop_the_chat_answer(page):
    """Press the chat panel's Stop; the line it then writes under the answer (settings, speed)."""
    page.get_by_role("button", name="Stop").click()
    used = page.locator(".widget-label").filter(has_text="stopped")
    used.wait_for(timeout=30_000)
    return used.inner_text()
