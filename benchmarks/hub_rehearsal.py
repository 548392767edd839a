"""A class rehearsal on the course hub: a room logs in, works, presses Validate and Submit at once,
while the hub and its proxy are killed; then the host collects and the course grader grades.

    sudo .venv/bin/python benchmarks/hub_rehearsal.py [--participants 30] [--ramp 120] [--storm 60]
        [--faults] [--browsers 2] [--term] [--json OUT]

Root only, like the hub's tests: it makes real unix accounts (names no person uses: gcx + four
hex digits) and deletes them, their homes and every process they ran afterwards.

1. A fresh hub in a temporary folder, with the commands a host runs: `hub init DIR --workshop N`
   (or `--roster` with `--term`: PAM accounts and their passwords), `hub start DIR`. The host
   releases chapter 02 with nbgrader, as the host's own account.
2. The log-in ramp: participant i logs in at i * R / N seconds, through the hub's real login page
   (the room's access code, or their password), which starts their server. `--browsers K` of them
   log in in headless Chromium (the page is part of the rehearsal: the login page, JupyterLab,
   and after their first check the fetched notebook opened in the page with its kernel); the
   others with `requests`.
3. Work: each participant asks for a token of their own (JupyterHub's REST API), fetches chapter
   02 (the Assignments tab's request), starts a kernel through Jupyter Server's REST API and runs,
   over its websocket (the websocket-client library, the Jupyter messaging protocol), the
   chapter's set-up cell, a filled-in Task 2.1 and its check cell.
4. The storm: within S seconds every participant saves their filled-in notebook (the contents
   API), presses Validate and Submit (the Assignments tab's requests). A request that fails (the
   hub restarting) is pressed again, as a participant would; a Submit is pressed again only when
   the assignment list shows no submission, so nothing is handed in twice.
5. Faults (`--faults`), during the storm: SIGKILL the jupyterhub process; once it answers again,
   SIGKILL the proxy; then one participant's kernel fills its memory. Each fault: recovered or
   not, how long it took, and how many users' servers were lost.
6. The end: the host collects (nbgrader collect, as the host); every participant's submission must
   be there once; the course grader grades the collected notebooks (full points for each).

It prints and writes (--json) these figures: participants, logins_ok, spawn_p50_s, spawn_p95_s,
spawn_max_s, first_check_p95_s (from the login to the check's result), validate_p95_s,
validate_failures (a failed Validate is said there; that participant still submits),
submitted, collected, lost, duplicated, faults, peak_rss_mb, peak_rss_per_participant_mb (the
processes' resident memory added up: torch's shared libraries counted once per process), the
machine's memory in use above what it used before (peak_machine_memory_mb, per participant too:
what a host must have), the hub's own /hub/metrics (spawn and request durations), and the machine (cores, memory).
tests/hub/test_hub_rehearsal.py runs it small (4 participants, faults on).
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import uuid
from datetime import datetime, timezone

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "course"), REPO, os.path.join(REPO, "tests")]

import psutil  # noqa: E402
import requests  # noqa: E402
import websocket  # noqa: E402  (websocket-client)

from factory import filled_notebook, grade_id, manifest  # noqa: E402
from grader.hub import accounts, commands as course_hub  # noqa: E402
from hub_machine import HubMachine, RunningHub, passwords  # noqa: E402
from lab_in_browser import free_port  # noqa: E402

CHAPTER = "02_attention"
NOTEBOOK = f"{CHAPTER}/{CHAPTER}.ipynb"  # where nbgrader's fetch puts it, in the participant's home
SPAWN_WAIT = 300  # seconds a participant waits for their server before giving up
PRESSES = 6  # how often a participant presses a button that failed, before giving up


class Participant:
    """One person of the room: their session with the hub, their server, their timings."""

    def __init__(self, hub_url, name, password):
        self.hub_url, self.name, self.password = hub_url, name, password
        self.session = requests.Session()
        self.token = None
        self.kernel = None  # (kernel id, websocket) of the notebook they work in
        self.times = {}
        self.problems = []
        self.presses = 0

    @property
    def server(self):
        return f"{self.hub_url}/user/{self.name}"

    def api(self, method, path, **options):
        headers = {"Authorization": f"token {self.token}"}
        return self.session.request(method, self.server + path, headers=headers, timeout=300, **options)

    # -- 2. log in, and the server starts ------------------------------------------------------
    def log_in(self):
        """The hub's login form, as a browser posts it; then the server the login started."""
        started = time.monotonic()
        self.times["login_at"] = started
        page = self.session.get(self.hub_url + "/hub/login", timeout=60)
        page.raise_for_status()
        answer = self.session.post(self.hub_url + "/hub/login", timeout=120, data={
            "username": self.name, "password": self.password, "_xsrf": self.session.cookies.get("_xsrf", "")})
        if answer.status_code >= 400 or "/hub/login" in answer.url:
            raise RuntimeError(f"the login was refused ({answer.status_code})")
        self._take_token()
        self._wait_for_server()
        self.times["spawn_s"] = time.monotonic() - started

    def adopt_browser_login(self, cookies):
        """A participant who logged in in Chromium: the page's cookies, then the same requests."""
        for cookie in cookies:
            self.session.cookies.set(cookie["name"], cookie["value"], path=cookie.get("path", "/"))
        self._take_token()

    def _take_token(self):
        """A token of the participant's own, as JupyterHub's token page makes one (the REST API,
        with the login's cookie)."""
        xsrf = self.session.cookies.get("_xsrf", path="/hub/") or self.session.cookies.get("_xsrf", "")
        answer = self.session.post(f"{self.hub_url}/hub/api/users/{self.name}/tokens", timeout=60,
                                   headers={"X-XSRFToken": xsrf}, json={"note": "class rehearsal", "expires_in": 7200})
        answer.raise_for_status()
        self.token = answer.json()["token"]

    def _wait_for_server(self):
        deadline = time.monotonic() + SPAWN_WAIT
        while time.monotonic() < deadline:
            try:
                answer = self.api("GET", "/api/status")
                if answer.status_code == 200 and "started" in answer.json():
                    return
            except (requests.RequestException, ValueError):
                pass
            time.sleep(1)
        raise RuntimeError(f"the server did not start within {SPAWN_WAIT} s")

    # -- 3. work ----------------------------------------------------------------------------------
    def first_check(self, cells):
        """Fetch the chapter, start a kernel, run the set-up cell, Task 2.1 and its check."""
        fetched = self.press("POST", "/assignments/fetch", data={"course_id": course_hub.COURSE_ID,
                                                                   "assignment_id": CHAPTER}).json()
        if not fetched.get("success"):
            raise RuntimeError(f"Fetch failed: {str(fetched)[:300]}")
        answer = self.api("POST", "/api/kernels", json={"name": "python3"})
        answer.raise_for_status()
        self.kernel = (answer.json()["id"], None)
        for code in cells:
            said = self.execute(code)
        if "✔" not in said:
            raise RuntimeError(f"the check of Task 2.1 did not pass: {said[-300:]}")
        self.times["first_check_s"] = time.monotonic() - self.times["login_at"]

    def channel(self, timeout=60):
        """The kernel's websocket, connected again if it was lost (JupyterLab does the same when
        the proxy in between restarts)."""
        kernel_id, channel = self.kernel
        if channel is not None and channel.connected:
            return channel
        url = self.server.replace("http", "ws", 1) + f"/api/kernels/{kernel_id}/channels"
        deadline = time.monotonic() + timeout
        while True:
            try:
                channel = websocket.create_connection(url, header=[f"Authorization: token {self.token}"], timeout=300)
                self.kernel = (kernel_id, channel)
                return channel
            except (OSError, websocket.WebSocketException):
                if time.monotonic() > deadline:
                    raise
                time.sleep(1)

    def execute(self, code, timeout=300):
        """Run `code` in the participant's kernel (an execute_request on its websocket); what the
        cell printed, once its execute_reply came."""
        for attempt in range(3):
            try:
                return self._execute(code, timeout)
            except (websocket.WebSocketException, OSError):
                # The proxy in between restarted: the page connects again, and the participant
                # runs the cell again.
                self.kernel = (self.kernel[0], None)
                self.presses += 1
        raise RuntimeError("the kernel's websocket was lost three times")

    def _execute(self, code, timeout):
        channel = self.channel()
        msg_id = uuid.uuid4().hex
        channel.send(json.dumps({
            "header": {"msg_id": msg_id, "username": self.name, "session": self.name, "msg_type": "execute_request",
                       "version": "5.3", "date": datetime.now(timezone.utc).isoformat()},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": True, "user_expressions": {},
                        "allow_stdin": False, "stop_on_error": True}}))
        # Done when both have come: the reply on the shell channel, and the kernel's "idle" on
        # iopub, after the cell's last output (the two channels are not ordered between them).
        printed, replied, idle, deadline = [], False, False, time.monotonic() + timeout
        while not (replied and idle):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the cell did not finish within {timeout} s")
            message = _message(channel.recv())
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            content, kind = message.get("content", {}), message["msg_type"]
            if kind == "stream":
                printed.append(content.get("text", ""))
            elif kind == "error":
                printed.append("\n".join(content.get("traceback", [])) or content.get("evalue", ""))
            elif kind in ("execute_result", "display_data"):
                printed.append(content.get("data", {}).get("text/plain", ""))
            elif kind == "execute_reply":
                replied = True
            elif kind == "status" and content.get("execution_state") == "idle":
                idle = True
        return "".join(printed)

    # -- 4. the storm ----------------------------------------------------------------------------
    def validate_and_submit(self, notebook):
        self.press("PUT", f"/api/contents/{NOTEBOOK}", json={"type": "notebook", "format": "json", "content": notebook})
        started = time.monotonic()
        result = self.press("POST", "/assignments/validate", data={"path": NOTEBOOK}).json()
        self.times["validate_s"] = time.monotonic() - started
        if not result.get("success"):
            # Said as a figure (validate_failures); a participant whose Validate failed still submits.
            self.problems.append(f"Validate failed: ...{str(result.get('value'))[-600:]}")
            self.times["validate_failed"] = True
        for _ in range(PRESSES):
            if self.submitted():
                self.times["submitted"] = True
                return
            self.press("POST", "/assignments/submit", data={"course_id": course_hub.COURSE_ID, "assignment_id": CHAPTER})
        raise RuntimeError("Submit did not go through")

    def submitted(self):
        """Whether the Assignments tab lists a submission of the chapter (asked again on failure)."""
        listed = self.press("GET", f"/assignments?course_id={course_hub.COURSE_ID}").json()
        return any(a.get("assignment_id") == CHAPTER and a.get("status") == "submitted" for a in listed.get("value", []))

    def press(self, method, path, **options):
        """A request a participant makes with a button: pressed again, a few seconds later, when it
        fails. While jupyterhub or its proxy restarts, a request answers 502 or 503, or not at
        all; a rehearsal of 25 also saw two 404s for a participant's own notebook in those seconds."""
        for attempt in range(PRESSES):
            try:
                answer = self.api(method, path, **options)
                if answer.ok:
                    return answer
            except requests.ConnectionError:
                pass
            self.presses += 1
            time.sleep(2 + 2 * attempt)
        raise RuntimeError(f"{method} {path} failed {PRESSES} times")


