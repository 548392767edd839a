"""The machine as a course hub sees it, for the tests in tests/hub/: real unix accounts, nbgrader
run as those accounts, and `python -m grader hub start` as a real process.

`HubMachine` is the one way these tests change the machine, and it undoes every change:
- the accounts `hub init` creates get names no person uses (gcx + random letters), and are
  deleted with their homes afterwards, after every process they still run is killed by pid;
- nbgrader's groups are deleted when `hub init` created them;
- the folders above this Python, the checkout and the data mirror are opened to other users
  (o+x) where they were not (a CI machine's /root holds the interpreter), and closed again
  afterwards;
- the checkout's top-level folders, which `hub init` closes to students, get back their group
  and mode;
- the hub's folders (pytest's temporary folders are root's alone) are removed.
Only root can create accounts: without root every test here is skipped, saying so (CI runs as
root).
"""
import grp
import json
import os
import pwd
import secrets
import shutil
import signal
import ssl
import stat
import subprocess
import sys
import tempfile
import time
import urllib.request

import psutil
import pytest

from pathlib import Path

from factory import REPO
from grader.hub import commands as course_hub


def require_root():
    if os.geteuid() != 0:
        pytest.skip("the hub tests create unix accounts: run them as root (CI does)")


class HubMachine:
    """Names for a hub's accounts, and the undoing of what the hub and its test did."""

    def __init__(self):
        self.prefix = "gcx" + secrets.token_hex(2)  # gcx + 4 hex digits: no person's account
        self.instructor = self.prefix + "i"
        self.students = [self.prefix + "a", self.prefix + "b"]
        self.participant_prefix = self.prefix + "p"
        self._groups_before = {g.gr_name for g in grp.getgrall()}
        self._opened = []  # folders given o+x
        self._checkout = {entry: os.stat(REPO / entry) for entry in os.listdir(REPO) if (REPO / entry).is_dir()}
        self._folders = []

    def folder(self):
        """A new folder every account can read (pytest's own are root's alone), removed afterwards."""
        path = tempfile.mkdtemp(prefix=self.prefix + "-")
        os.chmod(path, 0o755)
        self._folders.append(path)
        return Path(path)

    def __enter__(self):
        needed = [os.path.realpath(sys.executable), str(REPO / "course" / "gptcourse" / "__init__.py")]
        if os.environ.get("GPTCOURSE_DATA_MIRROR"):
            needed.append(os.path.join(os.path.realpath(os.environ["GPTCOURSE_DATA_MIRROR"]), "README.md"))
        for path in needed:
            self._open_folders_above(path)
        return self

    def __exit__(self, *exc):
        self.cleanup()

    def _open_folders_above(self, path):
        folder = os.path.dirname(path)
        while folder != os.path.dirname(folder):
            mode = os.stat(folder).st_mode
            if not mode & stat.S_IXOTH:
                os.chmod(folder, stat.S_IMODE(mode) | stat.S_IXOTH)
                self._opened.append((folder, stat.S_IMODE(mode)))
            folder = os.path.dirname(folder)

    def accounts(self):
        """Every account of this machine whose name this test made."""
        return [entry.pw_name for entry in pwd.getpwall() if entry.pw_name.startswith(self.prefix)]

    def cleanup(self):
        accounts = self.accounts()
        uids = {pwd.getpwnam(name).pw_uid for name in accounts}
        for process in psutil.process_iter(["uids"]):
            if process.info["uids"] and process.info["uids"].real in uids:
                try:
                    process.kill()
                except psutil.NoSuchProcess:
                    pass
        psutil.wait_procs([p for p in psutil.process_iter(["uids"]) if p.info["uids"] and p.info["uids"].real in uids],
                          timeout=10)
        for name in accounts:
            subprocess.run(["userdel", "--remove", name], capture_output=True)
        for group in {course_hub.INSTRUCTOR_GROUP, course_hub.STUDENT_GROUP} - self._groups_before:
            subprocess.run(["groupdel", group], capture_output=True)
        for folder in self._folders:
            shutil.rmtree(folder, ignore_errors=True)
        for folder, mode in reversed(self._opened):
            os.chmod(folder, mode)
        for entry, before in self._checkout.items():
            os.chown(REPO / entry, before.st_uid, before.st_gid)
            os.chmod(REPO / entry, stat.S_IMODE(before.st_mode))


def as_user(hub_dir, name, *command, cwd=None, extra_env=None):
    """Run `command` as the unix account `name`, with the environment the hub gives its server."""
    account = pwd.getpwnam(name)
    hub = json.loads((hub_dir / "hub.json").read_text())
    role = "instructor" if name in hub["groups"][course_hub.INSTRUCTOR_GROUP] else "student"
    env = dict(hub["environment"], HOME=account.pw_dir, USER=name, LOGNAME=name,
               JUPYTER_CONFIG_PATH=hub["config_path"][role], **(extra_env or {}))
    groups = [g.gr_gid for g in grp.getgrall() if name in g.gr_mem]
    return subprocess.run([str(part) for part in command], user=account.pw_uid, group=account.pw_gid,
                          extra_groups=groups, env=env, cwd=cwd or account.pw_dir, capture_output=True, text=True)


