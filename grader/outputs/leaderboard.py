"""`python -m grader leaderboard DIR --out OUT`: every class-challenge entry re-run and scored here.

    python -m grader leaderboard PATH... --out OUT [--jobs N] [--sandbox auto|bwrap|none] [--cluster ADDRESS]

The challenge's rules are gptcourse/challenge.py. For each submission's chapter 05 notebook, the
cell that defines `challenge_entry` is the entry. What the grader owns:
- **the data**: the entry's process never reads the text. It asks for batch i over a pipe and gets
  it only while i is within the budget; the grader counts every batch it sends. The bwrap sandbox
  has no data mirror in it, and an audit hook in the runner reports any attempt to open a data file;
- **the evaluation**: the trained weights come back as torch.save data, are read with
  torch.load(weights_only=True) into the course's own GPTModel, here, and scored with
  gptcourse.challenge.mean_loss on the private text, which the entry's process never receives;
- **the limits**: the parameter cap and the entry's size (before anything runs), the budget, and
  the time limit (the process is killed when it is past).

Refused entries get a status that says why (STATUSES) and no rank. Ranks: by private loss; an entry
whose loss is within TIE_WITHIN of the first entry of the group above it shares that group's rank
(TIE_WITHIN comes from the run-to-run noise measured in docs/benchmarks.md). OUT gets
leaderboard.json and leaderboard.csv; when OUT is also the folder of a grade run, its class report
and each student's feedback show the challenge (grader/outputs/challenge_report.py).
"""
import ast
import csv
import io
import json
import math
import os
import queue
import signal
import struct
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import torch

from gptcourse import challenge
from gptcourse.checking.challenge_runner import HEADER, framed, read_exactly, tensors_bytes
from grader.grading import gradefolder, sandbox
from grader.outputs import challenge_report
from grader.grading.submissions import discover, graded_notebooks, readable

CHAPTER = "05_pretraining"
ENTRY_NAME = "challenge_entry"
LEADERBOARD_JSON = challenge_report.LEADERBOARD_JSON
LEADERBOARD_CSV = "leaderboard.csv"
# Entries whose private losses differ by less than this share a rank: about two standard deviations
# of the same entry trained with different seeds (the baseline over 30 seeds: 0.048, its range 0.18;
# docs/benchmarks.md, "The class challenge").
TIE_WITHIN = 0.1
STARTUP_S = 60  # importing torch in the sandbox before the entry's time starts
MAX_WEIGHTS_BYTES = 8 * challenge.MAX_PARAMETERS + 2**20  # float32 weights at the cap, with room to spare
MAX_LITERAL_CHARS = 1000  # a longer string in the entry's cell is text, not code
MAX_LITERAL_ITEMS = 256  # a longer list of numbers is weights
CHECKPOINTS = 4  # points of the validation curve (private loss against tokens) per entry
CURVE_TOKENS = 4096  # of the private text, for those points
# The code every entry runs on: the course's version of every function the training calls.
REFERENCE_TASKS = ("3.2", "4.1", "4.2", "4.3", "4.4", "4.5", "4.6", "5.1", "5.2", "5.3", "5.4", "5.7")
REFERENCE_HEADER = "import math\nimport torch\nimport torch.nn as nn\n\n"

STATUSES = {
    "ok": "trained and scored",
    "no_entry": "no cell of the chapter 05 notebook defines challenge_entry",
    "too_large": "the entry's cell is longer than the challenge allows",
    "carries_data": "the entry's cell carries text or numbers that could be data or weights",
    "invalid": "the entry is not well-formed or is over the parameter cap",
    "over_budget": "the entry asked for more training batches than the budget allows",
    "read_data": "the entry tried to open a data file itself (or to start a program, which could)",
    "raised": "the entry raised an error",
    "time_limit": "the entry did not finish within the time limit",
    "bad_weights": "the trained weights do not fit the course's GPTModel of the entry's shape",
}


