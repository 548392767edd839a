"""A JupyterHub for the course on one machine, with nbgrader's exchange (docs/hub.md).

    python -m grader hub init DIR [--roster students.csv] [--instructor NAME]   (a term: PAM logins)
    python -m grader hub init DIR --workshop N                                    (a room: one access code)
    python -m grader hub start DIR                                                (Ctrl-C stops it all)

`init` (as root: it creates unix accounts) writes into DIR what the hub needs: its
jupyterhub_config.py and hub.json, the Jupyter and nbgrader configuration each role's server
reads (jupyter/instructor, jupyter/student), nbgrader's exchange, and the passwords or the
access code it made (readable by root alone). It creates nbgrader's groups (formgrade-<course>
for instructors, nbgrader-<course> for students), the accounts with private homes, and the
instructor's nbgrader course directory with every chapter generated; a workshop's participants
find the workshop edition in their homes. Nothing here is a hub, proxy or exchange of its own:
JupyterHub, configurable-http-proxy and nbgrader do the work.
"""
import csv
import grp
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time

from gptcourse.lab_settings import turn_off_jupyter_news
from grader.paths import ROOT

COURSE_ID = "gpt-from-scratch"  # grader/nbgrading/nbgrader_config.py's CourseDirectory.course_id
INSTRUCTOR_GROUP = f"formgrade-{COURSE_ID}"
STUDENT_GROUP = f"nbgrader-{COURSE_ID}"
HERE = os.path.dirname(os.path.abspath(__file__))
HUB_CONFIG = os.path.join(HERE, "jupyterhub_config.py")
# What students may read of the course's checkout: the interpreter's environment and the student
# package. Every other top-level folder (the masters, the grader with its hidden tests and
# reference, the corpus, git's history) is for the instructors' group only.
OPEN_TO_STUDENTS = {".venv", "course"}
# nbgrader's pieces students do not use: creating assignments, the formgrader, the course list.
INSTRUCTOR_ONLY_LAB_PLUGINS = ["@jupyter/nbgrader:formgrader", "@jupyter/nbgrader:create-assignment",
                               "@jupyter/nbgrader:course-list"]
INSTRUCTOR_ONLY_SERVER_EXTENSIONS = ["nbgrader.server_extensions.formgrader", "nbgrader.server_extensions.course_list"]
# The memory a kernel may use beyond what it holds when it starts, and the seconds a task may run:
# the course grader's defaults (python -m grader grade --memory-mb, --timeout).
KERNEL_MEMORY_MB = 2048
TASK_TIMEOUT = 60


class HubError(Exception):
    """A problem `hub init` or `hub start` explains in one message."""


# -- the command line ------------------------------------------------------------------------------

def add_parser(commands):
    p = commands.add_parser("hub", help="a JupyterHub for the course on this machine (docs/hub.md)")
    verbs = p.add_subparsers(dest="hub_command", required=True)
    i = verbs.add_parser("init", help="write a hub's configuration into DIR and create its unix accounts (as root)")
    i.add_argument("dir", metavar="DIR")
    i.add_argument("--roster", metavar="CSV", help="the students: a CSV with a 'username' column")
    i.add_argument("--workshop", type=int, metavar="N", help="a workshop room of N participants, one access code")
    i.add_argument("--participant-prefix", default="participant", metavar="PREFIX",
                   help="the participants' account names: PREFIX01 to PREFIXN (default: participant)")
    i.add_argument("--instructor", default="instructor", help="the instructor's account (default: instructor)")
    i.add_argument("--port", type=int, default=8000, help="the hub's port (default 8000)")
    i.add_argument("--ip", default="127.0.0.1", help="the address it listens on (default 127.0.0.1; 0.0.0.0: all)")
    i.add_argument("--task-timeout", type=int, default=TASK_TIMEOUT,
                   help=f"seconds a task may run in Validate and autograde (default {TASK_TIMEOUT}, as the grader's --timeout)")
    i.add_argument("--memory-mb", type=int, default=KERNEL_MEMORY_MB,
                   help=f"memory each kernel may use, beyond what it holds at start (default {KERNEL_MEMORY_MB})")
    s = verbs.add_parser("start", help="start the hub written by init; Ctrl-C stops it and everything it started")
    s.add_argument("dir", metavar="DIR")


