"""What the host loads and sets up once, before it forks, so that every child starts with it done.

Two kinds of work: PyTorch's lazy first-use set-up (warm_up, at start-up), and the modules a
job's child would import anyway (preload_for, before each job's fork). Neither may touch a GPU
(gpu.py says why).
"""
import ast
import importlib

from gptcourse.checking.worker_host import gpu

_PRELOADED = set()  # the (task, setup cells) of the jobs this host has preloaded for


def warm_up():
    """Run a little attention-like work on the CPU and on meta once, so that PyTorch's lazy
    first-use set-up happens here and every forked child starts with it done.

    The backward pass is the trap: autograd's first backward counts the devices of every GPU
    backend torch was built with (for CUDA that initialises the driver) and starts a thread per
    device, after which a forked child cannot run backward at all. So it is warmed up only where
    torch has no GPU backend (the CPU builds of the course machines); elsewhere each child's
    first backward does that set-up.
    """
    import torch

    backward = not gpu.gpu_backend_built()
    for device in ("cpu", "meta"):
        layer = torch.nn.Linear(4, 4).to(device)
        x = torch.ones(2, 3, 4, device=device, requires_grad=backward and device == "cpu")
        scores = layer(x) @ x.transpose(-2, -1)
        future = torch.triu(torch.ones(3, 3, dtype=torch.bool, device=device), diagonal=1)
        weights = torch.dropout(torch.softmax(scores.masked_fill(future, float("-inf")), dim=-1), 0.1, True)
        out = torch.cat([weights @ x, x], dim=-1).view(2, 3, 2, 4).transpose(1, 2).reshape(2, 3, 8)
        if backward and device == "cpu":
            out.sum().backward()


def preload_for(job):
    """Import in the host, before it forks the job's child, the modules that child would import
    anyway: those the course's setup cells import (pandas in chapters 07 and 08 costs about a
    second a job), the student package's names they take (`from gptcourse import check`), and
    the checking module of the task's chapter (the probes and the judge need it). Each is
    imported once per host and is then in every later child, already compiled.

    Only the grader's own setup cells and task id are read here, never the student's cell. A
    module that fails to import is left alone: the child imports it again and reports it as it
    always has.

    Only where torch has no GPU backend (the CPU builds): elsewhere an import that asks torch
    about the GPU could set up the CUDA driver in the host, and no child forked afterwards
    could use it. There each child imports what it needs, as before."""
    if gpu.gpu_backend_built():
        return
    seen = (job.get("task"), tuple(job.get("setup_sources", ())))
    if seen in _PRELOADED:  # most jobs: nothing to parse or import again
        return
    _PRELOADED.add(seen)
    for module, names in modules_to_preload(job):
        try:
            imported = importlib.import_module(module)
            for name in names:
                getattr(imported, name, None)  # gptcourse loads its names on first use
        except Exception:  # noqa: BLE001 - the child meets the same error and reports it
            continue
        gpu.check_no_gpu_initialised()  # a CPU build cannot, but say so loudly if it ever did


def modules_to_preload(job):
    """[(module, names taken from it)] for a job: its setup cells' imports, then its chapter's
    checking module."""
    wanted = []
    for source in job.get("setup_sources", []):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:  # top-level imports only: what a setup cell always runs
            if isinstance(node, ast.Import):
                wanted += [(alias.name, ()) for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                wanted.append((node.module, tuple(alias.name for alias in node.names)))
    from gptcourse.checking.tasks import get_task

    try:
        wanted.append((f"gptcourse.checking.chapters.ch{get_task(job['task']).chapter}", ()))
    except (KeyError, TypeError):
        pass  # an unknown task: the child says so
    return wanted
