"""What a job's child runs: the course setup, the earlier tasks' reference, the student's cell
statement by statement, then the probes on the job's cases."""
import ast
import linecache
import re
import traceback

from gptcourse.checking.worker_host.memory_limit import limit_memory

_MAGIC_LINE = re.compile(r"^(\s*)[%!].*$", re.MULTILINE)


def run_job(job, scratch=None):
    """Run the course setup, the earlier tasks' reference and the student's cell; probe the cases."""
    import torch

    torch.set_num_threads(job.get("threads", 1))
    if any(str(case.get("device", "cpu")).startswith("cuda") for case in job["cases"]):
        torch.cuda.init()  # before the memory cap: the CUDA runtime maps a lot of memory
    limit_memory(job["memory_limit_mb"])

    namespace = {"__name__": "__main__", "__builtins__": __builtins__}
    for source in job["setup_sources"] + job["reference_sources"]:
        exec(compile(source, "<course setup>", "exec"), namespace)

    warnings = []
    fatal = exec_student_cell(job["student_source"], job["student_filename"], namespace, warnings)
    if fatal:
        return {"fatal": fatal, "warnings": warnings}

    missing = [name for name in job["names"] if name not in namespace]
    if missing:
        return {"fatal": f"your solution cell does not define {', '.join(missing)}", "warnings": warnings}
    from gptcourse.checking import probes

    objects = {name: namespace[name] for name in job["names"]}
    # The earlier graded names the task builds on: the reference's, bound by the sources above.
    earlier = {name: namespace[name] for name in job.get("earlier_names", []) if name in namespace}
    observations = probes.observe(objects, job["cases"], scratch=scratch, earlier=earlier)
    return {"fatal": None, "warnings": warnings, "observations": observations}


def exec_student_cell(source, filename, namespace, warnings):
    """Run the cell statement by statement; a failing demo line must not hide the definitions."""
    source = _MAGIC_LINE.sub(r"\1pass  # IPython magic removed by the grader", source)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    try:
        tree = ast.parse(source, filename)
    except SyntaxError as exc:
        return f"your solution cell has a syntax error on line {exc.lineno}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError) as exc:
        return f"your solution cell could not be read as Python ({type(exc).__name__}: {exc})"
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
