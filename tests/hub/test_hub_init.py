"""`python -m grader hub init` and `start`: what a hub's folder and the machine hold afterwards.

The term's hub and the workshop room's, with real unix accounts (root only: skipped otherwise,
saying so); the workshop room is then started, and a participant logs in with the room's access
code in headless Chromium, finds the workshop edition in their home and runs a cell in a kernel
that has the grader's memory cap.
"""
import configparser
import json
import os
import pwd
import re
import stat
import subprocess
import sys
import time

import psutil
import pytest

from browsers import headless_chromium
from grader.hub import commands as course_hub
from gptcourse.checking.tasks import chapter_names
from hub_machine import RunningHub, as_user, passwords, python_as, self_signed_certificate
from lab_in_browser import free_port


def mode(path):
    return stat.S_IMODE(os.stat(path).st_mode)


def members(group):
    import grp

    return set(grp.getgrnam(group).gr_mem)


def test_init_says_it_needs_root(monkeypatch, tmp_path):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(course_hub.HubError, match="run it as root"):
        course_hub.init(tmp_path / "hub")


def test_start_says_it_needs_root(monkeypatch, tmp_path):
    (tmp_path / "jupyterhub_config.py").write_text("")
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    with pytest.raises(course_hub.HubError, match="start it as root"):
        course_hub.start(tmp_path)


@pytest.mark.parametrize("text, problem", [
    ("name\nalice\n", "needs a 'username' column"),
    ("username\nAlice\n", "an account name is lower-case"),
    ("username\nalice\nalice\n", "names a student twice"),
    # Excel's "CSV" on Windows writes Latin-1: a name with an accent is not UTF-8.
    ("username,name\nalice,Ren\u00e9e\n".encode("latin-1"), "is not UTF-8 text: save it as 'CSV UTF-8'"),
])
def test_a_roster_it_cannot_use_is_named_with_the_reason(tmp_path, text, problem):
    roster = tmp_path / "roster.csv"
    roster.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(course_hub.HubError, match=problem):
        course_hub.read_roster(roster)