def _message(frame):
    """A Jupyter message from a websocket frame: JSON text, or Jupyter Server's binary form (a
    message with buffers: its JSON part)."""
    if isinstance(frame, bytes):
        from jupyter_server.services.kernels.connection.base import deserialize_binary_message

        return deserialize_binary_message(frame)
    if not frame:  # what recv() returns once the server closed the connection
        raise websocket.WebSocketConnectionClosedException("the kernel's websocket was closed")
    try:
        return json.loads(frame)
    except ValueError:
        return {}


def percentile(values, share):
    if not values:
        return None
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))], 1)


def memory_in_use():
    """The machine's memory in use (total less available), in bytes."""
    memory = psutil.virtual_memory()
    return memory.total - memory.available


class MemorySampler(threading.Thread):
    """Once a second: the resident memory of everything `hub start` runs (the hub, the proxy, the
    servers, the kernels, Validate's kernels) added up, which counts the libraries they share
    (torch's) once per process, so an upper bound; and the machine's memory in use above what it
    used before the hub started (`machine_before`), which is what a host must have. Their peaks."""

    def __init__(self, pid, machine_before):
        super().__init__(daemon=True)
        self.pid, self.peak, self.baseline, self.stopped = pid, 0, None, threading.Event()
        self.machine_before, self.machine_peak = machine_before, 0

    def run(self):
        while not self.stopped.wait(1):
            try:
                tree = [psutil.Process(self.pid)] + psutil.Process(self.pid).children(recursive=True)
            except psutil.NoSuchProcess:
                return
            total = 0
            for process in tree:
                try:
                    total += process.memory_info().rss
                except psutil.NoSuchProcess:
                    pass
            if self.baseline is None:
                self.baseline = total
            self.peak = max(self.peak, total)
            self.machine_peak = max(self.machine_peak, memory_in_use() - self.machine_before)