class Refused(Exception):
    def __init__(self, status, detail=""):
        super().__init__(detail or STATUSES[status])
        self.status, self.detail = status, detail or STATUSES[status]


# ------------------------------------------------------------------------------------------
# Finding the entries, and what is checked before anything runs
# ------------------------------------------------------------------------------------------

def entry_cell(notebook):
    """The source of the last code cell that assigns challenge_entry at its top level; None if none."""
    found = None
    for cell in notebook.cells:
        if cell.get("type") == "code" and _assigns_entry(cell.get("source", "")):
            found = cell["source"]
    return found


def _assigns_entry(source):
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ENTRY_NAME in source and f"{ENTRY_NAME} =" in source  # a broken entry is still the entry
    return any(isinstance(node, (ast.Assign, ast.AnnAssign)) and any(
        isinstance(target, ast.Name) and target.id == ENTRY_NAME
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])) for node in tree.body)


def check_cell(source):
    """Refused when the cell is too long or carries data: a long string, or a long list of constants."""
    if len(source) > challenge.MAX_ENTRY_CHARS:
        raise Refused("too_large", f"the entry's cell has {len(source):,} characters; at most "
                                   f"{challenge.MAX_ENTRY_CHARS:,} are allowed")
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise Refused("raised", f"SyntaxError: {exc.msg} (line {exc.lineno} of your challenge cell)") from None
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and len(node.value) > MAX_LITERAL_CHARS:
            raise Refused("carries_data", f"line {node.lineno} holds a text of {len(node.value):,} characters: an "
                                          f"entry may not bring its own data (at most {MAX_LITERAL_CHARS} per literal)")
        if isinstance(node, (ast.List, ast.Tuple, ast.Set)) and len(node.elts) > MAX_LITERAL_ITEMS:
            raise Refused("carries_data", f"line {node.lineno} holds {len(node.elts):,} values: an entry's model "
                                          f"starts from its seed, not from numbers in the cell")
        if isinstance(node, ast.Dict) and len(node.keys) > MAX_LITERAL_ITEMS:
            raise Refused("carries_data", f"line {node.lineno} holds a table of {len(node.keys):,} entries")


def validated(entry):
    """The entry the runner reported, checked here (never trusting the runner's own check)."""
    try:
        challenge.check_entry(entry)
    except challenge.EntryProblem as problem:
        raise Refused("invalid", str(problem)) from None
    return entry


# ------------------------------------------------------------------------------------------
# Running one entry
# ------------------------------------------------------------------------------------------

class Challenge:
    """What every entry of a run shares: the text's parts, the reference code, the limits, and
    the checked cluster (grader/cluster/pool.py's ClusterPool) when the entries train on its workers."""

    cluster = None

    def __init__(self, isolation, budget=challenge.BUDGET_TOKENS, time_limit=challenge.TIME_LIMIT_S):
        from grader.paths import load_manifest

        manifest = load_manifest()
        sources = {tid: t["source"] for chapter in manifest.values() for tid, t in chapter["tasks"].items()}
        self.reference = REFERENCE_HEADER + "\n\n".join(sources[t] for t in REFERENCE_TASKS)
        self.parts = challenge.splits(challenge.token_ids())
        self.isolation, self.budget, self.time_limit = isolation, budget, time_limit
        mirror = os.environ.get("GPTCOURSE_DATA_MIRROR", "")
        self.forbidden = [challenge.DATA] + [os.path.realpath(p) for p in (mirror,) if p]