def main(args):
    try:
        if args.hub_command == "init":
            summary = init(args.dir, roster=args.roster, workshop=args.workshop, instructor=args.instructor,
                           participant_prefix=args.participant_prefix,
                           port=args.port, ip=args.ip, memory_mb=args.memory_mb, task_timeout=args.task_timeout)
            print(summary)
            return 0
        return start(args.dir)
    except HubError as exc:
        print(f"hub {args.hub_command}: {exc}", file=sys.stderr)
        return 2


# -- init --------------------------------------------------------------------------------------------

def init(hub_dir, roster=None, workshop=None, instructor="instructor", participant_prefix="participant", port=8000,
         ip="127.0.0.1", memory_mb=KERNEL_MEMORY_MB, task_timeout=TASK_TIMEOUT):
    """Write a hub into `hub_dir` and create its accounts; returns what to tell the instructor."""
    if os.geteuid() != 0:
        raise HubError("init creates unix accounts and the exchange: run it as root (sudo)")
    if roster and workshop:
        raise HubError("--roster is for a term, --workshop for a room: give one of them")
    hub_dir = os.path.abspath(hub_dir)
    os.makedirs(hub_dir, exist_ok=True)
    os.chmod(hub_dir, 0o755)  # the users' servers read their configuration here
    _check_readable_by_everyone(os.path.join(hub_dir, "hub.json"))
    _check_readable_by_everyone(sys.executable)
    if os.environ.get("GPTCOURSE_DATA_MIRROR"):  # an offline room's data and tiktoken's files
        _check_readable_by_everyone(os.path.join(os.path.abspath(os.environ["GPTCOURSE_DATA_MIRROR"]), "README.md"))
    proxy = proxy_command()
    if workshop:
        hub = _workshop_hub(hub_dir, workshop, participant_prefix)
    else:
        hub = _term_hub(hub_dir, read_roster(roster) if roster else [], instructor, task_timeout)
    hub.update(ip=ip, port=port, proxy=proxy, memory_mb=memory_mb, task_timeout=task_timeout,
               singleuser=[os.path.join(os.path.dirname(sys.executable), "jupyterhub-singleuser")],
               environment=dict(_server_environment(), JUPYTER_PATH=os.path.join(hub_dir, "jupyter", "data")),
               exchange=os.path.join(hub_dir, "exchange"),
               config_path={role: os.path.join(hub_dir, "jupyter", role) for role in ("instructor", "student")})
    _make_exchange(hub["exchange"])
    for role in ("instructor", "student"):
        _write_role_config(hub, role)
    _write_capped_kernel(hub)
    _close_checkout()
    # No pop-up asking every new user about Jupyter's news over their notebooks: the servers
    # share this environment's JupyterLab, whose defaults make lab's setting too.
    turn_off_jupyter_news()
    _write_json(os.path.join(hub_dir, "hub.json"), hub)
    shutil.copy(HUB_CONFIG, os.path.join(hub_dir, "jupyterhub_config.py"))
    return _summary(hub_dir, hub)