def hub_metrics(hub_url, token):
    """The hub's own numbers (Prometheus text at /hub/metrics): spawn and request durations."""
    text = requests.get(hub_url + "/hub/metrics", headers={"Authorization": f"token {token}"}, timeout=60).text
    found = {}
    for name in ("jupyterhub_server_spawn_duration_seconds", "jupyterhub_request_duration_seconds"):
        total = sum(float(v) for v in re.findall(rf"^{name}_sum{{[^}}]*}} (\S+)$", text, re.M))
        count = sum(float(v) for v in re.findall(rf"^{name}_count{{[^}}]*}} (\S+)$", text, re.M))
        found[name] = {"count": int(count), "mean_s": round(total / count, 3) if count else None}
    return found


TRAINING_STEPS = """\
import torch
from gptcourse.pretrain import cpu_run

run = cpu_run()  # chapter 05's small model on a CPU
torch.manual_seed(0)
model = GPTModel(run.cfg)
optimizer = torch.optim.AdamW(model.parameters(), lr=run.peak_lr, weight_decay=run.weight_decay)
for step in range(10):
    batch = torch.randint(0, run.cfg["vocab_size"], (run.batch_size, run.cfg["context_length"] + 1))
    logits = model(batch[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
print("trained", float(loss))
"""


def unique_mb(process):
    """The memory only this process holds (USS: not torch's libraries, which all kernels share)."""
    return process.memory_full_info().uss / 2**20


