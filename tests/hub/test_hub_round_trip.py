"""A class in the course's JupyterHub, end to end, in a real browser, as real unix users.

`python -m grader hub init` writes a term hub (PAM logins, an instructor and two students as unix
accounts) and `python -m grader hub start` runs it: JupyterHub, configurable-http-proxy, and
each user's JupyterLab as that user. Then, through headless Chromium where a person would click:

1. the instructor logs in and releases 02_attention with the formgrader's Release button, in
   a browser tab of its own (the hub lets no page frame a user's server);
2. two students log in, open the Assignments tab and fetch it; one solves every task, the other
   leaves a known mistake in Task 2.1 and an endless loop in Task 2.3; both press Validate and
   read the course's messages (the loop stopped, with its line; no traceback), then Submit;
3. the instructor collects, autogrades with the course's configuration (the loop costs Task 2.3
   only), generates and releases feedback: nbgrader's commands, run as the instructor's account
   with their server's environment, as in a terminal of their JupyterLab;
4. each student fetches the feedback in the page and reads their points and the messages;
5. the course grader, given the collected submissions, gives the same points; meanwhile a student
   talks to a model of their own in the chat panel (gptcourse.chat), whose widgets travel over
   the kernel's connection through the hub's proxy: the answer grows token by token, Stop ends it;
6. Ctrl-C on `hub start` stops the hub, its proxy, the servers and their kernels: nothing of the
   users is left running, and the port is free again.

About four minutes on two cores: marked slow. Needs root (accounts) and Debian's chromium.
"""
import re
import socket
import time

import nbformat
import psutil
import pytest

from browsers import headless_chromium
from factory import CORPUS, load, manifest, records_by_submission, release_notebook, start_grader
from gptcourse import SelfCheckFailed, check
from gptcourse.checking.tasks import task_of_cell, tasks_of
from grader.hub import commands as course_hub
from grader.nbgrading import course as nbgrader_course
from hub_machine import RunningHub, nbgrader_as, passwords, python_as
from lab_in_browser import NotebookPage, free_port, stop_the_chat_answer, watch_a_chat_answer_grow

pytestmark = pytest.mark.slow

CHAPTER = "02_attention"
TASK_TIMEOUT = 10  # seconds a task may run, in Validate and in autograde: the loop waits this long
SEED = 4242  # the hidden tests' cases, the same for nbgrader and the course grader
WINDOW = {"width": 1300, "height": 900}
MISTAKE = CORPUS / "2.1" / "wrong_softmax_dim0.py"  # a known mistake, named in the check's message
CHAT_NOTEBOOK = "chat.ipynb"
# What a student's chat cell holds once chapters 03, 04 and 06 are done: their model and their generate.
CHAT_TASKS = ("3.2", "4.1", "4.2", "4.3", "4.4", "4.5", "4.6", "6.1", "6.2", "6.3", "6.4")
CHAT_PANEL = '''
from gptcourse import get_encoding
from gptcourse.chat import Settings, chat_panel

torch.manual_seed(0)
cfg = {"vocab_size": 50257, "context_length": 256, "emb_dim": 64, "n_heads": 4, "n_layers": 2, "drop_rate": 0.0,
       "qkv_bias": False}
panel = chat_panel({"my model": GPTModel(cfg).eval()}, get_encoding(), settings=Settings(max_new_tokens=200))
'''


def solutions():
    return {tid: t["source"] for t_m in manifest().values() for tid, t in t_m["tasks"].items()}


def with_endless_loop(source):
    """Task 2.3's solution with one line more in forward: a loop that never ends (and keeps
    nothing: it replaces what it computes, so it hits the time limit, not the memory limit)."""
    marker = "        attn_scores = queries @ keys.transpose(-2, -1)\n"
    assert marker in source
    looped = source.replace(marker, marker + "        while True: attn_scores = queries @ keys.transpose(-2, -1)\n")
    line = looped.splitlines().index("        while True: attn_scores = queries @ keys.transpose(-2, -1)") + 1
    return looped, line


def write_chat_notebook(hub_dir, name):
    """~name/chat.ipynb, written by the account itself (never by root in a user's folder): one
    cell with the solutions the panel needs (a small model with random weights) and the panel."""
    code = "import math\nimport torch\nimport torch.nn as nn\n\n" + "\n\n".join(solutions()[t] for t in CHAT_TASKS)
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code + "\n" + CHAT_PANEL)])
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
    written = python_as(hub_dir, name, f"import os\nwith open(os.path.expanduser('~/{CHAT_NOTEBOOK}'), 'x') as f:\n"
                                       f"    f.write({nbformat.writes(notebook)!r})")
    assert written.returncode == 0, written.stderr


