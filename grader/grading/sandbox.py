"""Where graded code runs: the isolation levels of the worker hosts.

`--sandbox auto|bwrap|none` (auto: bubblewrap when it is installed and works, else none).

bwrap   Each worker host runs in its own bubblewrap sandbox: the file system read-only and
        reduced to what Python and the course package need (the grader's package, its hidden
        cases and reference, solutions/, the output folder and the submissions are not there at
        all), a private scratch folder on a tmpfs, no network, no capabilities, its own PID
        namespace (every process it starts ends with it) and its own session.
none    The hosts run as ordinary processes of the grading user. The grader still ends every
        process a worker leaves behind before it records the task and before it exits (it is
        the "child subreaper" of its descendants on Linux), writes the grade files itself,
        atomically, and never trusts what a worker sends. Student code can read what the
        grading user can read, though: use bwrap for exams (docs/grading.md).
"""
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass

from gptcourse.checking.worker_host import processes
from grader.paths import ROOT

# What graded code could want from the rest of the machine (read-only): the system's
# programs and libraries, and the configuration Python and torch read.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt/conda")
GPU_DEVICES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/dri")
SCRATCH = "/scratch"
# The environment a host gets: nothing of the grader's own beyond these.
PASSED_ENV = ("PATH", "LANG", "LC_ALL", "GPTCOURSE_DATA_MIRROR", "GPTCOURSE_CACHE_DIR", "TIKTOKEN_CACHE_DIR",
              "CUDA_VISIBLE_DEVICES", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


@dataclass
class Isolation:
    sandbox: str  # "bwrap" or "none"
    reaper: bool  # the grader is the subreaper of its descendants
    detail: str  # one line for run.json and the command's summary

    def to_data(self):
        return {"sandbox": self.sandbox, "reaper": self.reaper, "detail": self.detail}


def choose(option):
    """The isolation level for --sandbox OPTION; raises SystemExit when bwrap is asked for but unusable."""
    if option not in ("auto", "bwrap", "none"):
        raise SystemExit(f"--sandbox must be auto, bwrap or none, not {option!r}")
    reaper = processes.become_reaper()
    if option in ("auto", "bwrap"):
        problem = bwrap_problem()
        if problem is None:
            return Isolation("bwrap", reaper, "bubblewrap sandbox per worker: read-only file system without the "
                                              "grader's files, private scratch folder, no network, own PID namespace")
        if option == "bwrap":
            raise SystemExit(f"--sandbox bwrap: {problem}")
    detail = ("no sandbox: workers run as this user and can read what it can read; leftover processes "
              "are ended" + (" (the grader is their subreaper)" if reaper else ""))
    return Isolation("none", reaper, detail)


def bwrap_problem():
    """None when bubblewrap can start a sandbox here, else why not."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    try:
        result = subprocess.run(bwrap_arguments([]) + ["/bin/true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap could not be run: {exc}"
    if result.returncode != 0:
        return f"bwrap cannot create a sandbox on this machine: {result.stderr.strip()[:300]}"
    return None


def host_command(isolation):
    """The command that starts one worker host, and its environment."""
    python = [sys.executable, "-m", "gptcourse.checking.worker_host"]
    env = {key: os.environ[key] for key in PASSED_ENV if key in os.environ}
    env.update(PYTHONDONTWRITEBYTECODE="1", OMP_NUM_THREADS="1", MKL_NUM_THREADS="1",
               GPTCOURSE_HIDDEN_PACKAGES="grader", PYTHONPATH=os.pathsep.join(host_python_path()))
    if isolation.sandbox == "bwrap":
        env.update(HOME=SCRATCH, TMPDIR=SCRATCH, GPTCOURSE_SCRATCH=SCRATCH)
        return bwrap_arguments(_python_paths()) + python, env
    return python, env


def host_python_path():
    """The host's PYTHONPATH: the folder that holds the gptcourse package this grader imports,
    then the grader's own PYTHONPATH entries, made absolute (the host starts in another folder).

    Where gptcourse is not pip-installed (a checkout run with PYTHONPATH=course), the host could
    not import it otherwise. The grader's package is never needed there (the host hides it), so
    its folder is added only when it is already on the grader's PYTHONPATH; in the bwrap sandbox
    it is not there at all."""
    import gptcourse

    entries = [os.path.dirname(os.path.dirname(os.path.abspath(gptcourse.__file__)))]
    for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if entry:
            entries.append(os.path.abspath(entry))
    return list(dict.fromkeys(entries))


def bwrap_arguments(read_only_paths):
    """bwrap's arguments. read_only_paths: (source, destination) pairs, or paths bound as they are.

    Mounts are made in order, so the fresh /proc, /dev, /tmp and scratch come first: a
    checkout, virtual environment or data mirror under /tmp must be bound over the new /tmp,
    not hidden by it.
    """
    arguments = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    for path in SYSTEM_PATHS:
        arguments += ["--ro-bind-try", path, path]
    arguments += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--tmpfs", SCRATCH]
    for device in GPU_DEVICES + tuple(_numbered_gpus()):
        arguments += ["--dev-bind-try", device, device]
    for entry in read_only_paths:
        source, destination = entry if isinstance(entry, tuple) else (entry, entry)
        arguments += ["--ro-bind", source, destination]
    return arguments + ["--chdir", SCRATCH]


def _numbered_gpus():
    try:
        return [f"/dev/{name}" for name in sorted(os.listdir("/dev")) if name[6:].isdigit() and name.startswith("nvidia")]
    except OSError:
        return []


def _python_paths():
    return python_paths(with_data=True)


def python_paths(with_data=True):
    """(source, destination) folders the host's Python needs, read-only: the interpreter, its
    libraries and the installed packages, the course package itself (an editable install points
    into the checkout) and, with_data, the data folders. Each is bound where this process sees it
    and, when that is a link, where the link leads too. Folders that hold the grader's package are
    left out: nothing of it must be there."""
    import gptcourse

    grader_root = ROOT  # the checkout: the folder that holds grader/
    wanted = {sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.abspath(gptcourse.__file__))}
    wanted.update(p for p in sys.path if p and os.path.isdir(p))
    for variable in ("GPTCOURSE_DATA_MIRROR", "GPTCOURSE_CACHE_DIR", "TIKTOKEN_CACHE_DIR") if with_data else ():
        if os.path.isdir(os.environ.get(variable, "")):
            wanted.add(os.environ[variable])
            wanted.update(_link_targets(os.environ[variable]))
    pairs = {}
    for path in wanted:
        real = os.path.realpath(path)
        if os.path.isdir(os.path.join(real, "grader")) or _inside(real, os.path.join(grader_root, "grader")):
            continue  # the checkout root (or the grader itself): never inside the sandbox
        for destination in {os.path.abspath(path), real}:
            if not any(_inside(destination, system) for system in SYSTEM_PATHS):
                pairs[destination] = real
    return [(pairs[d], d) for d in _outermost(pairs)]


def _link_targets(folder):
    """The folders that links inside a data folder lead to: a mirror made of links to files kept
    elsewhere (a workshop's shared disk, say) must be readable in the sandbox too, or every task
    that reads a data set would fail there while the grader's preflight, outside, found it."""
    found = set()
    for here, dirs, files in os.walk(folder):  # links to folders are listed, not followed
        for name in dirs + files:
            path = os.path.join(here, name)
            if os.path.islink(path) and os.path.exists(path):
                # The folder as the link names it (it may pass through further links, as the
                # data mirror ../shared/data may in a CI checkout): bound there and where it really is.
                named = os.path.normpath(os.path.join(here, os.readlink(path)))
                found.add(named if os.path.isdir(named) else os.path.dirname(named))
    return found


def _inside(path, folder):
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _outermost(paths):
    kept = []
    for path in sorted(paths):
        if not any(_inside(path, parent) for parent in kept):
            kept.append(path)
    return kept


def end_stray_processes(keep=()):
    """End every descendant of the grader except the worker hosts in `keep` (and theirs)."""
    return processes.end_descendants(os.getpid(), keep=keep)