def measure_a_participant(running, person):
    """What one participant costs the machine, measured on their own processes: their idle server,
    their kernel with torch and chapter 02 loaded, and that kernel training chapter 05's small model
    (the peak, sampled every 0.2 s)."""
    server = next(p for p in running.started() if p.username() == person.name and
                  "jupyterhub-singleuser" in " ".join(_cmdline(p)))
    kernel = next(p for p in server.children(recursive=True) if "ipykernel" in " ".join(_cmdline(p)))
    sizes = {"idle_server_mb": round(unique_mb(server)), "kernel_with_torch_mb": round(unique_mb(kernel))}
    # Chapter 04's set-up, carried attention and filled-in tasks: its GPTModel.
    chapter_04 = [cell for cell in filled_notebook("04_gpt_model")["cells"]
                  if grade_id(cell) in ("setup", "carry_3_2") or grade_id(cell).startswith("task_4")]
    for code in ("".join(cell["source"]) for cell in chapter_04):
        person.execute(code)
    peak, done = [0.0], threading.Event()

    def sample():
        while not done.wait(0.2):
            try:
                peak[0] = max(peak[0], unique_mb(kernel))
            except psutil.NoSuchProcess:
                return
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    said = person.execute(TRAINING_STEPS)
    done.set()
    sampler.join()
    if "trained" not in said:
        raise RuntimeError(f"the training steps did not run: {said[-300:]}")
    sizes["kernel_training_chapter_05_mb"] = round(peak[0])
    return sizes


def code_cells(participant_notebook):
    """The set-up cell, the filled-in Task 2.1 and its check, as a participant runs them first."""
    by_id = {grade_id(cell): "".join(cell["source"]) for cell in participant_notebook["cells"]}
    return [by_id["setup"], by_id["task_2_1"], by_id["check_2_1"]]