def alive(process):
    """Running, and not a zombie (an ended process whose status nobody has read yet)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def self_check_message(task_id, source):
    """What the self-check says of this code, with its lines joined as the test reads the page."""
    try:
        check(task_id, *load(source, task_id))
    except SelfCheckFailed as failed:
        return " ".join(str(failed).split())
    raise AssertionError(f"the self-check passed {task_id}'s code")


def task_cells():
    """{task id: index of its task cell} in the release notebook."""
    cells = release_notebook(CHAPTER)["cells"]
    found = {}
    for index, cell in enumerate(cells):
        grade_id = cell.get("metadata", {}).get("nbgrader", {}).get("grade_id", "")
        if grade_id.startswith("task_"):
            found[task_of_cell(grade_id).id] = index
    return found


class OpenedNotebook(NotebookPage):
    """The notebook the student opened from the Assignments tab (NotebookPage's cells and typing)."""

    def __init__(self, page):
        self.page = page
        page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
        page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=120_000)  # its kernel is ready


class User:
    """Someone logged into the hub in a browser page: their JupyterLab, once their server started."""

    def __init__(self, browser, hub, name, password):
        self.name, self.hub = name, hub
        self.context = browser.new_context(viewport=WINDOW)  # the user's cookies, for each tab they open
        self.page = self.context.new_page()
        self.page.set_default_timeout(60_000)
        self.page.goto(hub.url + "/hub/login")
        self.page.fill("#username_input", name)
        self.page.fill("#password_input", password)
        self.page.click("#login_submit")
        self.page.wait_for_url(f"**/user/{name}/lab**", timeout=180_000)  # the server started
        self.page.wait_for_selector("#jp-main-statusbar", timeout=120_000)


class Instructor(User):
    """The instructor in the page: nbgrader's formgrader, in a browser tab of its own."""

    def release(self, chapter):
        """The formgrader's address in a new tab, then the Release button in the chapter's row.
        Returns the frame policy the formgrader's page was sent with."""
        tab = self.context.new_page()
        response = tab.goto(self.hub.url + course_hub.FORMGRADER_URL)
        assert tab.url.startswith(f"{self.hub.url}/user/{self.name}/formgrader"), tab.url
        row = tab.locator("tr", has_text=chapter).first
        row.locator("td.release a").click()
        row.locator("td.status", has_text="released").wait_for()
        tab.close()
        return response.headers.get("content-security-policy", "")