def _term_hub(hub_dir, students, instructor, task_timeout):
    """A term: PAM logins, the instructor and the roster's students as unix accounts."""
    if instructor in students:
        raise HubError(f"{instructor!r} is the instructor's account and a student of the roster")
    _ensure_group(INSTRUCTOR_GROUP)
    _ensure_group(STUDENT_GROUP)
    passwords = {}
    for name, group in [(instructor, INSTRUCTOR_GROUP)] + [(s, STUDENT_GROUP) for s in students]:
        if _ensure_user(name, group):
            passwords[name] = _new_password(name)
    _write_passwords(hub_dir, passwords)
    _make_course_directory(instructor, task_timeout)
    return {"profile": "term", "users": [instructor] + students, "instructor_group": INSTRUCTOR_GROUP,
            "groups": {INSTRUCTOR_GROUP: [instructor], STUDENT_GROUP: students},
            "course_dir": course_directory(instructor)}


def _workshop_hub(hub_dir, participants, prefix):
    """A room: one access code for everyone, PREFIX01..N each with the workshop edition."""
    if participants < 1:
        raise HubError("--workshop needs at least one participant")
    names = [f"{prefix}{i:02d}" for i in range(1, participants + 1)]
    if not _valid_username(names[-1]):
        raise HubError(f"{names[-1]!r} is not an account name: choose another --participant-prefix")
    _ensure_group(STUDENT_GROUP)
    _ensure_group(INSTRUCTOR_GROUP)
    edition = os.path.join(hub_dir, "workshop-edition")
    from grader.authoring.workshop import write_workshop

    write_workshop(edition)
    for name in names:
        _ensure_user(name, STUDENT_GROUP)
        _give_copy(edition, name, "workshop")
    code_path = os.path.join(hub_dir, "access_code")
    if not os.path.exists(code_path):
        _write_private(code_path, secrets.token_urlsafe(9) + "\n")
    return {"profile": "workshop", "users": names, "instructor_group": INSTRUCTOR_GROUP,
            "groups": {INSTRUCTOR_GROUP: [], STUDENT_GROUP: names}, "mem_limit": "3G", "cpu_limit": 1.0}


def read_roster(path):
    """The usernames of a roster CSV (a 'username' column; other columns are ignored)."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except OSError as exc:
        raise HubError(f"the roster {path} could not be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise HubError(f"the roster {path} is not UTF-8 text: save it as 'CSV UTF-8'") from None
    if not rows or "username" not in rows[0]:
        raise HubError(f"the roster {path} needs a 'username' column (one unix account name per student)")
    names = [row["username"].strip() for row in rows if (row.get("username") or "").strip()]
    for name in names:
        if not _valid_username(name):
            raise HubError(f"the roster names {name!r}: an account name is lower-case letters, digits, "
                           f"'_' and '-', starting with a letter, at most 32 characters")
    if len(set(names)) != len(names):
        raise HubError(f"the roster {path} names a student twice")
    return names


def _valid_username(name):
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789_-")
    return 0 < len(name) <= 32 and name[0].isalpha() and name.islower() and set(name) <= allowed


def _server_environment():
    """What every user's server inherits from the instructor's environment: the data mirror, and
    the folder of tiktoken's files when one is set (an offline room)."""
    keep = ["GPTCOURSE_DATA_MIRROR", "GPTCOURSE_CACHE_DIR", "TIKTOKEN_CACHE_DIR", "GPTCOURSE_DEVICE"]
    environment = {name: os.path.abspath(os.environ[name]) if name.endswith(("MIRROR", "DIR")) else os.environ[name]
                   for name in keep if os.environ.get(name)}
    environment["PATH"] = os.path.dirname(sys.executable) + os.pathsep + "/usr/local/bin:/usr/bin:/bin"
    return environment


def proxy_command():
    """configurable-http-proxy: the npm package `make setup` installs (JupyterHub's own proxy),
    else one on PATH (the npm package, or its Python implementation where node is missing)."""
    installed = os.path.join(sys.prefix, "proxy", "node_modules", ".bin", "configurable-http-proxy")
    found = installed if os.access(installed, os.X_OK) else shutil.which(
        "configurable-http-proxy", path=os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""))
    if not found:
        raise HubError("configurable-http-proxy is not installed: `make setup` installs it "
                       "(npm install --prefix .venv/proxy configurable-http-proxy)")
    return [found]


