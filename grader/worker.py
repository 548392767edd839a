"""The worker: runs ONE task of ONE submission in its own process and reports raw observations.

Student code runs only here. The worker never sees the reference of the task it runs (only
the earlier tasks' reference sources, which the task may use) and never decides a grade:
it sends back plain data (JSON text with numbers), and the parent process judges it.
The parent enforces the time limit; the worker also caps its own memory.
"""
import ast
import io
import linecache
import os
import re
import resource
import sys
import traceback

# Imported here so that the fork server preloads them: each worker then starts in milliseconds.
import numpy  # noqa: F401
import torch

from gptcourse import records
from gptcourse.probes import run_probe

_MAGIC_LINE = re.compile(r"^(\s*)[%!].*$", re.MULTILINE)


def run_job(conn, job):
    """Process entry point: run the job, send one message, exit."""
    os.setpgrp()  # the parent can kill everything this worker starts with one signal
    output = _silence_output()
    try:
        result = _run(job)
    except BaseException as exc:  # noqa: BLE001 - any failure must still be reported
        result = {"fatal": f"the grader's worker failed: {type(exc).__name__}: {exc}", "warnings": []}
    result["output_tail"] = _tail(output)
    conn.send_bytes(records.dumps(result).encode("utf-8"))
    conn.close()
    os._exit(0)  # skip interpreter teardown: student objects may misbehave in __del__


def _run(job):
    torch.set_num_threads(job.get("threads", 1))
    if any(case["device"].startswith("cuda") for case in job["cases"]):
        torch.cuda.init()  # before the memory cap: the CUDA runtime maps a lot of memory
    _limit_memory(job["memory_limit_mb"])

    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    for source in job["setup_sources"] + job["reference_sources"]:
        exec(compile(source, "<course setup>", "exec"), namespace)
    _block_grader_imports()

    warnings = []
    fatal = _exec_student_cell(job["student_source"], job["student_filename"], namespace, warnings)
    if fatal:
        return {"fatal": fatal, "warnings": warnings}

    missing = [name for name in job["names"] if name not in namespace]
    if missing:
        return {"fatal": f"your solution cell does not define {', '.join(missing)}", "warnings": warnings}
    obj = namespace[job["names"][0]]
    return {"fatal": None, "warnings": warnings, "observations": observe(obj, job["cases"])}


def observe(obj, cases):
    """Probe the cases in order, stopping at the first one where the code raised.

    The verdict reports the first failing case, which is that one or an earlier one, so
    the rest would not change the grade; a memory bomb or a slow failure runs only once.
    """
    observations = []
    for case in cases:
        if isinstance(case, dict):
            case = records.Case.from_data(case)
        observations.append(run_probe(obj, case))
        if "error" in observations[-1]:
            break
    return observations


def _exec_student_cell(source, filename, namespace, warnings):
    """Run the cell statement by statement; a failing demo line must not hide the definitions."""
    source = _MAGIC_LINE.sub(r"\1pass  # IPython magic removed by the grader", source)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        return f"your solution cell has a syntax error on line {exc.lineno}: {exc.msg}"
    for statement in tree.body:
        code = compile(ast.Module(body=[statement], type_ignores=[]), filename, "exec")
        try:
            exec(code, namespace)
        except SystemExit as exc:
            return f"your solution cell called sys.exit({exc.code!r}) (line {statement.lineno})"
        except Exception as exc:  # noqa: BLE001
            last = traceback.extract_tb(exc.__traceback__)[-1]
            warnings.append(
                f"line {statement.lineno} of your solution cell raised {type(exc).__name__}: {exc} "
                f"(the grader skipped that statement; solution cells should only define things)"
                if last.filename == filename else
                f"line {statement.lineno} of your solution cell raised {type(exc).__name__}: {exc} (skipped)"
            )
    return None


def _limit_memory(limit_mb):
    """Cap the data segment (heap and anonymous mappings) to what is in use now plus the limit."""
    in_use = _vm_data_bytes()
    soft = in_use + limit_mb * 1024 * 1024
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    if hard != resource.RLIM_INFINITY:
        soft = min(soft, hard)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def _vm_data_bytes():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmData:"):
                return int(line.split()[1]) * 1024
    return 0


class _GraderBlocker:
    """A meta-path finder that refuses `import grader...` once student code may run."""

    def find_spec(self, name, path=None, target=None):
        if name == "grader" or name.startswith("grader."):
            raise ImportError("the grader's package is not available to graded code")
        return None


def _block_grader_imports():
    for name in [n for n in sys.modules if n == "grader" or n.startswith("grader.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, _GraderBlocker())


def _silence_output():
    """Send the student's prints to a buffer file instead of the instructor's terminal."""
    sink = open(os.devnull, "w")
    buffer = io.StringIO()
    sys.stdout = buffer
    sys.stderr = buffer
    os.dup2(sink.fileno(), 1)
    os.dup2(sink.fileno(), 2)
    return buffer


def _tail(buffer, limit=2000):
    try:
        text = buffer.getvalue()
    except Exception:  # noqa: BLE001 - student code may have replaced it
        return ""
    return text[-limit:]
