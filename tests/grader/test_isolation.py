"""Student code touches nothing but its own scratch folder (docs/grading.md, "Isolation").

One batch of hostile submissions is graded under each isolation level, as an instructor would
run it. Every hostile cell replaces task 2.1 (or 2.5) of an otherwise correct chapter 02
notebook, and a correct student is graded in the same batch. What each level promises:

  both levels   no process a worker started outlives its task (detached forgers, sleepers,
                a worker that kills its own host); grade files are written by the grader
                alone, atomically, and nothing written during or after the run changes them;
                feedback never carries the reference or hidden-test code; a worker that
                tampers with its report costs only its own task.
  bwrap only    the grader's files, the output folder and the network are out of reach.

CI installs bubblewrap (.ci/run), so there the bwrap level must run; elsewhere it is skipped
when bubblewrap is missing or cannot create a sandbox.
"""
import json
import os
import re
import socket
import threading
import time

import pytest

from factory import REPO, filled_notebook, manifest, records_by_submission, run_grader, write_notebook
from grader.grading import sandbox
from grader.grading.scrub import WITHHELD, Scrubber

CH02 = "02_attention"
MARK = "FORGED-BY-STUDENT"

CORRECT_2_1 = """
def simple_self_attention(inputs):
    attn_weights = torch.softmax(inputs @ inputs.transpose(-2, -1), dim=-1)
    return attn_weights, attn_weights @ inputs
"""
WRONG_2_1 = """
def simple_self_attention(inputs):
    return inputs, inputs
"""

FORGER = """
import os, time
OUT = {out!r}
def forge():
    time.sleep({delay})
    for name in ("grades.json", "grades.csv", "results.jsonl", "run.json"):
        try:
            with open(os.path.join(OUT, name), "w") as f:
                f.write({mark!r})
        except OSError:
            pass
if {detached}:
    if os.fork() == 0:           # double fork and a new session: nothing ties it to the worker
        os.setsid()
        if os.fork() == 0:
            forge()
        os._exit(0)
    os.wait()
else:
    forge()
""" + WRONG_2_1

SLEEPERS = """
import subprocess
for _ in range(25):
    subprocess.Popen(["sleep", "777.25"])
    subprocess.Popen(["sleep", "777.25"], start_new_session=True)
""" + CORRECT_2_1

HOST_KILLER = """
import os, signal, subprocess
subprocess.Popen(["sleep", "777.75"], start_new_session=True)
os.kill(os.getppid(), signal.SIGKILL)   # the worker host that started this process
""" + CORRECT_2_1

READER = """
import os
def simple_self_attention(inputs):
    with open(os.path.join({root!r}, "grader", "reference", "ch02_attention.py")) as f:
        source = f.read()
    print(source)
    raise RuntimeError(source)
"""

# Task 2.5 runs with the reference of tasks 2.1-2.4 in its worker: try to send them out.
SMUGGLER = """
import sys
def find_job():
    frame = sys._getframe()
    while frame is not None:
        job = frame.f_locals.get("job")
        if isinstance(job, dict) and "reference_sources" in job:
            return job
        frame = frame.f_back
    return {"reference_sources": []}
class CausalAttention(nn.Module):
    def __init__(self, *args, **kwargs):
        super().__init__()
        raise ValueError("\\n".join(find_job()["reference_sources"]))
"""

IMPORTER = """
import sys
sys.meta_path[:] = [f for f in sys.meta_path if "Blocker" not in type(f).__name__]
sys.path.insert(0, {root!r})
from grader.reference.ch02_attention import simple_self_attention
"""

CONNECTOR = """
import socket
try:
    connection = socket.create_connection(("127.0.0.1", {port}), timeout=2)
    connection.sendall(b"leak")
except OSError:
    pass
""" + WRONG_2_1

# A worker that rewrites its own report: the grader must turn each into an error for this task.
TAMPERED_REPORTS = {
    "report_empty_list": '"[]"',
    "report_wrong_types": """'{"fatal": null, "observations": [{"error": "boom"}]}'""",
    "report_deeply_nested": '"[" * 200000 + "]" * 200000',
    "report_too_large": '"x" * (40 << 20)',
    "report_not_json": '"\\u0000 not json"',
}
TAMPER = """
import gptcourse.checking.records
gptcourse.checking.records.dumps = lambda value, indent=None: {payload}
""" + CORRECT_2_1


def _processes_with(argument):
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if argument.encode() in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            pass
    return found


class Listener:
    """A TCP server on the loopback address that records whether anyone connected."""

    def __init__(self):
        self.server = socket.socket()
        self.server.bind(("127.0.0.1", 0))
        self.server.listen()
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.connections = 0
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while self.running:
            try:
                connection, _ = self.server.accept()
            except OSError:
                continue
            self.connections += 1
            connection.close()

    def close(self):
        self.running = False
        self.server.close()