# -- the exchange and the configuration each role reads --------------------------------------------

def _make_exchange(path):
    """nbgrader's exchange: everyone may create entries, nobody may remove another's (sticky bit,
    as /tmp). nbgrader makes the course's folders in it (inbound: write-only for students)."""
    os.makedirs(path, exist_ok=True)
    os.chmod(path, 0o1777)


# Every kernel of the hub starts with the grader's memory cap already (its python3 kernel, below):
# nbgrader must not add the same arguments again (a kernel given them twice refuses to start).
_NO_SECOND_CAP = ["# The hub's python3 kernel has the grader's memory cap (grader/hub/commands.py): nbgrader adds none.",
                  "c.Execute.extra_arguments = []"]


def _write_role_config(hub, role):
    """jupyter/<role>/: nbgrader_config.py, jupyter_server_config.py and JupyterLab's settings."""
    folder = hub["config_path"][role]
    os.makedirs(os.path.join(folder, "labconfig"), exist_ok=True)
    nbgrader = [
        "# nbgrader's settings for every server of this role (written by python -m grader hub init).",
        "c = get_config()  # noqa: F821",
        f"c.CourseDirectory.course_id = {COURSE_ID!r}",
        f"c.Exchange.root = {hub['exchange']!r}",
        *_NO_SECOND_CAP,
        "# Validate stops a cell that runs as long as the grader lets a task run, and says so in words.",
        f"c.Execute.timeout = {hub['task_timeout']}",
        "c.Execute.error_on_timeout = " + repr({
            "ename": "Stopped", "evalue": "",
            "traceback": [f"The cell was stopped: it ran past the {hub['task_timeout']} s a task may run."]}),
    ]
    if role == "instructor" and hub.get("course_dir"):
        nbgrader += [f"c.CourseDirectory.root = {hub['course_dir']!r}",
                     "# collect keeps only submissions made by the student they name (grader/hub/commands.py).",
                     "c.ExchangeFactory.collect = 'grader.hub.collect.OwnerCheckedCollect'"]
    _write(os.path.join(folder, "nbgrader_config.py"), "\n".join(nbgrader) + "\n")
    server = ["c = get_config()  # noqa: F821"]
    if role == "instructor":
        # JupyterHub's servers forbid every page to be shown in a frame, by default; nbgrader's
        # formgrader is a page of the instructor's own server shown in a frame of their JupyterLab.
        server.append("c.ServerApp.tornado_settings = {'headers': {'Content-Security-Policy': \"frame-ancestors 'self'\"}}")
    if role == "student":
        server.append("c.ServerApp.jpserver_extensions.update("
                      + repr({name: False for name in INSTRUCTOR_ONLY_SERVER_EXTENSIONS}) + ")")
    _write(os.path.join(folder, "jupyter_server_config.py"), "\n".join(server) + "\n")
    disabled = INSTRUCTOR_ONLY_LAB_PLUGINS if role == "student" else []
    _write_json(os.path.join(folder, "labconfig", "page_config.json"),
                {"disabledExtensions": {name: True for name in disabled}})


def _write_capped_kernel(hub):
    """The 'python3' kernel of every user's server, with the grader's memory cap: JupyterLab's
    kernels, not only nbgrader's, so one participant's cell cannot take the room's machine.
    Found first on the servers' JUPYTER_PATH, before the environment's own."""
    from gptcourse.checking.kernel_memory import kernel_arguments

    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}", *kernel_arguments(hub["memory_mb"])]
    _write_json(os.path.join(hub["environment"]["JUPYTER_PATH"], "kernels", "python3", "kernel.json"),
                {"argv": argv, "display_name": "Python 3 (ipykernel)", "language": "python",
                 "metadata": {"debugger": True}})


def course_directory(instructor):
    return os.path.join(pwd.getpwnam(instructor).pw_dir, COURSE_ID)