def run_entry(student, source, task):
    """The leaderboard row of one entry (refused ones included)."""
    row = {"student": student, "private_loss": None, "public_loss": None, "tokens": 0, "parameters": None,
           "seconds": None, "status": "ok", "detail": STATUSES["ok"], "rank": None, "curve": []}
    try:
        if source is None:
            raise Refused("no_entry")
        check_cell(source)
        train = _train_on_cluster if task.cluster else _train_in_sandbox
        weights, entry, row["tokens"], row["seconds"], checkpoints = train(source, task)
        row["parameters"] = challenge.parameter_count(challenge.model_config(entry))
        model = _course_model(entry, weights)
        context_length = entry["model"]["context_length"]
        row["private_loss"] = round(challenge.mean_loss(model, task.parts["private"], context_length), 4)
        row["public_loss"] = round(challenge.mean_loss(model, task.parts["public"], context_length), 4)
        for tokens, checkpoint in checkpoints:
            early = _course_model(entry, checkpoint)
            row["curve"].append([tokens, round(challenge.mean_loss(early, task.parts["private"], context_length,
                                                                   max_tokens=CURVE_TOKENS), 4)])
        row["curve"].append([row["tokens"], round(challenge.mean_loss(model, task.parts["private"], context_length,
                                                                      max_tokens=CURVE_TOKENS), 4)])
    except Refused as refused:
        row["status"], row["detail"] = refused.status, refused.detail
    return row


def _course_model(entry, state):
    """The course's GPTModel of the entry's shape, holding `state`; Refused when it does not fit."""
    from grader.reference.ch04_gpt_model import GPTModel

    model = GPTModel(challenge.model_config(entry))
    try:
        model.load_state_dict(state, strict=True)
    except (RuntimeError, TypeError, AttributeError) as exc:
        raise Refused("bad_weights", f"the trained weights do not fit the course's GPTModel: "
                                     f"{str(exc).splitlines()[0][:300]}") from None
    return model.eval()


def _train_in_sandbox(source, task):
    """Start the runner, answer its requests; (weights, entry, tokens handed out, seconds, checkpoints)."""
    read_here, write_there = os.pipe()
    read_there, write_here = os.pipe()
    command, env = _runner_command(task.isolation)
    env["GPTCOURSE_CHALLENGE_FDS"] = f"{read_there},{write_there}"
    # The entry's prints go nowhere: whatever it says to the grader goes over the pipe.
    process = subprocess.Popen(command, env=env, pass_fds=(read_there, write_there), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, start_new_session=True)
    os.close(read_there)
    os.close(write_there)
    try:
        return _converse(process, read_here, write_here, source, task)
    finally:
        _stop(process)
        for fd in (read_here, write_here):
            try:
                os.close(fd)
            except OSError:
                pass


# ------------------------------------------------------------------------------------------
# On a Dask cluster (--cluster): the worker holds the training text and the budget, never the
# private text; the weights come back here and are scored here.
# ------------------------------------------------------------------------------------------

def _train_on_cluster(source, task):
    """_train_in_sandbox, run by a worker of the cluster (train_on_worker); the same result."""
    payload = {"source": source, "reference": task.reference, "forbidden": [challenge.DATA],
               "train": task.parts["train"], "budget": task.budget, "time_limit": task.time_limit,
               "sandbox": task.sandbox_option}
    workers = task.cluster.checked_workers()
    future = task.cluster.client.submit(train_on_worker, payload, pure=False, workers=workers,
                                        allow_other_workers=False)
    result = future.result()
    if "worker_error" in result:  # the machine's problem, never the student's: the run stops
        raise SystemExit(f"error: a worker of the cluster cannot train entries: {result['worker_error']}")
    if "refused" in result:
        status, detail = result["refused"]
        raise Refused(status if status in STATUSES else "raised", str(detail)[:400])
    return (_weights(result["weights"]), validated(result["entry"]), int(result["tokens"]), float(result["seconds"]),
            [(int(tokens), _weights(state)) for tokens, state in result["checkpoints"]])


