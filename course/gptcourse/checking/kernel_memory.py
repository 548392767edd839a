"""The memory cap of the kernels nbgrader starts (autograde and Validate): an IPython extension.

Without a cap, one cell that allocates without end takes the machine, and on a JupyterHub every
other user's kernels with it. The course grader caps each task's process with RLIMIT_DATA, at
what the process uses once torch is loaded plus `--memory-mb` (worker_host/memory_limit.py); this
extension sets the same cap in the kernel as it starts, before any cell runs. An allocation
beyond it then fails in the student's code (MemoryError, torch's "can't allocate memory"), and
the check cell says so with the course grader's words (gptcourse/checking/memory.py).

nbgrader's configuration starts its kernels with it (grader/nbgrading/nbgrader_config.py):

    from gptcourse.checking.kernel_memory import kernel_arguments
    c.Execute.extra_arguments = kernel_arguments(memory_mb=2048)

Those are arguments of the kernel's command line (ipykernel reads them as its configuration),
the one way into the kernel that nbgrader's own Execute takes from the configuration, so the
same lines serve autograde (CourseExecute) and Validate (nbgrader's Execute, in the Jupyter
server). The cap is not a sandbox: code could raise its own soft limit again; it stops accidents
(a loop that never ends), as the course grader's does without --sandbox.
"""
from traitlets import Integer
from traitlets.config import Configurable

from . import memory


class KernelMemoryCap(Configurable):
    """The kernel's side of the cap: its size, read from the kernel's command line."""

    memory_mb = Integer(
        2048,  # the course grader's default (grader.grading.engine.Settings.memory_mb, --memory-mb)
        help="MB of memory the kernel may use beyond what it holds once torch is loaded (0: no cap)",
    ).tag(config=True)


def kernel_arguments(memory_mb):
    """The kernel's command-line arguments that load this extension with a cap of `memory_mb`
    (for nbgrader's `Execute.extra_arguments`). A failure to load it stops the kernel: a kernel
    without its cap must not quietly grade."""
    return ["--IPKernelApp.extra_extensions=gptcourse.checking.kernel_memory",
            "--IPKernelApp.reraise_ipython_extension_failures=True",
            f"--KernelMemoryCap.memory_mb={int(memory_mb)}"]


def load_ipython_extension(ipython):
    """Cap this kernel's memory; IPython calls it while the kernel starts."""
    memory_mb = KernelMemoryCap(parent=ipython).memory_mb
    if memory_mb <= 0:
        return
    # Counted from where the course grader counts its cap from, a process with torch loaded (its
    # import alone maps about 200 MB); the notebook's setup cell imports it next anyway.
    import torch

    if torch.cuda.is_available():
        torch.cuda.init()  # before the cap, as the course grader does: the CUDA runtime maps a lot of memory
    from .worker_host.memory_limit import limit_memory

    limit_memory(memory_mb)
    memory.record_kernel_cap(memory_mb)