def rehearse(machine, participants=30, ramp=120, storm=60, faults=False, browsers=2, term=False, sizing=False,
             log=print):
    """Play a class through a fresh hub; returns the figures (a dict)."""
    folder = machine.folder()
    hub_dir = folder / "hub"
    host = machine.instructor
    names = [f"{machine.participant_prefix}{i:02d}" for i in range(1, participants + 1)]
    command = [sys.executable, "-m", "grader", "hub", "init", str(hub_dir), "--instructor", host,
               "--port", str(free_port()), "--idle-timeout", "0"]
    if term:
        (folder / "roster.csv").write_text("username\n" + "\n".join(names) + "\n")
        command += ["--roster", str(folder / "roster.csv")]
    else:
        command += ["--workshop", str(participants), "--participant-prefix", machine.participant_prefix]
    started = time.monotonic()
    subprocess.run(command, check=True, capture_output=True, text=True)
    log(f"hub init: {time.monotonic() - started:.0f} s")
    state = hub_dir / course_hub.STATE
    secret = passwords(hub_dir) if term else {n: (state / "access_code").read_text().strip() for n in names}
    hub = json.loads((hub_dir / "hub.json").read_text())
    nbgrader_env = dict(hub["environment"], JUPYTER_CONFIG_PATH=hub["config_path"]["instructor"])
    accounts.run_as(host, [sys.executable, "-m", "nbgrader", "release_assignment", CHAPTER], "releasing the chapter",
                    env=nbgrader_env, cwd=hub["course_dir"])

    machine_before = memory_in_use()
    running = RunningHub(hub_dir)
    sampler = MemorySampler(running.process.pid, machine_before)
    sampler.start()
    room = [Participant(running.url, name, secret[name]) for name in names]
    notebook = filled_notebook(CHAPTER)
    cells = code_cells(notebook)
    fault_log = []
    try:
        # 2 and 3: the ramp, then each participant's first check, each in a thread of their own.
        threads = []
        with_browser = room[:browsers]
        for index, person in enumerate(room):
            delay = index * ramp / max(1, participants)
            if person in with_browser:
                continue
            threads.append(_start(lambda p=person, d=delay: (time.sleep(d), p.log_in(), p.first_check(cells))))
        if with_browser:
            _log_in_with_chromium(with_browser, running.url, cells, log)
        for thread in threads:
            thread.join()
        ready = [p for p in room if "first_check_s" in p.times]
        log(f"logged in and checked: {len(ready)} of {participants}")
        host_token = _admin_token(running.url, host, passwords(hub_dir)[host] if term
                                  else (state / "admin_password").read_text().strip())
        # The hub's own figures now: a restart (the faults) starts them again from nothing.
        metrics = {"after_the_logins": hub_metrics(running.url, host_token)}
        measured = next((p for p in ready if p not in with_browser), None)
        sizes = measure_a_participant(running, measured) if sizing and measured else None
        if sizes:
            log(f"one participant: {sizes}")

        # 4 and 5: the storm, with the faults in the middle of it.
        storm_threads = []
        for index, person in enumerate(ready):
            delay = index * storm / max(1, len(ready))
            storm_threads.append(_start(lambda p=person, d=delay: (time.sleep(d), p.validate_and_submit(notebook))))
        if faults:
            time.sleep(min(10, storm / 3))
            fault_log = inject_faults(running, room, log)
        for thread in storm_threads:
            thread.join()
        for person in room:
            for problem in person.problems:
                log(f"{person.name}: {problem}")

        # 6. The host collects; the course grader grades what was collected.
        collected = collect(host, hub, nbgrader_env)
        graded = grade(hub["course_dir"], folder / "grades", log)
        inbound = hub_dir / "exchange" / course_hub.COURSE_ID / "inbound"
        handed_in = [entry.split("+")[0] for entry in os.listdir(inbound)]
        metrics["at_the_end"] = hub_metrics(running.url, host_token)
    finally:
        sampler.stopped.set()
        running.press_ctrl_c()
    submitted = [p.name for p in room if p.times.get("submitted")]
    spawn = [p.times["spawn_s"] for p in room if "spawn_s" in p.times]
    full = sum(task["points"] for task in manifest()[CHAPTER]["tasks"].values())
    figures = {
        "participants": participants,
        "logins_ok": len(spawn),
        "spawn_p50_s": percentile(spawn, 0.5), "spawn_p95_s": percentile(spawn, 0.95),
        "spawn_max_s": round(max(spawn), 1) if spawn else None,
        "first_check_p95_s": percentile([p.times["first_check_s"] for p in room if "first_check_s" in p.times], 0.95),
        "validate_p95_s": percentile([p.times["validate_s"] for p in room if "validate_s" in p.times], 0.95),
        "validate_failures": sum(1 for p in room if p.times.get("validate_failed")),
        "submitted": len(submitted),
        "collected": len(collected),
        "lost": len(set(submitted) - set(collected)),
        "duplicated": len(handed_in) - len(set(handed_in)),
        "graded_in_full": sum(1 for name in collected if graded.get(name) == full),
        "presses_again": sum(p.presses for p in room),
        "pages_that_opened_the_notebook": sum(1 for p in room if p.times.get("page_opened_notebook")),
        "faults": fault_log,
        "peak_rss_mb": round(sampler.peak / 2**20),
        "peak_rss_per_participant_mb": round((sampler.peak - (sampler.baseline or 0)) / 2**20 / participants),
        "peak_machine_memory_mb": round(sampler.machine_peak / 2**20),
        "peak_machine_memory_per_participant_mb": round(sampler.machine_peak / 2**20 / participants),
        "hub_metrics": metrics,
        "one_participant_mb": sizes,
        "problems": {p.name: p.problems for p in room if p.problems},
        "machine": {"cores": os.cpu_count(), "memory_gib": round(psutil.virtual_memory().total / 2**30, 1)},
    }
    return figures