def python_as(hub_dir, name, code):
    """Run Python `code` as the account `name`; its CompletedProcess."""
    return as_user(hub_dir, name, sys.executable, "-c", code)


def nbgrader_as(hub_dir, name, *args, cwd=None, extra_env=None):
    """nbgrader run as the account `name`; raises with its messages when it fails."""
    result = as_user(hub_dir, name, sys.executable, "-m", "nbgrader", *args, cwd=cwd, extra_env=extra_env)
    if result.returncode != 0:
        raise AssertionError(f"nbgrader {' '.join(args)} as {name} failed (exit {result.returncode}):\n"
                             f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result


def passwords(hub_dir):
    """{account: first password}, as init wrote them for root in the hub's private state."""
    lines = (hub_dir / course_hub.STATE / "passwords.csv").read_text().splitlines()[1:]
    return dict(line.split(",", 1) for line in lines)


class RunningHub:
    """`python -m grader hub start DIR` as a process of its own; stop() presses Ctrl-C."""

    def __init__(self, hub_dir, env=None):
        self.hub_dir = hub_dir
        self.hub = json.loads((hub_dir / "hub.json").read_text())
        self.url = course_hub.hub_url(self.hub)
        # A hub with a certificate made by the test: asked without checking it.
        self._context = ssl._create_unverified_context() if self.hub.get("ssl_cert") else None
        self.log_path = hub_dir / "hub-test.log"
        with open(self.log_path, "w") as log:
            self.process = subprocess.Popen([sys.executable, "-m", "grader", "hub", "start", str(hub_dir)],
                                            stdout=log, stderr=subprocess.STDOUT, env=env or dict(os.environ))
        self._wait_until_it_answers()

    def wait_until_it_answers(self, timeout=120):
        self._wait_until_it_answers(timeout)

    def process_named(self, name):
        """The one process the hub started whose command line names `name` (jupyterhub's own:
        `jupyterhub -f`; the proxy: configurable-http-proxy)."""
        marker = "jupyterhub -f" if name == "jupyterhub" else name
        found = [p for p in self.started() if marker in " ".join(_command_line(p))]
        assert len(found) == 1, (name, [_command_line(p) for p in found])
        return found[0]

    def kill(self, name):
        """SIGKILL the hub's process `name`, as the kernel's out-of-memory killer would; returns it."""
        process = self.process_named(name)
        process.kill()
        return process

    def wait_for_log(self, text, timeout=120):
        deadline = time.monotonic() + timeout
        while text not in self.log(tail=10**6):
            if time.monotonic() > deadline or self.process.poll() is not None:
                raise AssertionError(f"{text!r} not in the hub's log within {timeout} s:\n{self.log()}")
            time.sleep(0.5)

    def _wait_until_it_answers(self, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"hub start ended at once (exit {self.process.returncode}):\n{self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/hub/health", timeout=5, context=self._context):
                    return
            except OSError:
                time.sleep(0.3)
        raise AssertionError(f"the hub did not answer within {timeout} s:\n{self.log()}")

    def log(self, tail=6000):
        return self.log_path.read_text(errors="replace")[-tail:]

    def started(self):
        """The processes the hub started (proxy, users' servers, kernels), by pid."""
        return psutil.Process(self.process.pid).children(recursive=True)

    def press_ctrl_c(self, timeout=90):
        """SIGINT, as Ctrl-C in the terminal; the exit status of `hub start`."""
        return self._stop_with(signal.SIGINT, "Ctrl-C", timeout)

    def hang_up(self, timeout=90):
        """SIGHUP, as when the terminal or SSH session that ran `hub start` closes; its exit status."""
        return self._stop_with(signal.SIGHUP, "SIGHUP", timeout)

    def _stop_with(self, sig, name, timeout):
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            return self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            raise AssertionError(f"hub start did not stop within {timeout} s of {name}:\n{self.log()}") from None


def _command_line(process):
    """The process's command line with each part's folders left out ('python jupyterhub -f ...')."""
    try:
        return [os.path.basename(part) for part in process.cmdline()]
    except psutil.NoSuchProcess:
        return []


def self_signed_certificate(folder, name="localhost"):
    """A certificate and key made here with openssl (valid two days, for `name` and 127.0.0.1)."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={name}",
                    "-addext", f"subjectAltName=DNS:{name},IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    os.chmod(key, 0o600)
    return str(cert), str(key)