def _bwrap_or_skip():
    problem = sandbox.bwrap_problem()
    if problem and os.environ.get("CI"):
        pytest.fail(f"CI must test the bwrap sandbox (.ci/run installs bubblewrap): {problem}")
    if problem:
        pytest.skip(problem)


@pytest.fixture(scope="module", params=["none", "bwrap"])
def hostile_batch(request, tmp_path_factory):
    level = request.param
    if level == "bwrap":
        _bwrap_or_skip()
    root = tmp_path_factory.mktemp(f"hostile-{level}")
    out, subs = root / "out", root / "submissions"
    listener = Listener()
    cells = {
        "forger_detached": ("2.1", FORGER.format(out=str(out), delay=1.5, mark=MARK, detached=True)),
        "forger_during_task": ("2.1", FORGER.format(out=str(out), delay=0, mark=MARK, detached=False)),
        "sleepers": ("2.1", SLEEPERS),
        "host_killer": ("2.1", HOST_KILLER),
        "reader": ("2.1", READER.format(root=str(REPO))),
        "smuggler": ("2.5", SMUGGLER),
        "importer": ("2.1", IMPORTER.format(root=str(REPO))),
        "connector": ("2.1", CONNECTOR.format(port=listener.port)),
    }
    cells.update({name: ("2.1", TAMPER.format(payload=payload)) for name, payload in TAMPERED_REPORTS.items()})
    for name, (task, source) in cells.items():
        write_notebook(filled_notebook(CH02, {task: source}), subs / name / f"{CH02}.ipynb")
    write_notebook(filled_notebook(CH02), subs / "honest" / f"{CH02}.ipynb")
    records = run_grader([subs], out, "--jobs", "2", "--seed", "5", "--device", "cpu", "--sandbox", level,
                         "--timeout", "20")
    time.sleep(2.5)  # longer than the detached forger waits before it writes
    listener.close()
    return {"level": level, "out": out, "records": records_by_submission(records),
            "connections": listener.connections}


def test_run_json_and_summary_name_the_isolation(hostile_batch):
    run = json.loads((hostile_batch["out"] / "run.json").read_text())
    assert run["isolation"]["sandbox"] == hostile_batch["level"]


def test_every_other_student_and_task_is_graded_as_usual(hostile_batch):
    graded = hostile_batch["records"]
    assert all(r["points"] == r["max_points"] for r in graded["honest"].values())
    for name, tasks in graded.items():
        for task, record in tasks.items():
            if task not in ("2.1", "2.5"):
                assert record["points"] == record["max_points"], (name, task, record["feedback"])


def test_no_forger_changes_the_grade_files(hostile_batch):
    out = hostile_batch["out"]
    for name in ("grades.json", "grades.csv", "results.jsonl", "run.json"):
        assert MARK not in (out / name).read_text(), name
    graded = hostile_batch["records"]
    for forger in ("forger_detached", "forger_during_task"):
        assert graded[forger]["2.1"]["points"] == 0
    on_disk = records_by_submission(json.loads((out / "grades.json").read_text()))
    assert on_disk["forger_detached"]["2.1"]["points"] == 0


def test_no_process_outlives_the_batch(hostile_batch):
    assert _processes_with("777.25") == [] and _processes_with("777.75") == []
    sleepers = hostile_batch["records"]["sleepers"]["2.1"]
    assert sleepers["points"] > 0  # sleeping children are no mistake, but they are ended at once:
    assert any("ended 50 process" in note for note in sleepers["notes"]), sleepers["notes"]
    forger = hostile_batch["records"]["forger_detached"]["2.1"]
    # The double fork's survivor (and, racing with it, its short-lived parent) were ended.
    assert any(re.search(r"ended [12] process", note) for note in forger["notes"]), forger["notes"]


def test_a_worker_that_kills_its_host_costs_only_its_own_task(hostile_batch):
    record = hostile_batch["records"]["host_killer"]["2.1"]
    assert record["status"] == "error" and record["points"] == 0
    assert "ended" in record["feedback"]


def test_feedback_never_carries_reference_or_hidden_code(hostile_batch):
    scrubber = Scrubber.for_manifest(manifest())
    out = hostile_batch["out"]
    for path in [out / "grades.json", out / "results.jsonl", *sorted((out / "feedback").glob("*.md"))]:
        assert not scrubber.found_in(path.read_text()), path
    for name, task in (("reader", "2.1"), ("smuggler", "2.5")):
        record = hostile_batch["records"][name][task]
        assert record["points"] == 0, (name, record)
        if hostile_batch["level"] == "none" or name == "smuggler":
            assert WITHHELD in record["feedback"], (name, record["feedback"])
        else:
            assert "FileNotFoundError" in record["feedback"], record["feedback"]


@pytest.mark.parametrize("name", sorted(TAMPERED_REPORTS))
def test_a_tampered_report_is_an_error_for_that_task_only(hostile_batch, name):
    record = hostile_batch["records"][name]["2.1"]
    assert record["status"] == "error" and record["points"] == 0, record
    assert "not a grading report" in record["feedback"], record["feedback"]