def _start(work):
    """A thread running `work`; a participant's failure is kept in their problems, never raised."""
    def run():
        try:
            work()
        except Exception as exc:  # one participant's trouble is a figure, not the end of the rehearsal
            person = work.__defaults__[0] if work.__defaults__ else None
            if person is not None:
                person.problems.append(f"{type(exc).__name__}: {exc}")
    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _log_in_with_chromium(people, url, cells, log):
    """These participants log in in headless Chromium and open chapter 02 from their workshop
    folder (the page and its kernel), then go on with requests, with the page's cookies."""
    from browsers import headless_chromium

    with headless_chromium("the class rehearsal (benchmarks/hub_rehearsal.py)") as browser:
        for person in people:
            try:
                person.times["login_at"] = started = time.monotonic()
                context = browser.new_context()
                page = context.new_page()
                page.goto(url + "/hub/login")
                page.fill("#username_input", person.name)
                page.fill("#password_input", person.password)
                page.click("#login_submit")
                page.wait_for_url(f"**/user/{person.name}/lab**", timeout=SPAWN_WAIT * 1000)
                person.times["spawn_s"] = time.monotonic() - started
                page.wait_for_selector("#jp-main-statusbar", timeout=120_000)
                person.adopt_browser_login(context.cookies())
                person.first_check(cells)
                # The fetched chapter, opened in the page from their home: JupyterLab shows the
                # notebook and starts a kernel for it (one more kernel, as a person's tab has).
                page.goto(f"{url}/user/{person.name}/lab/tree/{NOTEBOOK}")
                page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=120_000)
                page.wait_for_selector("#jp-main-statusbar >> text=Idle", timeout=120_000)
                person.times["page_opened_notebook"] = True
                context.close()
            except Exception as exc:
                person.problems.append(f"{type(exc).__name__}: {exc}")
                log(f"{person.name} (Chromium): {exc}")


def inject_faults(running, room, log):
    """SIGKILL jupyterhub, then the proxy, then fill one participant's kernel's memory."""
    found = []

    def servers():
        return {p.pid for p in running.started() if "jupyterhub-singleuser" in " ".join(_cmdline(p))}

    def owners(pids):
        found = {}
        for pid in pids:
            try:
                found[pid] = psutil.Process(pid).username()
            except psutil.NoSuchProcess:
                pass
        return found

    for name in ("jupyterhub", "configurable-http-proxy"):
        before = servers()
        whose = owners(before)
        killed = running.kill(name)
        at = time.monotonic()
        recovered = _wait_for_a_new(running, name, killed.pid)
        lost = before - servers()
        found.append({"fault": f"SIGKILL {name}", "recovered": recovered,
                      "recovery_s": round(time.monotonic() - at, 1) if recovered else None,
                      "servers_lost": len(lost)})
        if lost:
            # What became of each: gone, or running but no longer under `hub start` (a server the
            # rehearsal cannot see is not necessarily a server the hub stopped), and the hub's
            # last words on its user.
            found[-1]["lost_servers"] = [_what_became_of(pid, whose.get(pid, "?"), running) for pid in sorted(lost)]
        log(f"fault: {found[-1]}")
    person = next((p for p in room if p.kernel), None)
    if person:
        at = time.monotonic()
        try:
            said = person.execute("hoard = []\nwhile True:\n    hoard.append(bytearray(64 * 2**20))", timeout=120)
            alive = "2" in person.execute("del hoard\nprint(1 + 1)")
        except RuntimeError as exc:
            said, alive = str(exc), False
        # The kernel's memory cap stops the cell with a MemoryError; the kernel and its server live on.
        found.append({"fault": "a kernel filling its memory", "recovered": alive and "MemoryError" in said,
                      "recovery_s": round(time.monotonic() - at, 1), "servers_lost": 0 if alive else 1})
        log(f"fault: {found[-1]}")
    return found