class Student(User):
    """A student in the page: uses nbgrader's Assignments tab and Validate."""

    def assignments(self):
        """Nbgrader > Assignment List: the Assignments tab."""
        self.page.get_by_role("menuitem", name="Nbgrader").click()
        self.page.get_by_role("menuitem", name="Assignment List").click()
        panel = self.page.locator("#nbgrader-assignment-list")
        panel.wait_for()
        return panel

    def fetch(self):
        panel = self.assignments()
        panel.locator("#released_assignments_list").get_by_role("button", name="Fetch").click()
        panel.locator("#fetched_assignments_list").get_by_text(CHAPTER).first.wait_for()

    def solve(self, sources):
        """Open the fetched notebook from the Assignments tab, type each task's code into its cell, save."""
        panel = self.assignments()
        panel.locator("#fetched_assignments_list").get_by_text(CHAPTER, exact=True).first.click()  # unfolds it
        panel.locator("#fetched_assignments_list a", has_text=CHAPTER).last.click()  # the notebook's link
        notebook = OpenedNotebook(self.page)
        for task_id, index in task_cells().items():
            notebook.type_code(index, sources[task_id])
        self.page.keyboard.press("Control+S")
        self.page.wait_for_function("() => !document.querySelector('.jp-mod-dirty')")
        return notebook

    def validate(self):
        """The notebook's Validate button; the dialog's text, once validation has finished."""
        self.page.locator(".jp-NotebookPanel-toolbar").get_by_text("Validate", exact=True).click()
        dialog = self.page.locator(".jp-Dialog")
        dialog.wait_for(timeout=300_000)
        text = dialog.inner_text()
        dialog.get_by_role("button").last.click()
        return text

    def submit(self):
        panel = self.assignments()
        panel.locator("#fetched_assignments_list").get_by_role("button", name="Submit").click()
        panel.locator("#submitted_assignments_list").get_by_text(CHAPTER).first.wait_for()

    def chat(self, prompt):
        """Open the chat notebook (in a workspace of its own: only it is open), run its cell, ask
        the panel; (the answers seen as it grew, the line Stop left under it)."""
        from playwright.sync_api import TimeoutError as PlaywrightTimeout  # browsers.py says when it is missing

        self.page.goto(f"{self.hub.url}/user/{self.name}/lab/workspaces/chat/tree/{CHAT_NOTEBOOK}")
        notebook = OpenedNotebook(self.page)
        notebook.run(0, timeout=180)
        try:
            self.page.wait_for_selector(".widget-text input", timeout=120_000)
        except PlaywrightTimeout:  # say what the cell showed instead of the panel
            raise AssertionError(f"no chat panel under the cell, which shows: {notebook.outputs(0)}") from None
        seen = watch_a_chat_answer_grow(self.page, prompt)
        return seen, stop_the_chat_answer(self.page)

    def feedback(self):
        """Fetch Feedback, then "view feedback" (the file browser goes to the feedback's folder),
        then open the feedback page there: the text JupyterLab's HTML viewer shows."""
        panel = self.assignments()
        fetch = panel.get_by_role("button", name="Fetch Feedback")
        if fetch.count():
            fetch.first.click()
        panel.get_by_text("view feedback").first.click()
        self.page.locator(".jp-DirListing-item", has_text=f"{CHAPTER}.html").dblclick()
        body = self.page.frame_locator(".jp-HTMLViewer iframe").last.locator("body")
        body.get_by_text("Score").first.wait_for()
        return body.inner_text()


@pytest.fixture(scope="module")
def hub_dir(machine):
    folder = machine.folder()
    roster = folder / "roster.csv"
    roster.write_text("username\n" + "\n".join(machine.students) + "\n")
    course_hub.init(folder / "hub", roster=str(roster), instructor=machine.instructor, port=free_port(),
                    task_timeout=TASK_TIMEOUT)
    return folder / "hub"


@pytest.fixture(scope="module")
def browser():
    with headless_chromium("the hub's round trip (tests/hub/test_hub_round_trip.py)") as launched:
        yield launched


