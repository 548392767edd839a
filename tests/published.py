"""The course as an instructor publishes it (docs/publishing.md) and a student meets it on Colab.

Nothing here reaches the internet; local stand-ins take its place:
- the instructor's fork on GitHub: a bare git repository made from this checkout, cloned and
  pushed to over file:// by the commands of docs/publishing.md, run as they are written;
- Colab's runtime: a fresh virtual environment with torch and ipykernel but not gptcourse, whose
  Python runs the notebooks' kernels (Colab has torch; the install cell must bring the rest);
- the data's public addresses: the data mirror (GPTCOURSE_DATA_MIRROR).

tests/conftest.py makes one of each per test session (`published`, `colab`), shared by
tests/notebooks/test_publishing.py and tests/notebooks/test_colab.py.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager
from nbclient import NotebookClient

from factory import REPO

DOC = REPO / "docs" / "publishing.md"
FENCED_BLOCK = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
# What the test prints after each bash block of the doc, to show that the block ran to its end.
BLOCK_DONE = "=== publishing.md block done:"
# Who commits in the instructor's clone (a real instructor has git configured).
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "A Teacher", "GIT_AUTHOR_EMAIL": "teacher@example.org",
                "GIT_COMMITTER_NAME": "A Teacher", "GIT_COMMITTER_EMAIL": "teacher@example.org"}


def code_blocks(text=None):
    """[(language, code)] of the fenced code blocks of docs/publishing.md, in order."""
    return FENCED_BLOCK.findall(DOC.read_text() if text is None else text)


def bash_blocks():
    return [code for language, code in code_blocks() if language == "bash"]


def doc_value(name):
    """The value a bash block of the doc gives NAME (`NAME=value   # comment`)."""
    values = [m.group(1) for code in bash_blocks() for m in re.finditer(rf"^{name}=(\S+)", code, re.MULTILINE)]
    assert len(values) == 1, f"docs/publishing.md sets {name} {len(values)} times"
    return values[0]


# -- the instructor's side: docs/publishing.md, run ---------------------------------------------

def make_fork(folder):
    """A bare repository holding this checkout's files as one commit on main: the stand-in for
    the instructor's fork on GitHub. Its address, like a GitHub one, is given without .git.

    The address names the host, file://localhost/...: pip before 24 (packaging before 22)
    refuses `gptcourse @ git+file:///...`, a URL with an empty host; GitHub's have one."""
    source = folder / "upstream"
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=REPO, capture_output=True, text=True, check=True).stdout
    for name in filter(None, listed.split("\0")):
        if (REPO / name).is_file():  # a file deleted but not yet committed is listed too
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, source / name)
    env = {**os.environ, **GIT_IDENTITY}
    for command in (["git", "init", "-q", "-b", "main"], ["git", "add", "-A"],
                    ["git", "commit", "-q", "-m", "the course as upstream has it"]):
        subprocess.run(command, cwd=source, env=env, check=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(folder / "fork.git")], check=True)
    return f"file://localhost{folder / 'fork'}"


def venv_view(folder):
    """A folder that Python takes for this test run's virtual environment (links to its parts),
    with a `make setup` marker of its own: the instructor's clone uses it as its .venv, so the
    doc's `make setup` has nothing to install and this environment's files are never touched."""
    venv = Path(sys.prefix)
    if not (venv / "pyvenv.cfg").is_file():
        raise RuntimeError(f"run the tests from the project's virtual environment (make setup), not {venv}")
    folder.mkdir()
    for part in venv.iterdir():
        if part.name != ".installed":
            (folder / part.name).symlink_to(part)
    return folder