def train_on_worker(payload):
    """On a Dask worker: train one entry in this worker's sandbox, answering its requests for
    batches from the training text the payload carries, within its budget."""
    from types import SimpleNamespace

    try:
        isolation = sandbox.choose(payload["sandbox"])
    except BaseException as exc:  # noqa: BLE001 - SystemExit: bwrap asked for and missing there
        return {"worker_error": f"{type(exc).__name__}: {exc}"}
    task = SimpleNamespace(isolation=isolation, reference=payload["reference"],
                           forbidden=payload["forbidden"], parts={"train": payload["train"]},
                           budget=payload["budget"], time_limit=payload["time_limit"])
    try:
        weights, entry, tokens, seconds, checkpoints = _train_in_sandbox(payload["source"], task)
    except Refused as refused:
        return {"refused": [refused.status, refused.detail]}
    return {"weights": tensors_bytes(weights), "entry": entry, "tokens": tokens, "seconds": seconds,
            "checkpoints": [(count, tensors_bytes(state)) for count, state in checkpoints]}


def _runner_command(isolation):
    python = [sys.executable, "-m", "gptcourse.checking.challenge_runner"]
    env = {key: os.environ[key] for key in ("PATH", "LANG", "LC_ALL") if key in os.environ}
    env.update(PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join(sandbox.host_python_path()))
    if isolation.sandbox == "bwrap":  # no data mirror or cache in there: only Python and the course package
        env.update(HOME=sandbox.SCRATCH, TMPDIR=sandbox.SCRATCH)
        return sandbox.bwrap_arguments(sandbox.python_paths(with_data=False)) + python, env
    return python, env


def _stop(process):
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait()


class _Pipe:
    """The grader's end of the runner's channel, with a deadline on every read."""

    def __init__(self, read_fd, write_fd):
        self.messages = queue.Queue()
        self._write = write_fd
        threading.Thread(target=self._reader, args=(read_fd,), daemon=True).start()

    def _reader(self, fd):
        stream = os.fdopen(os.dup(fd), "rb", buffering=0)
        try:
            while True:
                size = HEADER.unpack(read_exactly(stream, HEADER.size))[0]
                if size > 2**20:
                    raise ValueError("a control message over 1 MB")
                message = json.loads(read_exactly(stream, size))
                if not isinstance(message, dict):
                    raise ValueError("not a message")
                length = message.get("bytes") or 0
                if not isinstance(length, int) or not 0 <= length <= MAX_WEIGHTS_BYTES:
                    raise ValueError("a payload over the size of the largest model allowed")
                self.messages.put((message, read_exactly(stream, length) if length else b""))
        except (EOFError, ValueError, OSError, struct.error):
            self.messages.put(({"kind": "closed"}, b""))

    def send(self, message, payload=b""):
        try:
            _write_all(self._write, framed(message, payload))
        except OSError:
            pass  # the runner is gone; the next read says so

    def receive(self, deadline):
        try:
            return self.messages.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise Refused("time_limit") from None


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _converse(process, read_fd, write_fd, source, task):
    pipe = _Pipe(read_fd, write_fd)
    deadline = time.monotonic() + STARTUP_S
    pipe.send({"kind": "start", "reference": task.reference, "entry": source, "forbidden": task.forbidden})
    message, _ = pipe.receive(deadline)
    _refuse_on(message, task, "before training")
    if message["kind"] != "entry":
        raise Refused("raised", "the entry's process ended before it said what its entry is")
    entry = validated(message["entry"])
    context_length, batch_size = entry["model"]["context_length"], entry["batch_size"]
    starts = challenge.batch_starts(len(task.parts["train"]), batch_size, context_length, task.budget)
    checkpoints = [len(starts) * k // CHECKPOINTS for k in range(1, CHECKPOINTS)]
    validation = challenge.validation_batch(task.parts, entry, starts)
    began = time.monotonic()
    deadline = began + task.time_limit
    pipe.send({"kind": "go", "batches": len(starts), "checkpoints": checkpoints}, tensors_bytes(list(validation)))
    sent, curve = {0}, []  # batch 0 went out as the validation batch
    while True:
        message, payload = pipe.receive(deadline)
        _refuse_on(message, task, "while training")
        kind = message["kind"]
        if kind == "batch":
            index = message.get("index")
            if not isinstance(index, int) or not 0 <= index < len(starts):
                raise Refused("over_budget", f"the entry asked for batch {index!r}; the budget of "
                                             f"{task.budget:,} tokens is {len(starts)} batches of {batch_size} x "
                                             f"{context_length} tokens")
            sent.add(index)
            pipe.send({"kind": "batch"}, tensors_bytes(list(challenge.make_batch(task.parts["train"], starts[index],
                                                                                 context_length))))
        elif kind == "checkpoint" and isinstance(message.get("index"), int) and len(curve) < CHECKPOINTS:
            curve.append((len(sent) * batch_size * context_length, _weights(payload)))
        elif kind == "weights":
            return _weights(payload), entry, len(sent) * batch_size * context_length, round(time.monotonic() - began, 1), curve


def _refuse_on(message, task, when):
    kind = message.get("kind")
    if kind == "read_data":
        raise Refused("read_data", f"the entry tried to {message.get('what', 'open a data file')}: the grader hands "
                                   f"out the training batches, and the text is not there to read")
    if kind == "raised":
        raise Refused("raised", str(message.get("message"))[:400])
    if kind == "closed":
        raise Refused("raised", f"the entry's process ended {when} without a result (it exited, or it was killed "
                                f"for its memory)")


def _weights(payload):
    try:
        state = torch.load(io.BytesIO(payload), weights_only=True)
    except Exception as exc:  # noqa: BLE001 - whatever came back is the entry's, and is refused
        raise Refused("bad_weights", f"the weights could not be read ({type(exc).__name__})") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise Refused("bad_weights", "the weights are not a state_dict of tensors")
    return state


# ------------------------------------------------------------------------------------------
# Ranking and writing
# ------------------------------------------------------------------------------------------

def ranked(rows):
    """Rows sorted by private loss (refused ones last, by student), with ranks: an entry within
    TIE_WITHIN of the first entry of the group above shares its rank."""
    scored = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: (r["private_loss"], r["student"]))
    group_best, rank = None, 0
    for position, row in enumerate(scored, 1):
        if group_best is None or row["private_loss"] - group_best >= TIE_WITHIN:
            group_best, rank = row["private_loss"], position
        row["rank"] = rank
    return scored + sorted((r for r in rows if r["status"] != "ok"), key=lambda r: r["student"])