def _make_course_directory(instructor, task_timeout):
    """The instructor's nbgrader course directory, every chapter generated, owned by them; its
    nbgrader_config.py is the course's, with this hub's time limit per task and kernel."""
    from grader.nbgrading import course as nbgrader_course

    path = course_directory(instructor)
    if not os.path.exists(os.path.join(path, "gradebook.db")):
        nbgrader_course.make_course(path)
        with open(os.path.join(path, "nbgrader_config.py"), "a", encoding="utf-8") as f:
            f.write("\n# In the course hub (python -m grader hub init):\n" + "\n".join(_NO_SECOND_CAP) + "\n"
                    f"c.CourseExecute.task_timeout = {task_timeout}\n")
    _chown_tree(path, instructor)


# -- unix accounts and permissions ------------------------------------------------------------------

def _ensure_group(name):
    try:
        grp.getgrnam(name)
    except KeyError:
        subprocess.run(["groupadd", name], check=True)


def _ensure_user(name, group):
    """Create the account (home readable by its owner alone) unless it exists; True if created."""
    try:
        pwd.getpwnam(name)
        created = False
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--groups", group, name], check=True)
        created = True
    subprocess.run(["usermod", "--append", "--groups", group, name], check=True)
    os.chmod(pwd.getpwnam(name).pw_dir, 0o700)  # Debian's useradd leaves homes readable by all
    return created


def _new_password(name):
    password = secrets.token_urlsafe(12)
    subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True, check=True)
    return password


def _write_passwords(hub_dir, passwords):
    """passwords.csv (root only): the first password of each account init created."""
    if not passwords:
        return
    path = os.path.join(hub_dir, "passwords.csv")
    known = {}
    if os.path.exists(path):
        with open(path, newline="", encoding="utf-8") as f:
            known = {row["username"]: row["password"] for row in csv.DictReader(f)}
    known.update(passwords)
    lines = ["username,password"] + [f"{name},{password}" for name, password in sorted(known.items())]
    _write_private(path, "\n".join(lines) + "\n")


def _give_copy(folder, user, name):
    """A copy of `folder` in the user's home, as home/<name>, owned by the user."""
    account = pwd.getpwnam(user)
    target = os.path.join(account.pw_dir, name)
    if not os.path.exists(target):
        shutil.copytree(folder, target)
    _chown_tree(target, user)


def _chown_tree(path, user):
    account = pwd.getpwnam(user)
    for folder, _, files in os.walk(path):
        for entry in [folder] + [os.path.join(folder, f) for f in files]:
            os.chown(entry, account.pw_uid, account.pw_gid)


def _close_checkout():
    """The checkout's masters, grader (hidden tests, reference) and history: for the instructors'
    group only. Students keep what their servers run: the environment and the student package."""
    gid = grp.getgrnam(INSTRUCTOR_GROUP).gr_gid
    for entry in sorted(os.listdir(ROOT)):
        path = os.path.join(ROOT, entry)
        if entry in OPEN_TO_STUDENTS or os.path.islink(path) or not os.path.isdir(path):
            continue  # the files at the top (README, Makefile, ...) hold nothing to hide
        os.chown(path, -1, gid)
        mode = os.stat(path).st_mode & 0o7777
        os.chmod(path, (mode & ~0o007) | 0o050)
    _check_readable_by_everyone(os.path.join(ROOT, "course", "gptcourse", "__init__.py"))


def _check_readable_by_everyone(path):
    """Every folder above `path` must let other users through: their servers run this Python and
    read their configuration in the hub's folder."""
    path = os.path.realpath(path)
    folder = os.path.dirname(path)
    while True:
        if not os.stat(folder).st_mode & 0o001:
            raise HubError(f"{folder} is closed to other users (mode {oct(os.stat(folder).st_mode & 0o777)}), and "
                           f"{path} lies below it, which every user's server needs. Put the course and the "
                           f"hub where every user can read them (e.g. under /opt and /srv), or open {folder} "
                           f"with chmod o+x")
        if folder == os.path.dirname(folder):
            return
        folder = os.path.dirname(folder)