def _what_became_of(pid, user, running):
    """A server's process that the rehearsal no longer finds among the hub's: whose it was, whether
    it still runs (and under which parent), and the hub's last log lines about its user."""
    try:
        state = {"pid": pid, "user": user, "still_running": True, "parent": psutil.Process(pid).ppid()}
    except psutil.NoSuchProcess:
        state = {"pid": pid, "user": user, "still_running": False}
    state["log"] = [line[:300] for line in running.log(tail=10**6).splitlines() if user in line][-12:]
    return state


def _wait_for_a_new(running, name, old_pid, timeout=60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if running.process_named(name).pid != old_pid:
                running.wait_until_it_answers(timeout=max(1, deadline - time.monotonic()))
                return True
        except AssertionError:
            pass
        time.sleep(0.5)
    return False


def _cmdline(process):
    try:
        return process.cmdline()
    except psutil.NoSuchProcess:
        return []


def _admin_token(url, host, password):
    session = requests.Session()
    session.get(url + "/hub/login", timeout=60)
    session.post(url + "/hub/login", timeout=120, allow_redirects=False,
                 data={"username": host, "password": password, "_xsrf": session.cookies.get("_xsrf", "")})
    answer = session.post(f"{url}/hub/api/users/{host}/tokens", timeout=60,
                          headers={"X-XSRFToken": session.cookies.get("_xsrf", "")}, json={"note": "rehearsal metrics"})
    answer.raise_for_status()
    return answer.json()["token"]


def collect(host, hub, env):
    accounts.run_as(host, [sys.executable, "-m", "nbgrader", "collect", CHAPTER], "collecting", env=env,
                    cwd=hub["course_dir"], timeout=600)
    submitted = os.path.join(hub["course_dir"], "submitted")
    if not os.path.isdir(submitted):
        return []
    return sorted(name for name in os.listdir(submitted)
                  if os.path.exists(os.path.join(submitted, name, CHAPTER, f"{CHAPTER}.ipynb")))


def grade(course_dir, out, log):
    """The course grader on the collected notebooks: {participant: points}."""
    started = time.monotonic()
    subprocess.run([sys.executable, "-m", "grader", "grade", os.path.join(course_dir, "submitted"), "--out", str(out),
                    "--quiet"], check=True, capture_output=True, text=True, cwd=REPO)
    log(f"graded: {time.monotonic() - started:.0f} s")
    records = json.loads((out / "grades.json").read_text())
    points = {}
    for record in records:
        points[record["submission"]] = points.get(record["submission"], 0) + record["points"]
    return points


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--participants", type=int, default=30)
    parser.add_argument("--ramp", type=float, default=120, help="seconds over which the room logs in (default 120)")
    parser.add_argument("--storm", type=float, default=60, help="seconds within which all press Validate (default 60)")
    parser.add_argument("--faults", action="store_true", help="kill the hub, its proxy and one kernel during the storm")
    parser.add_argument("--browsers", type=int, default=2, help="participants who log in in headless Chromium")
    parser.add_argument("--term", action="store_true", help="a term hub (PAM accounts) instead of a workshop room")
    parser.add_argument("--sizing", action="store_true",
                        help="measure one participant: idle server, kernel with torch, kernel training chapter 05's model")
    parser.add_argument("--json", metavar="OUT", help="write the figures here")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if os.geteuid() != 0:
        sys.exit("hub_rehearsal.py makes unix accounts: run it as root")
    # A kill (SIGTERM, a closed terminal) ends the rehearsal through its clean-up: the accounts,
    # their homes and processes, the folders it opened go as they would at the end.
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, lambda number, _: sys.exit(128 + number))
    with HubMachine() as machine:
        figures = rehearse(machine, args.participants, args.ramp, args.storm, args.faults, args.browsers, args.term,
                           args.sizing)
    print(json.dumps(figures, indent=1))
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
