"""The memory cap of the kernels nbgrader starts (gptcourse/checking/kernel_memory.py): the course's
nbgrader configuration gives it to autograde's and Validate's kernels, and a kernel started with
it cannot allocate beyond it. The graded runs are in tests/notebooks/test_nbgrader_memory.py."""
import os
import shutil

from jupyter_client.manager import start_new_kernel
from nbgrader.apps import NbGrader
from nbgrader.preprocessors import Execute

from gptcourse.checking.kernel_memory import KernelMemoryCap, kernel_arguments
from grader.grading.engine import Settings
from grader.nbgrading.execute import CourseExecute
from grader.paths import NBGRADER_CONFIG

# Blocks of 50 MB until one fails, in a kernel capped at 300 MB beyond what it held with torch loaded.
FILL = """
import resource
from gptcourse.checking.memory import kernel_cap_mb
soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
kept = []
try:
    while len(kept) < 100:
        kept.append(bytearray(50 * 2**20))
except MemoryError:
    pass
print(soft != resource.RLIM_INFINITY, kernel_cap_mb(), len(kept))
"""


def run_in_kernel(code, extra_arguments):
    km, kc = start_new_kernel(extra_arguments=extra_arguments, startup_timeout=60)
    try:
        printed = []
        reply = kc.execute_interactive(code, timeout=60, output_hook=lambda m: printed.append(m["content"].get("text", "")))
        assert reply["content"]["status"] == "ok", reply["content"]
        return "".join(printed).strip()
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_kernel_started_with_the_cap_cannot_allocate_beyond_it():
    capped, cap_mb, blocks = run_in_kernel(FILL, kernel_arguments(memory_mb=300)).split()
    assert (capped, cap_mb) == ("True", "300")
    assert 4 <= int(blocks) <= 6  # 300 MB: six blocks at most, less what the setup took after the cap


def test_without_the_arguments_a_kernel_has_no_cap():
    capped, cap_mb, blocks = run_in_kernel(FILL.replace("100", "3"), []).split()
    assert (capped, cap_mb, blocks) == ("False", "None", "3")


def test_the_course_configuration_caps_the_kernels_of_autograde_and_validate(tmp_path, monkeypatch):
    """Loaded as nbgrader's Validate handler loads it: both nbgrader's Execute (Validate) and the
    course's CourseExecute (autograde) start their kernels with the cap, of the course grader's
    default size."""
    monkeypatch.setattr(os, "environ", dict(os.environ))  # the configuration sets a variable
    shutil.copy(NBGRADER_CONFIG, tmp_path / "nbgrader_config.py")
    monkeypatch.chdir(tmp_path)  # the handler's app reads the one in the server's folder
    app = NbGrader()
    app.load_config_file()
    wanted = kernel_arguments(memory_mb=Settings.memory_mb)
    assert Execute(config=app.config).extra_arguments == wanted
    assert CourseExecute(config=app.config).extra_arguments == wanted
    assert KernelMemoryCap.memory_mb.default_value == Settings.memory_mb