def write(out_dir, rows, settings):
    os.makedirs(out_dir, exist_ok=True)
    data = {"challenge": settings, "tie_within": TIE_WITHIN, "entries": rows}
    gradefolder.write_atomically(os.path.join(out_dir, LEADERBOARD_JSON), json.dumps(data, indent=1))
    buffer = io.StringIO()
    columns = ["rank", "student", "private_loss", "public_loss", "tokens", "parameters", "seconds", "status", "detail"]
    writer = csv.writer(buffer)
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["" if row[c] is None else row[c] for c in columns])
    gradefolder.write_atomically(os.path.join(out_dir, LEADERBOARD_CSV), buffer.getvalue())


def leaderboard(paths, out_dir, jobs=2, sandbox_option="auto", budget=challenge.BUDGET_TOKENS,
                time_limit=challenge.TIME_LIMIT_S, say=print, cluster=None):
    """Run every entry under `paths` (on the workers of the Dask cluster at `cluster`, when
    given); write OUT/leaderboard.json and .csv; return the rows."""
    isolation = sandbox.choose(sandbox_option) if cluster is None else sandbox.Isolation(
        "cluster", False, f"on the workers of {cluster}, each in its own --sandbox {sandbox_option}")
    task = Challenge(isolation, budget, time_limit)
    task.sandbox_option = sandbox_option
    if cluster is not None:
        # The workers are checked as for grade --cluster (the same course code and torch, bwrap
        # when asked for); the entries train only on those that pass.
        from grader.cluster.pool import ClusterPool

        task.cluster = ClusterPool(cluster, sandbox_option, chapters=[], device="cpu")
    os.makedirs(out_dir, exist_ok=True)
    entries = []
    for submission in discover(paths, os.path.join(out_dir, ".unpacked")):
        notebooks = [nb for nb in graded_notebooks(submission) if nb.chapter == CHAPTER]
        entries.append((submission.id, entry_cell(notebooks[0]) if notebooks else None))
    began = time.monotonic()
    try:
        with ThreadPoolExecutor(max(1, jobs)) as pool:
            rows = list(pool.map(lambda item: _timed(item, task, say), entries))
    finally:
        if task.cluster is not None:
            task.cluster.close()
    rows = ranked(rows)
    settings = {"budget_tokens": budget, "max_parameters": challenge.MAX_PARAMETERS, "time_limit_s": time_limit,
                "data": challenge.DATA, "isolation": isolation.to_data(), "jobs": jobs,
                "seconds": round(time.monotonic() - began, 1)}
    write(out_dir, rows, settings)
    return rows