class Published:
    """What running docs/publishing.md left: the fork, the clone, the nbgrader course directory."""

    def __init__(self, folder, fork, places, output, returncode):
        self.folder, self.fork, self.places = folder, fork, places
        self.output, self.returncode = output, returncode
        self.clone = folder / "instructor" / "gpt-course"
        self.course_dir = Path(places["COURSE_DIR"])

    def __repr__(self):  # keeps pytest's reports short
        return f"<docs/publishing.md run in {self.folder}>"

    @property
    def fork_git(self):
        return Path(self.fork.removeprefix("file://localhost") + ".git")

    def wheel(self):
        wheels = sorted((self.clone / "dist").glob("gptcourse-*.whl"))
        assert len(wheels) == 1, wheels
        return wheels[0]

    def pushed(self, path):
        """A file as the fork's main branch has it: what GitHub would serve."""
        return subprocess.run(["git", "show", f"main:{path}"], cwd=self.fork_git, capture_output=True,
                              text=True, check=True).stdout

    def pushed_commit(self):
        return subprocess.run(["git", "rev-parse", "main"], cwd=self.fork_git, capture_output=True,
                              text=True, check=True).stdout.strip()


def script_of_the_doc(places, after_line):
    """The doc's bash blocks as one script. Lines `NAME=...` that name one of `places` get the
    test's stand-in instead; after a line in `after_line`, the test's own glue is inserted.
    Every block ends by printing BLOCK_DONE, its number and the seconds since the start."""
    script, replaced = ["set -euo pipefail"], {name: 0 for name in places}
    for number, code in enumerate(bash_blocks(), 1):
        for line in code.splitlines():
            match = re.match(r"^(export )?([A-Z_]+)=\S+", line)
            if match and match.group(2) in places:
                name = match.group(2)
                line = f"{match.group(1) or ''}{name}={shlex.quote(str(places[name]))}"
                replaced[name] += 1
            script.append(line)
            if line.strip() in after_line:
                script.append(after_line[line.strip()])
        script.append(f"echo \"{BLOCK_DONE} {number} after $SECONDS s\"")
    assert all(count == 1 for count in replaced.values()), f"placeholders of the doc: {replaced}"
    return "\n".join(script) + "\n"


def publish(folder, mirror, student_notebook):
    """Run docs/publishing.md against the stand-ins, with one student's notebook downloaded."""
    fork = make_fork(folder)
    downloads = folder / "downloads"
    downloads.mkdir()
    (downloads / "alice.ipynb").write_text(json.dumps(student_notebook, indent=1))
    places = {"FORK": fork, "DOWNLOADS": downloads, "COURSE_DIR": folder / "nbgrader-course",
              "GPTCOURSE_DATA_MIRROR": mirror}
    view = venv_view(folder / "venv-view")
    glue = {"cd gpt-course": f"ln -s {shlex.quote(str(view))} .venv && touch .venv/.installed"}
    instructor = folder / "instructor"
    instructor.mkdir()
    clone = instructor / "gpt-course"
    env = {**os.environ, **GIT_IDENTITY,
           # The clone's own packages, not this checkout's (the environment is this checkout's).
           "PYTHONPATH": os.pathsep.join([str(clone / "course"), str(clone)]),
           # `make release` (before the doc's mirror section) reads the data too.
           "GPTCOURSE_DATA_MIRROR": str(mirror), "GPTCOURSE_CACHE_DIR": str(folder / "cache"),
           "MPLBACKEND": "Agg"}
    for name in ("TIKTOKEN_CACHE_DIR", "GPTCOURSE_INSTALL_FROM", "VIRTUAL_ENV"):
        env.pop(name, None)
    result = subprocess.run(["bash", "-c", script_of_the_doc(places, glue)], cwd=instructor, env=env,
                            capture_output=True, text=True, timeout=900)
    return Published(folder, fork, places, result.stdout + result.stderr, result.returncode)


# -- the student's side: a stand-in for Colab's runtime ------------------------------------------