def test_a_class_round_trip_in_the_hub(machine, hub_dir, browser, tmp_path):
    laps, started = [], time.monotonic()

    def lap(what):  # the test's time, phase by phase (printed at the end: pytest -s shows it)
        laps.append((what, time.monotonic() - started - sum(seconds for _, seconds in laps)))

    hub = RunningHub(hub_dir)
    course = hub.hub["course_dir"]
    instructor_env = {"GPTCOURSE_GRADER_SEED": str(SEED), "GPTCOURSE_GRADER_DEVICE": "cpu"}
    shown = {}  # per student: their page, and what Validate said
    course_grader = None
    try:
        # 1. The instructor releases the chapter, in the formgrader.
        logins = passwords(hub_dir)
        instructor = Instructor(browser, hub, machine.instructor, logins[machine.instructor])
        # No page on the hub's address may frame the instructor's server (the formgrader included).
        assert instructor.release(CHAPTER).startswith("frame-ancestors 'none'")
        # JupyterLab has no formgrader panel, which could only show an empty frame.
        instructor.page.get_by_role("menuitem", name="Nbgrader").click()
        assert instructor.page.get_by_role("menuitem", name="Assignment List").count()
        assert not instructor.page.get_by_role("menuitem", name="Formgrader", exact=True).count()
        instructor.page.keyboard.press("Escape")
        lap("hub started, chapter released in the formgrader's tab")

        # 2. Two students: one right everywhere; one with a known mistake and an endless loop.
        right = solutions()
        wrong = dict(right, **{"2.1": MISTAKE.read_text()})
        wrong["2.3"], loop_line = with_endless_loop(right["2.3"])
        for name, sources in zip(machine.students, (right, wrong)):
            student = Student(browser, hub, name, logins[name])
            shown[name] = {"student": student}
            student.fetch()
            student.solve(sources)
            shown[name]["validate"] = student.validate()
            # No pop-up asking about Jupyter's news over the page (hub init turns it off).
            assert not student.page.get_by_text("official Jupyter news").count()
            student.submit()
            lap(f"{name}: logged in, fetched, solved, validated, submitted")
        good, bad = machine.students
        assert "Success! Your notebook passes all the tests." in shown[good]["validate"], shown[good]["validate"]
        report = " ".join(shown[bad]["validate"].split())
        assert report.count("The following cell failed") == 2, report
        assert self_check_message("2.1", MISTAKE.read_text()) in report  # the known mistake, named
        assert f"interrupted at line {loop_line} of your solution cell" in report, report
        assert f"stopped: it ran past the {TASK_TIMEOUT} s a task may run" in report, report
        assert "Traceback" not in report and "File \"" not in report and "CellTimeoutError" not in report, report

        # 3. The instructor collects, autogrades, and releases feedback.
        nbgrader_as(hub_dir, machine.instructor, "collect", CHAPTER, cwd=course)
        # 5. (started now) The course grader, on the same collected submissions: the same points.
        # It only reads submitted/, so it grades while nbgrader autogrades.
        course_grader = start_grader([f"{course}/submitted"], tmp_path / "grades", "--seed", str(SEED),
                                     "--device", "cpu", "--timeout", str(TASK_TIMEOUT))
        # Cells other than tasks may take 120 s under autograde (the course's configuration); here
        # the demo cells that call the endless loop would wait that long, twice. Chapter 02's other
        # cells take a few seconds at most (the whole master runs in about 6 s): 12 s is enough.
        nbgrader_as(hub_dir, machine.instructor, "autograde", CHAPTER, "--Execute.timeout=12", cwd=course,
                    extra_env=instructor_env)
        nbgrader_as(hub_dir, machine.instructor, "generate_feedback", CHAPTER, cwd=course)
        nbgrader_as(hub_dir, machine.instructor, "release_feedback", CHAPTER, cwd=course)
        lap("collected, autograded, feedback released")
        points = nbgrader_course.scores(course)
        tasks = [t.id for t in tasks_of(CHAPTER)]
        assert all(points[(good, t)][0] == points[(good, t)][1] > 0 for t in tasks), points
        assert points[(bad, "2.1")][0] == 0 and points[(bad, "2.3")][0] == 0, points
        assert all(points[(bad, t)][0] == points[(bad, t)][1] for t in tasks if t not in ("2.1", "2.3")), points

        # 4. Each student reads the feedback in the page.
        for name in machine.students:
            text = shown[name]["student"].feedback()
            total = sum(points[(name, t)][0] for t in tasks)
            assert re.search(rf"Score:\s*{total:g}(\.0)?\s*/\s*{sum(points[(name, t)][1] for t in tasks):g}", text), text
        feedback_of_bad = shown[bad]["student"].feedback().replace("\n", " ")
        assert "did not finish within" in feedback_of_bad and f"line {loop_line}" in feedback_of_bad
        lap("feedback read in the page")

        # The chat panel, for a student, through the hub (while the course grader works).
        write_chat_notebook(hub_dir, good)
        seen, stopped = shown[good]["student"].chat("Every effort moves you")
        assert len(seen) >= 4 and all(len(a) < len(b) for a, b in zip(seen, seen[1:])), seen
        assert "stopped" in stopped and "tokens/s" in stopped, stopped
        lap("a student's chat panel answered token by token and stopped")

        # 5. The course grader's points (started after collect): the same.
        graded = records_by_submission(course_grader.records())
        for name in machine.students:
            for task in tasks:
                assert graded[name][task]["points"] == points[(name, task)][0], (name, task, graded[name][task])
        lap("graded again by the course grader")
    finally:
        if course_grader is not None:
            course_grader.stop()
        running = hub.started()
        status = hub.press_ctrl_c()
    lap("stopped with Ctrl-C")
    print("\n".join(f"{seconds:6.0f} s  {what}" for what, seconds in laps))

    # 6. Ctrl-C stopped everything the hub started.
    assert status == 0, hub.log()
    assert not [p for p in running if alive(p)], "still running after Ctrl-C"
    assert not [p.info for p in psutil.process_iter(["username"]) if p.info["username"] in machine.accounts() and alive(p)]
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # closed connections may linger
        probe.bind((hub.hub["ip"], hub.hub["port"]))  # the hub's port is free again