def _timed(item, task, say):
    student, source = item
    row = run_entry(student, source, task)
    loss = f"{row['private_loss']:.4f}" if row["status"] == "ok" else row["status"]
    say(f"  {readable(student)}: {loss} ({row['seconds'] if row['seconds'] is not None else '-'} s)")
    return row


def show_in_grade_folder(out_dir):
    """OUT is also a grade run's folder: its feedback files and class report again, now with the
    challenge (grader/outputs/challenge_report.py), under the late policy the folder applies."""
    from grader.outputs import late, report

    records = gradefolder.read_grades(out_dir)
    report.write_all(records, out_dir, gradefolder.read_run(out_dir), setting=late.read_setting(out_dir))


def add_parser(commands):
    p = commands.add_parser("leaderboard", help="re-run every class-challenge entry (chapter 05) and rank them on "
                                                "the private text (docs/grading.md)")
    p.add_argument("paths", nargs="+", metavar="PATH", help="the submissions, as for grade")
    p.add_argument("--out", required=True, metavar="DIR", help="where leaderboard.json and leaderboard.csv go")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="entries trained at once (one core each)")
    p.add_argument("--sandbox", default="auto", choices=["auto", "bwrap", "none"], help="as for grade")
    p.add_argument("--cluster", metavar="ADDRESS", default=None,
                   help="train the entries on the workers of a running Dask cluster (tcp://HOST:PORT), --jobs at "
                        "once; the scoring stays here. See docs/grading.md")
    p.add_argument("--budget-tokens", type=int, default=challenge.BUDGET_TOKENS,
                   help=f"the training budget (default the challenge's, {challenge.BUDGET_TOKENS:,}); another "
                        f"budget is another challenge: the notebook's dry run uses the default")
    p.add_argument("--time-limit", type=float, default=challenge.TIME_LIMIT_S,
                   help=f"seconds of training per entry (default {challenge.TIME_LIMIT_S})")


def main(args):
    from grader.grading.preflight import PreflightError

    try:
        rows = leaderboard(args.paths, args.out, args.jobs, args.sandbox, args.budget_tokens, args.time_limit,
                           cluster=args.cluster)
    except PreflightError as exc:  # no worker of the cluster can train entries: nothing was run
        print(f"error: {exc}", file=sys.stderr)
        return 2
    scored = sum(r["status"] == "ok" for r in rows)
    print(f"{scored} of {len(rows)} entries scored; see {os.path.join(args.out, LEADERBOARD_CSV)}")
    if os.path.isfile(os.path.join(args.out, gradefolder.GRADES_JSON)):
        show_in_grade_folder(args.out)
        print(f"the class report and each student's feedback in {args.out} show the challenge too")
    for row in rows[:10]:
        if row["status"] == "ok":
            print(f"  {row['rank']:>3}. {row['student']}: {row['private_loss']:.4f}")
    return 0