def test_the_command_line_reports_a_problem_in_one_line(tmp_path):
    result = subprocess.run([sys.executable, "-m", "grader", "hub", "start", str(tmp_path)],
                            capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip() == f"hub start: {tmp_path} holds no hub: write one with python -m grader hub init {tmp_path}"


@pytest.mark.parametrize("options, problem", [
    ({"instructor": "Teacher"}, "--instructor 'Teacher': an account name is lower-case"),
    ({"instructor": "a b"}, "--instructor 'a b'"),
    ({"workshop": 0}, "--workshop 0: a workshop room needs at least one participant"),
    ({"ip": "0.0.0.0"}, "logins .* would cross it in clear: give --ssl-cert"),
    ({"ip": "192.0.2.7"}, "give --ssl-cert FILE --ssl-key FILE, or --behind-tls-proxy"),
    ({"ssl_cert": "cert.pem"}, "--ssl-cert and --ssl-key go together"),
    ({"idle_timeout": -1}, "--idle-timeout is a number of seconds"),
])
def test_options_it_cannot_use_are_named_before_anything_changes(monkeypatch, tmp_path, options, problem):
    monkeypatch.setattr(os, "geteuid", lambda: 0)  # each check comes before the first change
    with pytest.raises(course_hub.HubError, match=problem):
        course_hub.init(tmp_path / "hub", **options)
    assert not (tmp_path / "hub").exists()


def test_a_private_key_others_can_read_is_refused(monkeypatch, tmp_path):
    cert, key = self_signed_certificate(tmp_path)
    os.chmod(key, 0o644)
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    with pytest.raises(course_hub.HubError, match="can be read by others than its owner: chmod 600"):
        course_hub.init(tmp_path / "hub", ip="0.0.0.0", ssl_cert=cert, ssl_key=key)
    other_cert, _ = self_signed_certificate(tmp_path / "other")
    os.chmod(key, 0o600)
    with pytest.raises(course_hub.HubError, match="could not be used together"):
        course_hub.init(tmp_path / "hub", ip="0.0.0.0", ssl_cert=other_cert, ssl_key=key)


def test_a_cache_folder_the_users_cannot_read_is_not_handed_to_their_servers(monkeypatch):
    """A process that used the tokenizer as root has TIKTOKEN_CACHE_DIR in root's home; handed to
    the users' servers, every user's get_encoding() failed on it (found by the round trip's chat
    panel, after an earlier test had used the tokenizer). Left out, each server keeps its own."""
    import shutil
    import tempfile

    shared = tempfile.mkdtemp(prefix="gpt-course-cache-", dir="/tmp")  # /tmp: open to everyone
    try:
        closed = os.path.join(shared, "closed")
        os.makedirs(os.path.join(closed, "tiktoken"))
        os.chmod(shared, 0o755)
        os.chmod(closed, 0o700)  # like /root
        monkeypatch.setenv("TIKTOKEN_CACHE_DIR", os.path.join(closed, "tiktoken"))
        monkeypatch.setenv("GPTCOURSE_CACHE_DIR", shared)
        environment = course_hub._server_environment()
        assert "TIKTOKEN_CACHE_DIR" not in environment and environment["GPTCOURSE_CACHE_DIR"] == shared
        monkeypatch.setenv("GPTCOURSE_CACHE_DIR", os.path.join(shared, "missing"))
        assert "GPTCOURSE_CACHE_DIR" not in course_hub._server_environment()
    finally:
        shutil.rmtree(shared)


def test_hub_start_restarts_jupyterhub_at_most_five_times_in_ten_minutes():
    """The supervisor's bound (RestartBudget, on a clock the test moves): five restarts within
    the window, the sixth refused (hub start then stops everything); restarts older than ten
    minutes no longer count."""
    now = [0.0]
    budget = course_hub.RestartBudget(clock=lambda: now[0])
    for minute in range(course_hub.RESTARTS):
        now[0] = minute * 60.0
        assert budget.spend() and budget.used() == minute + 1
    now[0] = 599.0  # still within ten minutes of the first
    assert not budget.spend() and budget.used() == course_hub.RESTARTS
    now[0] = 600.0  # the first restart has left the window: one more is allowed
    assert budget.spend() and budget.used() == course_hub.RESTARTS
    assert not budget.spend()
    now[0] = 600.0 + course_hub.RESTART_WINDOW  # all of them old: a fresh budget
    assert budget.spend() and budget.used() == 1


@pytest.mark.slow  # unix accounts, a course directory for every chapter
def test_a_term_hub(machine):
    folder = machine.folder()
    (folder / "roster.csv").write_text("username,email\n" + "".join(f"{s},{s}@example.org\n" for s in machine.students))
    hub_dir = folder / "hub"
    # As docs/hub.md says it: the command line.
    init = subprocess.run([sys.executable, "-m", "grader", "hub", "init", str(hub_dir), "--roster",
                           str(folder / "roster.csv"), "--instructor", machine.instructor, "--port", str(free_port())],
                          capture_output=True, text=True)
    assert init.returncode == 0, init.stderr
    hub = json.loads((hub_dir / "hub.json").read_text())
    assert f"python -m grader hub start {hub_dir}" in init.stdout
    # nbgrader's groups, the accounts, private homes, first passwords for root alone.
    assert members(course_hub.INSTRUCTOR_GROUP) >= {machine.instructor}
    assert members(course_hub.STUDENT_GROUP) >= set(machine.students)
    assert hub["users"] == [machine.instructor] + machine.students and hub["profile"] == "term"
    for user in hub["users"]:
        assert mode(os.path.expanduser(f"~{user}")) == 0o700
    assert mode(hub_dir / "state" / "passwords.csv") == 0o600 and set(passwords(hub_dir)) == set(hub["users"])
    # The exchange, as nbgrader expects it (everyone writes), with the sticky bit (nobody removes another's).
    assert mode(hub_dir / "exchange") == 0o1777
    # The instructor's course directory: every chapter generated, the instructor's own.
    course = hub["course_dir"]
    assert sorted(os.listdir(os.path.join(course, "release"))) == sorted(chapter_names())
    assert os.stat(os.path.join(course, "gradebook.db")).st_uid == os.stat(os.path.expanduser(f"~{machine.instructor}")).st_uid
    # What each role's server reads: students get no formgrader and no assignment creation.
    student = hub["config_path"]["student"]
    assert "nbgrader.server_extensions.formgrader': False" in open(os.path.join(student, "jupyter_server_config.py")).read()
    disabled = json.load(open(os.path.join(student, "labconfig", "page_config.json")))["disabledExtensions"]
    assert disabled["@jupyter/nbgrader:formgrader"] and disabled["@jupyter/nbgrader:create-assignment"]
    instructor = open(os.path.join(hub["config_path"]["instructor"], "nbgrader_config.py")).read()
    assert f"c.CourseDirectory.root = {course!r}" in instructor and "OwnerCheckedCollect" in instructor
    # Every kernel starts with the grader's memory cap.
    kernel = json.load(open(os.path.join(hub["environment"]["JUPYTER_PATH"], "kernels", "python3", "kernel.json")))
    assert f"--KernelMemoryCap.memory_mb={course_hub.KERNEL_MEMORY_MB}" in kernel["argv"]

    # The systemd unit: `hub start` on this hub, as root, started again whenever it stops.
    text = (hub_dir / course_hub.SYSTEMD_UNIT).read_text()
    unit = configparser.ConfigParser(strict=False, interpolation=None)  # Environment= may repeat
    unit.read_string(text)
    assert unit["Service"]["ExecStart"] == f"{sys.executable} -m grader hub start {hub_dir}"
    assert unit["Service"]["User"] == "root" and unit["Service"]["Restart"] == "always"
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    if os.environ.get("GPTCOURSE_DATA_MIRROR"):  # an offline room's data, as the servers get it
        assert f"\nEnvironment=GPTCOURSE_DATA_MIRROR={os.path.abspath(os.environ['GPTCOURSE_DATA_MIRROR'])}\n" in text

    # A second init changes no password and keeps the course directory.
    first = passwords(hub_dir)
    course_hub.init(hub_dir, roster=str(folder / "roster.csv"), instructor=machine.instructor, port=hub["port"])
    assert passwords(hub_dir) == first


IDLE_TIMEOUT = 30  # seconds: the room's idle timeout, short so that the test sees a server stopped


def servers_of(name):
    """The running single-user servers of the account `name`, by process."""
    uid = pwd.getpwnam(name).pw_uid
    return [p for p in psutil.process_iter(["uids", "cmdline"])
            if p.info["uids"] and p.info["uids"].real == uid and "jupyterhub-singleuser" in " ".join(p.info["cmdline"] or [])]


def log_in(browser, url, name, password):
    """A page of a browser context of its own (its own cookies), logged in at the hub; it waits
    until the user's JupyterLab is there. The hub's certificate is the test's own."""
    page = browser.new_context(ignore_https_errors=True).new_page()
    page.goto(url + "/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{name}/lab**", timeout=180_000)
    return page


def refused_login(page, name, password):
    """The text of the login page the hub answers a refused login with. The click only starts
    the page's loading, so the test waits for the new page to have loaded before it reads it
    (reading at once once found an empty body)."""
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    with page.expect_navigation(wait_until="load", timeout=60_000):
        page.click("#login_submit")
    page.locator("#login_submit").wait_for(timeout=60_000)
    return page.locator("body").inner_text()


def frame_policy(page, url, name):
    """The Content-Security-Policy the user's server sends with its JupyterLab page."""
    return page.goto(f"{url}/user/{name}/lab").headers.get("content-security-policy", "")


@pytest.mark.slow  # a browser, a hub and three servers
def test_a_workshop_room(machine):
    """Two participants and the host, over HTTPS with a certificate made here. One access code
    for the participants, the admin's password for the host; each participant finds the workshop
    edition in their home, their kernel has the grader's memory cap, and a user's own Jupyter
    configuration does not apply. A server left idle is stopped after the idle timeout; a server
    whose kernel runs a silent cell is kept, and lives through jupyterhub and its proxy killed
    (-9). SIGHUP (a closed SSH session) stops it all."""
    folder = machine.folder()
    cert, key = self_signed_certificate(folder / "tls")
    hub_dir = folder / "hub"
    host = machine.prefix + "h"  # an account of this hub's own (the term hub above made the instructor's)
    init = subprocess.run([sys.executable, "-m", "grader", "hub", "init", str(hub_dir), "--workshop", "2",
                           "--participant-prefix", machine.participant_prefix, "--instructor", host,
                           "--port", str(free_port()), "--memory-mb", "512", "--ssl-cert", cert, "--ssl-key", key,
                           "--idle-timeout", str(IDLE_TIMEOUT)], capture_output=True, text=True)
    assert init.returncode == 0, init.stderr
    hub = json.loads((hub_dir / "hub.json").read_text())
    first, second = f"{machine.participant_prefix}01", f"{machine.participant_prefix}02"
    assert hub["users"] == [host, first, second] and hub["groups"][course_hub.INSTRUCTOR_GROUP] == [host]
    state = hub_dir / course_hub.STATE
    assert mode(state / "access_code") == 0o600 and mode(state / "admin_password") == 0o600
    code, admin_password = (state / "access_code").read_text().strip(), (state / "admin_password").read_text().strip()
    for user in (first, second):
        edition = os.path.expanduser(f"~{user}/workshop")
        assert sorted(os.listdir(edition)) == sorted(f"{c}.ipynb" for c in chapter_names())
        assert os.stat(edition).st_uid == os.stat(os.path.expanduser(f"~{user}")).st_uid
    # The participants cannot read each other's work.
    result = python_as(hub_dir, first, f"import os; os.listdir(os.path.expanduser('~{second}'))")
    assert "PermissionError" in result.stderr
    # The second participant's own Jupyter configuration would let any page frame their server.
    planted = as_user(hub_dir, second, "bash", "-c", "mkdir -p ~/.jupyter && echo \"c.ServerApp.tornado_settings = "
                      "{'headers': {'Content-Security-Policy': 'frame-ancestors *'}}\" > ~/.jupyter/jupyter_server_config.py")
    assert planted.returncode == 0, planted.stderr

    running = RunningHub(hub_dir)
    assert running.url.startswith("https://")
    # Every start brings the database up to date with an upgraded JupyterHub.
    assert "--upgrade-db" in running.process_named("jupyterhub").cmdline()
    try:
        with headless_chromium("the workshop hub's test (tests/hub/test_hub_init.py)") as browser:
            page = browser.new_context(ignore_https_errors=True).new_page()  # the certificate the test made
            page.goto(running.url + "/hub/login")
            assert "Invalid username or password" in refused_login(page, first, "not the code")
            # The code is not the host's password.
            assert "Invalid username or password" in refused_login(page, host, code)
            page.close()
            page = log_in(browser, running.url, first, code)
            first_context = page.context
            assert page.url.startswith("https://")
            page.goto(f"{running.url}/user/{first}/lab/tree/workshop/02_attention.ipynb")
            page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=60_000)
            page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=120_000)
            cell = page.locator(".jp-Notebook .jp-Cell").first
            cell.locator(".jp-InputPrompt").click()
            page.keyboard.press("b")  # a new cell below, in command mode
            page.keyboard.press("Enter")
            page.keyboard.insert_text("import resource; print('cap', resource.getrlimit(resource.RLIMIT_DATA)[0])")
            page.keyboard.press("Shift+Enter")
            output = page.locator(".jp-OutputArea-output", has_text="cap ").first
            output.wait_for(timeout=60_000)
            cap = int(re.search(r"cap (-?\d+)", output.inner_text()).group(1))
            # A long silent cell (a training run that prints nothing), then the tab is closed.
            page.keyboard.press("Escape")
            page.keyboard.press("b")
            page.keyboard.press("Enter")
            page.keyboard.insert_text("import time; time.sleep(900)")
            page.keyboard.press("Shift+Enter")
            page.wait_for_selector("#jp-main-statusbar >> text=Busy", timeout=30_000)
            page.close()  # the browser stays logged in (first_context keeps its cookies)
            busy_since = time.monotonic()

            page = log_in(browser, running.url, host, admin_password)
            assert frame_policy(page, running.url, host).startswith("frame-ancestors 'none'")
            page.close()
            page = log_in(browser, running.url, second, code)
            assert frame_policy(page, running.url, second).startswith("frame-ancestors 'none'")
            page.close()
            # The hub's database, written by now, is root's alone like the rest of state/.
            assert (state / "jupyterhub.sqlite").exists()
            result = python_as(hub_dir, first, f"open({str(state / 'jupyterhub.sqlite')!r}, 'rb')")
            assert "PermissionError" in result.stderr

            # Idle culling: the second participant's server, idle since its tab closed, is stopped...
            deadline = time.monotonic() + IDLE_TIMEOUT + 90
            while servers_of(second) and time.monotonic() < deadline:
                time.sleep(2)
            assert not servers_of(second), f"an idle server was not stopped within {IDLE_TIMEOUT + 90} s:\n{running.log()}"
            # ... and the first's, whose kernel has run a silent cell for longer than the timeout, is kept.
            assert time.monotonic() - busy_since > IDLE_TIMEOUT + 5
            kept = servers_of(first)
            assert kept, f"a server whose kernel was busy was stopped as idle:\n{running.log()}"
            kernel = busy_kernel(kept[0])

            # Faults: jupyterhub killed, then its proxy. `hub start` starts jupyterhub again; JupyterHub
            # starts its proxy again; the first participant's server and busy kernel live on, and
            # their browser, still logged in, opens JupyterLab without logging in again.
            running.kill("jupyterhub")
            running.wait_for_log("the hub answers again")
            proxy = running.kill("configurable-http-proxy")
            running.wait_until_it_answers()
            assert running.process_named("configurable-http-proxy").pid != proxy.pid
            assert [p.pid for p in servers_of(first)] == [p.pid for p in kept] and alive(kernel)
            page = first_context.new_page()
            page.goto(f"{running.url}/user/{first}/lab")
            page.wait_for_selector("#jp-main-statusbar", timeout=60_000)
            assert f"/user/{first}/lab" in page.url, page.url
            started = running.started()
    finally:
        status = running.hang_up()
    assert status == 0, running.log()
    # SIGHUP stopped everything the hub started: the proxy, the culler, the servers, the kernel.
    assert not [p for p in started if alive(p)], "still running after SIGHUP"
    # Capped: what the kernel held once torch was loaded, plus 512 MB (never unlimited, -1).
    assert 512 * 2**20 < cap < 4 * 2**30


def busy_kernel(server):
    """The kernel the server started (its only child running ipykernel)."""
    kernels = [p for p in server.children(recursive=True) if "ipykernel" in " ".join(p.cmdline())]
    assert len(kernels) == 1, kernels
    return kernels[0]


def alive(process):
    """Running, and not a zombie (an ended process whose status nobody has read yet)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