class ColabRuntime:
    """A fresh virtual environment with what Colab has (torch, ipykernel, numpy, pandas,
    matplotlib, seaborn, tqdm) but not gptcourse, and a Jupyter kernel that runs in it.

    Making it takes a minute or two, mostly installing torch: `start` does it in the background
    (while the tests run the instructor's commands), and everything that uses it waits for it."""

    KERNEL = "colab-stand-in"
    COLAB_HAS = ("ipykernel", "numpy", "pandas", "matplotlib", "seaborn", "tqdm")

    def __init__(self, folder):
        self.folder = folder
        self.venv = folder / "venv"
        self.python = self.venv / "bin" / "python"
        self.kernels = folder / "kernels"
        self._making = None

    def start(self):
        # The torch of this test run (on the course machines the CPU wheel on disk), not the
        # newest one: the course package must accept the torch a runtime comes with.
        torch = f"torch=={metadata.version('torch').split('+')[0]}"
        commands = [[sys.executable, "-m", "venv", str(self.venv)],
                    [str(self.python), "-m", "pip", "install", "--quiet", torch, *self.COLAB_HAS]]
        script = " && ".join(shlex.join(command) for command in commands)
        with open(self.folder / "making.log", "w") as log:  # a file: a full pipe would stall pip
            self._making = subprocess.Popen(["bash", "-c", script], stdout=log, stderr=subprocess.STDOUT)
        kernel_folder = self.kernels / self.KERNEL
        kernel_folder.mkdir(parents=True)
        (kernel_folder / "kernel.json").write_text(json.dumps({
            "argv": [str(self.python), "-m", "ipykernel_launcher", "-f", "{connection_file}"],
            "display_name": "Colab stand-in", "language": "python"}))
        return self

    def wait(self):
        if self._making.wait(timeout=900) != 0:
            raise RuntimeError(f"making the Colab stand-in failed:\n{(self.folder / 'making.log').read_text()}")

    def stop(self):
        if self._making.poll() is None:
            self._making.kill()
            self._making.wait()

    def pip(self, *args):
        self.wait()
        result = subprocess.run([str(self.python), "-m", "pip", "--quiet", *args], capture_output=True,
                                text=True, timeout=900, env=self.environment(None))
        assert result.returncode == 0, f"pip {' '.join(args)} failed:\n{result.stdout}\n{result.stderr}"
        return result

    def run_python(self, code):
        self.wait()
        return subprocess.run([str(self.python), "-c", code], capture_output=True, text=True, check=True,
                              cwd=self.folder, env=self.environment(None)).stdout

    def environment(self, mirror):
        """A student's runtime knows nothing of this checkout: no PYTHONPATH, no course settings."""
        env = {name: value for name, value in os.environ.items()
               if not name.startswith(("GPTCOURSE_", "PYTHON", "JUPYTER", "NBGRADER", "TIKTOKEN"))
               and name != "VIRTUAL_ENV"}
        env.update(MPLBACKEND="Agg", GPTCOURSE_CACHE_DIR=str(self.folder / "cache"))
        if mirror:
            env["GPTCOURSE_DATA_MIRROR"] = str(mirror)
        return env

    def run_notebook(self, nb, folder, mirror):
        """Run every cell of `nb` with its folder as the working directory, going on after errors
        (the tasks are stubs: demo and check cells fail, with one-line messages)."""
        self.wait()
        manager = KernelManager(kernel_name=self.KERNEL,
                                kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(self.kernels)]))
        client = NotebookClient(nb, km=manager, timeout=600, allow_errors=True,
                                resources={"metadata": {"path": str(folder)}})
        client.execute(env=self.environment(mirror))
        return nb

    def installed_from(self):
        """pip's record of where gptcourse came from (PEP 610 direct_url.json)."""
        code = ("import importlib.metadata as m; "
                "print(m.distribution('gptcourse').read_text('direct_url.json'))")
        return json.loads(self.run_python(code))


def first_wrong_item(chapter):
    """The corpus's first wrong cell of the chapter's first task: the student's one mistake."""
    from factory import corpus_items
    from gptcourse.checking.tasks import tasks_of

    first_task = tasks_of(chapter)[0].id
    return next(item for item in corpus_items() if item.task == first_task and item.expect == "wrong"
                and item.name.startswith("wrong_"))