# -- files ------------------------------------------------------------------------------------------

def _write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def _write_json(path, data):
    _write(path, json.dumps(data, indent=1) + "\n")


def _write_private(path, text):
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as f:
        f.write(text)


def _summary(hub_dir, hub):
    lines = [f"hub written in {hub_dir} ({hub['profile']}: {len(hub['users'])} accounts)",
             f"start it with: python -m grader hub start {hub_dir}",
             f"then open http://{hub['ip']}:{hub['port']}/"]
    if hub["profile"] == "workshop":
        lines.append(f"the room's access code is in {os.path.join(hub_dir, 'access_code')} (root only); "
                     f"participants log in as {hub['users'][0]} to {hub['users'][-1]}")
    else:
        lines.append(f"first passwords of the new accounts: {os.path.join(hub_dir, 'passwords.csv')} (root only)")
        lines.append(f"the instructor's nbgrader course directory: {hub['course_dir']}")
    return "\n".join(lines)


# -- start ------------------------------------------------------------------------------------------

def start(hub_dir, ready=None):
    """Run the hub in `hub_dir` until Ctrl-C (or SIGTERM); then stop it, its proxy and every server
    and kernel it started. `ready`, if given, is called with the hub's process once it answers."""
    hub_dir = os.path.abspath(hub_dir)
    config = os.path.join(hub_dir, "jupyterhub_config.py")
    if not os.path.exists(config):
        raise HubError(f"{hub_dir} holds no hub: write one with python -m grader hub init {hub_dir}")
    if os.geteuid() != 0:
        raise HubError("start it as root (sudo): the hub logs users in with PAM and starts each one's server as them")
    hub = _read_json(os.path.join(hub_dir, "hub.json"))
    command = [os.path.join(os.path.dirname(sys.executable), "jupyterhub"), "-f", config,
               f"--JupyterHub.hub_bind_url=http://127.0.0.1:{free_port()}",
               f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{free_port()}"]
    process = subprocess.Popen(command, cwd=hub_dir, start_new_session=True)
    stop_requested = []
    previous = {sig: signal.signal(sig, lambda *_: stop_requested.append(True)) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        _wait_until_it_answers(process, hub, stop_requested)
        print(f"the hub answers at http://{hub['ip']}:{hub['port']}/ (Ctrl-C stops it)", flush=True)
        if ready:
            ready(process)
        while process.poll() is None and not stop_requested:
            time.sleep(0.2)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        stop(process)
    return 0 if stop_requested or process.returncode == 0 else 1


def stop(process, timeout=60):
    """Stop the hub as JupyterHub stops (its servers and proxy first), then kill by pid whatever it
    started that is still running: the proxy, the users' servers and their kernels."""
    import psutil

    started = _descendants(process.pid)
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for child in started:
        try:
            if child.is_running():  # psutil compares the start time too: never a reused pid
                child.kill()
        except psutil.NoSuchProcess:
            pass


def _descendants(pid):
    import psutil

    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def _wait_until_it_answers(process, hub, stop_requested, timeout=120):
    import urllib.request

    deadline = time.monotonic() + timeout
    url = f"http://{'127.0.0.1' if hub['ip'] == '0.0.0.0' else hub['ip']}:{hub['port']}/hub/health"
    while time.monotonic() < deadline and not stop_requested:
        if process.poll() is not None:
            raise HubError(f"jupyterhub stopped at once (exit {process.returncode}): see its messages above")
        try:
            with urllib.request.urlopen(url, timeout=5):
                return
        except OSError:
            time.sleep(0.3)
    if not stop_requested:
        raise HubError(f"the hub did not answer at {url} within {timeout} s")


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)