def test_resuming_after_tampered_reports_regrades_nothing(hostile_batch):
    out = hostile_batch["out"]
    before = (out / "results.jsonl").read_text()
    again = run_grader([out.parent / "submissions"], out, "--jobs", "2", "--device", "cpu",
                       "--sandbox", hostile_batch["level"])
    assert (out / "results.jsonl").read_text() == before
    assert sum(r["points"] for r in again) == sum(r["points"] for t in hostile_batch["records"].values()
                                                  for r in t.values())


def test_sandbox_hides_the_grader_the_output_folder_and_the_network(hostile_batch):
    if hostile_batch["level"] != "bwrap":
        # Not promised without a sandbox: the run says so instead of pretending.
        run = json.loads((hostile_batch["out"] / "run.json").read_text())
        assert "can read what it can read" in run["isolation"]["detail"]
        return
    graded = hostile_batch["records"]
    assert graded["importer"]["2.1"]["points"] == 0
    assert "does not define simple_self_attention" in graded["importer"]["2.1"]["feedback"]
    assert hostile_batch["connections"] == 0


def test_feedback_files_of_similar_names_never_collide():
    from grader.grading.gradefolder import safe_name

    names = ["a b", "a_b", "a/b", "..", ".hidden", "ok-name_1.x", "ünï", "a\udcffb"]
    files = [safe_name(name) for name in names]
    assert len(set(files)) == len(names)
    assert safe_name("ok-name_1.x") == "ok-name_1.x"
    assert all(f and not f.startswith(".") and "/" not in f for f in files)


def test_scrubber_withholds_reference_lines_but_not_the_students_own():
    secret = "attn_scores = attn_scores.masked_fill(future_mask, float('-inf'))"
    scrubber = Scrubber([f"def f(x):\n    {secret}\n    return attn_scores\n"], public_texts=["def f(x):"])
    leaked = f"boom:\n  {secret.replace(' ', '')}\nbye"
    assert scrubber.clean(leaked) == f"boom:\n{WITHHELD}\nbye"
    joined = "attn_scores=attn_scores." + "\n" + "masked_fill(future_mask, float('-inf'))"
    assert scrubber.clean(joined) == WITHHELD  # split over two lines, still found
    own_line = "attn_scores = attn_scores.masked_fill(future_mask, float('-inf'))  # mine"
    message = {"fatal": None, "warnings": [f"line 3: {own_line}"], "observations": []}
    kept = scrubber.message(message, {"student_source": f"def f(x):\n    {own_line}\n"})
    assert kept["warnings"] == message["warnings"]
    assert scrubber.message(message, {"student_source": "def f(x): pass"})["warnings"] == [WITHHELD]
    assert scrubber.clean("def f(x):") == "def f(x):"  # public lines are no secret


def test_sandbox_binds_come_after_the_fresh_tmp_and_follow_links(tmp_path, monkeypatch):
    """A checkout, venv or data mirror under /tmp (CI clones there) must stay visible in the
    sandbox: bound after the sandbox's own /tmp, at the path the grader uses, links followed."""
    data = tmp_path / "real-data"
    data.mkdir()
    (tmp_path / "linked-data").symlink_to(data)
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(tmp_path / "linked-data"))
    pairs = sandbox._python_paths()
    assert (str(data), str(tmp_path / "linked-data")) in pairs
    arguments = sandbox.bwrap_arguments(pairs)
    fresh_tmp = arguments.index("/tmp", arguments.index("--tmpfs"))
    binds = [i for i, a in enumerate(arguments) if a == "--ro-bind"]
    assert binds and min(binds) > fresh_tmp
    assert not any(os.path.isdir(os.path.join(source, "grader", "reference")) for source, _ in pairs)


def test_files_linked_into_a_data_mirror_are_visible_in_the_sandbox(tmp_path, monkeypatch):
    """A mirror made of links to files kept elsewhere: the folders they lead to are bound too (the
    preflight, outside the sandbox, found the files; a worker that could not read them would turn
    that into every student's zero)."""
    elsewhere = tmp_path / "shared-disk"
    elsewhere.mkdir()
    (elsewhere / "the-verdict.txt").write_text("text")
    (tmp_path / "shared").symlink_to(elsewhere)  # the link's target passes through another link
    mirror = tmp_path / "mirror"
    (mirror / "gpt2").mkdir(parents=True)
    (mirror / "the-verdict.txt").symlink_to(tmp_path / "shared" / "the-verdict.txt")
    (mirror / "gpt2" / "broken").symlink_to(tmp_path / "nowhere")  # a dangling link binds nothing
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror))
    pairs = set(sandbox._python_paths())
    # The real folder, at the path the link names (through the other link) and where it really is.
    assert (str(elsewhere), str(tmp_path / "shared")) in pairs
    assert (str(elsewhere), str(elsewhere)) in pairs
    assert not any(str(tmp_path / "nowhere") in destination for _, destination in pairs)
