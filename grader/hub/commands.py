"""A JupyterHub for the course on one machine, with nbgrader's exchange (docs/hub.md).

    python -m grader hub init DIR [--roster students.csv] [--instructor NAME]   (a term: PAM logins)
    python -m grader hub init DIR --workshop N                                    (a room: one access code)
    python -m grader hub start DIR                                                (Ctrl-C stops it all)

`init` (as root: it creates unix accounts) writes into DIR what the hub needs: its
jupyterhub_config.py and hub.json, the Jupyter and nbgrader configuration each role's server
reads (jupyter/instructor, jupyter/student), nbgrader's exchange with the course's folders,
a systemd unit, and, in DIR/state (root alone may enter it), the hub's secrets: the cookie
secret, the proxy's token, the passwords or the access code it made. It creates nbgrader's
groups (formgrade-<course> for instructors, nbgrader-<course> for students), the accounts with
private homes, and the instructor's nbgrader course directory with every chapter generated; a
workshop's participants find the workshop edition in their homes. Whatever lands in a user's
home is written by that user's own process (accounts.run_as), never by root. Nothing here is a
hub, proxy or exchange of its own: JupyterHub, configurable-http-proxy and nbgrader do the work.
"""
import ipaddress
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import ssl
import stat
import subprocess
import sys
import time

from gptcourse import lab_settings
from gptcourse.lab_settings import turn_off_jupyter_news
from gptcourse.checking.worker_host.processes import PR_SET_CHILD_SUBREAPER, prctl
from grader.grading.gradefolder import write_atomically
from grader.hub import accounts
from grader.hub.accounts import AccountError
from grader.hub.course_directory import NO_SECOND_CAP
from grader.paths import ROOT

COURSE_ID = "gpt-from-scratch"  # grader/nbgrading/nbgrader_config.py's CourseDirectory.course_id
INSTRUCTOR_GROUP = f"formgrade-{COURSE_ID}"
STUDENT_GROUP = f"nbgrader-{COURSE_ID}"
HERE = os.path.dirname(os.path.abspath(__file__))
HUB_CONFIG = os.path.join(HERE, "jupyterhub_config.py")
# The hub's private files, in DIR/state (0700, root's): none of them may reach a user. The
# database holds every user's tokens; with the cookie secret anyone could forge any login.
STATE = "state"
PRIVATE_FILES = ["jupyterhub.sqlite", "jupyterhub_cookie_secret", "jupyterhub-proxy.pid", "proxy_token",
                 "passwords.csv", "access_code", "admin_password", "accounts"]
SYSTEMD_UNIT = "gpt-course-hub.service"
# What students may read of the course's checkout: the interpreter's environment and the student
# package. Every other top-level folder (the masters, the grader with its hidden tests and
# reference, the corpus, git's history) is for the instructors' group only.
OPEN_TO_STUDENTS = {".venv", "course"}
# nbgrader's pieces students do not use (gptcourse/lab_settings.py, which `make lab` uses too).
# The instructors do not get the formgrader's JupyterLab panel either: it shows the formgrader in
# a frame, which a hub on one address must forbid (a user's page could frame another's server);
# they open the formgrader in a browser tab of its own (FORMGRADER_URL).
INSTRUCTOR_ONLY_LAB_PLUGINS = lab_settings.INSTRUCTOR_ONLY_LAB_PLUGINS
FRAMED_LAB_PLUGINS = ["@jupyter/nbgrader:formgrader"]
FORMGRADER_URL = "/hub/user-redirect/formgrader"  # JupyterHub sends each user to their own server's
INSTRUCTOR_ONLY_SERVER_EXTENSIONS = lab_settings.INSTRUCTOR_ONLY_SERVER_EXTENSIONS
# Every server: a kernel running a cell keeps its server from being stopped as idle; Validate runs
# in a process of its own (nbgrader's runs in the server's event loop, which then answers nothing,
# not even the hub asking after a restart whether the server is there).
SERVER_EXTENSIONS = {"gptcourse.busy_kernels": True, "gptcourse.validate_in_background": True,
                     "nbgrader.server_extensions.validate_assignment": False}
# The memory a kernel may use beyond what it holds when it starts, and the seconds a task may run:
# the course grader's defaults (python -m grader grade --memory-mb, --timeout).
KERNEL_MEMORY_MB = 2048
TASK_TIMEOUT = 60
IDLE_TIMEOUT = 3600  # a server nobody used for an hour is stopped (never one whose kernel is busy)
# nbgrader's modes for the course's folders in the exchange, as its first release makes them:
# outbound readable by all, inbound writable but not listable (setgid: submissions get its
# group), feedback enterable but not listable. Made at init, owned by the instructor, so that no
# student can make them first.
EXCHANGE_FOLDERS = {"": 0o755, "outbound": 0o755, "inbound": 0o2733, "feedback": 0o711}


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
    i.add_argument("--instructor", default="instructor",
                   help="the instructor's account, the hub's admin; in a workshop, the host's (default: instructor)")
    i.add_argument("--adopt", action="store_true",
                   help="let the hub use existing accounts it did not create (never system accounts)")
    i.add_argument("--port", type=int, default=8000, help="the hub's port (default 8000)")
    i.add_argument("--ip", default="127.0.0.1",
                   help="the address it listens on (default 127.0.0.1; another needs --ssl-cert or --behind-tls-proxy)")
    i.add_argument("--ssl-cert", metavar="FILE", help="serve HTTPS with this certificate (PEM, the full chain)")
    i.add_argument("--ssl-key", metavar="FILE", help="... and this private key (PEM, readable by root alone)")
    i.add_argument("--behind-tls-proxy", action="store_true",
                   help="plain HTTP on a network address, because a proxy in front of the hub serves HTTPS")
    i.add_argument("--task-timeout", type=int, default=TASK_TIMEOUT,
                   help=f"seconds a task may run in Validate and autograde (default {TASK_TIMEOUT}, as the grader's --timeout)")
    i.add_argument("--memory-mb", type=int, default=KERNEL_MEMORY_MB,
                   help=f"memory each kernel may use, beyond what it holds at start (default {KERNEL_MEMORY_MB})")
    i.add_argument("--idle-timeout", type=int, default=IDLE_TIMEOUT, metavar="SECONDS",
                   help=f"stop a server unused this long, never one whose kernel is busy (default {IDLE_TIMEOUT}; 0: never)")
    s = verbs.add_parser("start", help="start the hub written by init; Ctrl-C stops it and everything it started")
    s.add_argument("dir", metavar="DIR")


def main(args):
    try:
        if args.hub_command == "init":
            summary = init(args.dir, roster=args.roster, workshop=args.workshop, instructor=args.instructor,
                           participant_prefix=args.participant_prefix, adopt=args.adopt,
                           port=args.port, ip=args.ip, ssl_cert=args.ssl_cert, ssl_key=args.ssl_key,
                           behind_tls_proxy=args.behind_tls_proxy, memory_mb=args.memory_mb,
                           task_timeout=args.task_timeout, idle_timeout=args.idle_timeout)
            print(summary)
            return 0
        return start(args.dir)
    except (HubError, AccountError) as exc:
        print(f"hub {args.hub_command}: {exc}", file=sys.stderr)
        return 2


# -- init --------------------------------------------------------------------------------------------

def init(hub_dir, roster=None, workshop=None, instructor="instructor", participant_prefix="participant", adopt=False,
         port=8000, ip="127.0.0.1", ssl_cert=None, ssl_key=None, behind_tls_proxy=False,
         memory_mb=KERNEL_MEMORY_MB, task_timeout=TASK_TIMEOUT, idle_timeout=IDLE_TIMEOUT):
    """Write a hub into `hub_dir` and create its accounts; returns what to tell the instructor.
    Everything that can be checked is checked before the machine is changed."""
    if os.geteuid() != 0:
        raise HubError("init creates unix accounts and the exchange: run it as root (sudo)")
    if roster and workshop is not None:
        raise HubError("--roster is for a term, --workshop for a room: give one of them")
    if workshop is not None and workshop < 1:
        raise HubError(f"--workshop {workshop}: a workshop room needs at least one participant")
    if not accounts.valid_username(instructor):
        raise HubError(f"--instructor {instructor!r}: {accounts.USERNAME_RULE}")
    if idle_timeout < 0:
        raise HubError("--idle-timeout is a number of seconds (0: never stop an idle server)")
    tls = _check_tls(ip, ssl_cert, ssl_key, behind_tls_proxy)
    hub_dir = os.path.abspath(hub_dir)
    state = os.path.join(hub_dir, STATE)
    students = read_roster(roster) if roster else []
    if workshop is not None:
        students = _participant_names(participant_prefix, workshop)
    if instructor in students:
        raise HubError(f"{instructor!r} is the instructor's account and a student of the roster")
    hub_accounts = _hub_accounts(hub_dir)
    accounts.check_may_use([instructor] + students, hub_accounts, adopt=adopt)
    proxy = proxy_command()

    _make_private_state(hub_dir)
    _check_readable_by_everyone(os.path.join(hub_dir, "hub.json"))
    _check_readable_by_everyone(sys.executable)
    if os.environ.get("GPTCOURSE_DATA_MIRROR"):  # an offline room's data and tiktoken's files
        _check_readable_by_everyone(os.path.join(os.path.abspath(os.environ["GPTCOURSE_DATA_MIRROR"]), "README.md"))
    accounts.ensure_group(INSTRUCTOR_GROUP)
    accounts.ensure_group(STUDENT_GROUP)

    def record_made(name):
        hub_accounts.add(name)
        write_atomically(os.path.join(state, "accounts"), "".join(f"{n}\n" for n in sorted(hub_accounts)), mode=0o600)

    made_before = set(hub_accounts)
    accounts.ensure_user(instructor, INSTRUCTOR_GROUP, made_before, record_made)
    for name in students:
        accounts.ensure_user(name, STUDENT_GROUP, made_before, record_made)
    _close_checkout()  # before the instructor's course directory: they read the masters as a group member
    if workshop is not None:
        hub = _workshop_hub(hub_dir, instructor, students, task_timeout)
    else:
        hub = _term_hub(hub_dir, instructor, students, task_timeout)
    hub.update(ip=ip, port=port, proxy=proxy, memory_mb=memory_mb, task_timeout=task_timeout, idle_timeout=idle_timeout,
               **tls, singleuser=[os.path.join(os.path.dirname(sys.executable), "jupyterhub-singleuser")],
               environment=dict(_server_environment(), JUPYTER_PATH=os.path.join(hub_dir, "jupyter", "data")),
               exchange=os.path.join(hub_dir, "exchange"), state=state,
               config_path={role: os.path.join(hub_dir, "jupyter", role) for role in ("instructor", "student")})
    _make_exchange(hub["exchange"], instructor)
    for role in ("instructor", "student"):
        _write_role_config(hub, role)
    _write_capped_kernel(hub)
    # No pop-up asking every new user about Jupyter's news over their notebooks: the servers
    # share this environment's JupyterLab, whose defaults make lab's setting too.
    turn_off_jupyter_news()
    _write_json(os.path.join(hub_dir, "hub.json"), hub)
    shutil.copy(HUB_CONFIG, os.path.join(hub_dir, "jupyterhub_config.py"))
    write_atomically(os.path.join(hub_dir, SYSTEMD_UNIT), systemd_unit(hub_dir))
    return _summary(hub_dir, hub)


def _check_tls(ip, ssl_cert, ssl_key, behind_tls_proxy):
    """{ssl_cert, ssl_key} for hub.json; refuses passwords in clear on a network address."""
    if bool(ssl_cert) != bool(ssl_key):
        raise HubError("--ssl-cert and --ssl-key go together: the certificate and its private key")
    if ssl_cert and behind_tls_proxy:
        raise HubError("--behind-tls-proxy says a proxy in front serves HTTPS: give it, or --ssl-cert, not both")
    if not ssl_cert:
        if not _is_loopback(ip) and not behind_tls_proxy:
            raise HubError(f"--ip {ip} serves a network, and logins (passwords, the room's access code) would cross "
                           f"it in clear: give --ssl-cert FILE --ssl-key FILE, or --behind-tls-proxy if a proxy in "
                           f"front of the hub serves HTTPS")
        return {"ssl_cert": None, "ssl_key": None}
    paths = {"ssl_cert": os.path.abspath(ssl_cert), "ssl_key": os.path.abspath(ssl_key)}
    for option, path in paths.items():
        if not os.path.isfile(path):
            raise HubError(f"--{option.replace('_', '-')} {path}: no such file")
    if os.stat(paths["ssl_key"]).st_mode & 0o077:
        raise HubError(f"--ssl-key {paths['ssl_key']} can be read by others than its owner: chmod 600 it first")
    try:
        ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(paths["ssl_cert"], paths["ssl_key"])
    except (ssl.SSLError, OSError) as exc:
        raise HubError(f"the certificate and key could not be used together ({exc})") from None
    return paths


def _is_loopback(ip):
    if ip == "localhost":
        return True
    try:
        return ipaddress.ip_address(ip).is_loopback
    except ValueError:
        return False


def _participant_names(prefix, participants):
    names = [f"{prefix}{i:02d}" for i in range(1, participants + 1)]
    if not accounts.valid_username(names[-1]):
        raise HubError(f"{names[-1]!r} is not an account name: choose another --participant-prefix")
    return names


def _hub_accounts(hub_dir):
    """The accounts this hub made (or adopted): its private list, and the users of a hub.json an
    earlier init wrote (a hub from before the list was kept)."""
    found = set()
    listed = os.path.join(hub_dir, STATE, "accounts")
    if os.path.exists(listed):
        with open(listed, encoding="utf-8") as f:
            found |= {line.strip() for line in f if line.strip()}
    if os.path.exists(os.path.join(hub_dir, "hub.json")):
        found |= set(_read_json(os.path.join(hub_dir, "hub.json")).get("users", []))
    return found


def _term_hub(hub_dir, instructor, students, task_timeout):
    """A term: PAM logins, the instructor and the roster's students as unix accounts."""
    accounts.give_first_passwords([instructor] + students, os.path.join(hub_dir, STATE, "passwords.csv"))
    course = _make_course_directory(instructor, task_timeout)
    return {"profile": "term", "users": [instructor] + students, "instructor_group": INSTRUCTOR_GROUP,
            "groups": {INSTRUCTOR_GROUP: [instructor], STUDENT_GROUP: students}, "course_dir": course}


def _workshop_hub(hub_dir, host, participants, task_timeout):
    """A room: one access code for everyone, PREFIX01..N each with the workshop edition; the
    host is the hub's admin, with a password of their own and a course directory (to release a
    chapter, collect and grade, as in a term)."""
    from grader.authoring.workshop import write_workshop

    edition = os.path.join(hub_dir, "workshop-edition")
    write_workshop(edition)
    for name in participants:
        _give_copy(edition, name, "workshop")
    state = os.path.join(hub_dir, STATE)
    _write_secret_once(os.path.join(state, "access_code"), secrets.token_urlsafe(9))
    # JupyterHub asks an admin's password to be at least 32 characters.
    _write_secret_once(os.path.join(state, "admin_password"), secrets.token_urlsafe(24))
    course = _make_course_directory(host, task_timeout)
    return {"profile": "workshop", "users": [host] + participants, "instructor_group": INSTRUCTOR_GROUP,
            "groups": {INSTRUCTOR_GROUP: [host], STUDENT_GROUP: participants}, "mem_limit": "3G", "cpu_limit": 1.0,
            "course_dir": course}


def read_roster(path):
    """The usernames of a roster CSV (a 'username' column; other columns are ignored)."""
    import csv

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
        if not accounts.valid_username(name):
            raise HubError(f"the roster names {name!r}: {accounts.USERNAME_RULE}")
    if len(set(names)) != len(names):
        raise HubError(f"the roster {path} names a student twice")
    return names


# Cache folders are handed to the users' servers only where every account can read them: a
# cache in root's home (what gptcourse.tokenizer sets TIKTOKEN_CACHE_DIR to in a process that
# used the tokenizer as root) would leave each user's get_encoding() unable to read its files.
CACHE_VARIABLES = ("GPTCOURSE_CACHE_DIR", "TIKTOKEN_CACHE_DIR")


def _server_environment():
    """What every user's server inherits from the instructor's environment: the data mirror, and
    the cache folders (tiktoken's files, in an offline room) when every account can read them;
    without one, each user's server keeps its own cache in their home."""
    keep = ["GPTCOURSE_DATA_MIRROR", *CACHE_VARIABLES, "GPTCOURSE_DEVICE"]
    environment = {name: os.path.abspath(os.environ[name]) if name.endswith(("MIRROR", "DIR")) else os.environ[name]
                   for name in keep if os.environ.get(name)}
    for name in CACHE_VARIABLES:
        if name in environment and not readable_by_everyone(environment[name]):
            del environment[name]
    environment["PATH"] = os.path.dirname(sys.executable) + os.pathsep + "/usr/local/bin:/usr/bin:/bin"
    return environment


def readable_by_everyone(path):
    """Whether any account may read the folder `path`: every folder on the way open to others
    (o+x), and the folder itself listable by them (o+rx). A path that does not exist: no."""
    try:
        path = os.path.realpath(path)
        return bool(os.stat(path).st_mode & stat.S_IROTH) and _first_closed_folder(path) is None
    except OSError:
        return False


def _first_closed_folder(folder):
    """The first folder from `folder` up to / that other users cannot pass through (no o+x), or
    None when all of them let them through."""
    while True:
        if not os.stat(folder).st_mode & stat.S_IXOTH:
            return folder
        if folder == os.path.dirname(folder):
            return None
        folder = os.path.dirname(folder)


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


# -- the hub's folder: private state, the exchange, what each role's server reads ------------------

def _make_private_state(hub_dir):
    """DIR (everyone may read the servers' configuration in it) and DIR/state, root's alone, with
    the cookie secret and the proxy's token made before the first start. The secrets of a hub
    written before state/ existed move in there."""
    state = os.path.join(hub_dir, STATE)
    for folder, mode in ((hub_dir, 0o755), (state, 0o700)):
        os.makedirs(folder, mode=mode, exist_ok=True)
        if os.path.islink(folder) or os.stat(folder).st_uid != 0:
            raise HubError(f"{folder} must be a folder of root's (it holds the hub's configuration and secrets)")
        os.chmod(folder, mode)
    for name in PRIVATE_FILES:
        if os.path.lexists(os.path.join(hub_dir, name)) and not os.path.lexists(os.path.join(state, name)):
            os.replace(os.path.join(hub_dir, name), os.path.join(state, name))
    _write_secret_once(os.path.join(state, "jupyterhub_cookie_secret"), secrets.token_hex(32))
    _write_secret_once(os.path.join(state, "proxy_token"), secrets.token_hex(32))


def _write_secret_once(path, secret):
    """A secret, 0600 from the moment the file exists; kept if an earlier init made it."""
    if not os.path.exists(path):
        write_atomically(path, secret + "\n", mode=0o600)
    os.chmod(path, 0o600)


def _make_exchange(path, instructor):
    """nbgrader's exchange: its root open to all, with the sticky bit, as nbgrader's release wants
    it; the course's folders in it made now, owned by the instructor, with the modes nbgrader's
    first release gives them. A student who made the course's folder first would block every
    release and could offer classmates a notebook of their own: init refuses to go on."""
    os.makedirs(path, exist_ok=True)
    if os.path.islink(path) or os.stat(path).st_uid != 0:
        raise HubError(f"the exchange {path} must be a folder of root's")
    os.chmod(path, 0o1777)
    account = pwd.getpwnam(instructor)
    course = os.path.join(path, COURSE_ID)
    if os.path.lexists(course):
        found = os.lstat(course)
        if not stat.S_ISDIR(found.st_mode) or found.st_uid != account.pw_uid:
            owner = _owner_name(found.st_uid)
            raise HubError(f"{course} was made by {owner}, not by the instructor {instructor}: whoever made it "
                           f"decides what students fetch. Look at it, remove it (rm -r), then run init again")
        return
    # Made by root inside root's exchange (nobody else can touch an entry of root's there: the
    # sticky bit), and given to the instructor last, when everything is in place.
    made = []
    for name, mode in EXCHANGE_FOLDERS.items():
        folder = os.path.join(course, name) if name else course
        os.mkdir(folder)
        os.chmod(folder, mode)
        made.append(folder)
    for folder in reversed(made):
        os.chown(folder, account.pw_uid, account.pw_gid, follow_symlinks=False)


def _owner_name(uid):
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}"


def _write_role_config(hub, role):
    """jupyter/<role>/: nbgrader_config.py, jupyter_server_config.py and JupyterLab's settings."""
    folder = hub["config_path"][role]
    os.makedirs(os.path.join(folder, "labconfig"), exist_ok=True)
    nbgrader = [
        "# nbgrader's settings for every server of this role (written by python -m grader hub init).",
        "c = get_config()  # noqa: F821",
        f"c.CourseDirectory.course_id = {COURSE_ID!r}",
        f"c.Exchange.root = {hub['exchange']!r}",
        *NO_SECOND_CAP,
        "# Validate stops a cell that runs as long as the grader lets a task run, and says so in words.",
        f"c.Execute.timeout = {hub['task_timeout']}",
        "c.Execute.error_on_timeout = " + repr({
            "ename": "Stopped", "evalue": "",
            "traceback": [f"The cell was stopped: it ran past the {hub['task_timeout']} s a task may run."]}),
    ]
    if role == "instructor" and hub.get("course_dir"):
        nbgrader += [f"c.CourseDirectory.root = {hub['course_dir']!r}",
                     "# collect keeps only submissions made by the student they name (grader/hub/collect.py).",
                     "c.ExchangeFactory.collect = 'grader.hub.collect.OwnerCheckedCollect'"]
    _write(os.path.join(folder, "nbgrader_config.py"), "\n".join(nbgrader) + "\n")
    # No Content-Security-Policy here: JupyterHub's servers send frame-ancestors 'none', so that no
    # page on the hub's address can show another user's server in a frame.
    extensions = dict(SERVER_EXTENSIONS)
    if role == "student":
        extensions.update({name: False for name in INSTRUCTOR_ONLY_SERVER_EXTENSIONS})
    server = ["c = get_config()  # noqa: F821", f"c.ServerApp.jpserver_extensions.update({extensions!r})"]
    _write(os.path.join(folder, "jupyter_server_config.py"), "\n".join(server) + "\n")
    disabled = INSTRUCTOR_ONLY_LAB_PLUGINS if role == "student" else FRAMED_LAB_PLUGINS
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


def systemd_unit(hub_dir):
    """A systemd service for the hub, after The Littlest JupyterHub's: started at boot, started
    again whenever it stops, with the machine's kernel settings and modules out of its reach."""
    keep = {name: value for name, value in _server_environment().items() if name != "PATH"}
    environment = "".join(f"Environment={name}={value}\n" for name, value in sorted(keep.items()))
    return f"""# The course hub in {hub_dir} as a systemd service (written by python -m grader hub init).
# Install:  cp {os.path.join(hub_dir, SYSTEMD_UNIT)} /etc/systemd/system/
#           systemctl daemon-reload && systemctl enable --now {SYSTEMD_UNIT}
# Log:      journalctl -u {SYSTEMD_UNIT} -f
[Unit]
Description=The GPT course's JupyterHub ({hub_dir})
After=network-online.target
Wants=network-online.target

[Service]
User=root
WorkingDirectory={os.path.join(hub_dir, STATE)}
{environment}ExecStart={sys.executable} -m grader hub start {hub_dir}
Restart=always
RestartSec=5
# hub start stops the proxy, every server and every kernel on SIGTERM; systemd waits for it.
TimeoutStopSec=120
# The users' servers run inside this service: a private /tmp shared by them, no kernel tunables
# or modules. No PrivateDevices (a GPU is a device) and no NoNewPrivileges (a student's terminal
# may run passwd, which is setuid).
PrivateTmp=yes
ProtectKernelTunables=yes
ProtectKernelModules=yes
ProtectControlGroups=yes
ProtectSystem=full

[Install]
WantedBy=multi-user.target
"""


def course_directory(instructor):
    return os.path.join(pwd.getpwnam(instructor).pw_dir, COURSE_ID)


def _make_course_directory(instructor, task_timeout):
    """The instructor's nbgrader course directory, every chapter generated: made by the
    instructor's own process (it lies in their home), kept when an earlier init made it."""
    path = course_directory(instructor)
    env = dict(_server_environment(), PATH=os.path.dirname(sys.executable) + os.pathsep + "/usr/local/bin:/usr/bin:/bin")
    accounts.run_as(instructor, [sys.executable, "-m", "grader.hub.course_directory", path,
                                 "--task-timeout", str(task_timeout)],
                    f"making the instructor's course directory {path} (as {instructor})", env=env, timeout=900)
    return path


def _give_copy(folder, user, name):
    """A copy of `folder` in the user's home, as home/<name>, made by the user: unless something
    is there already, whatever it is (a link included: the user's own business)."""
    target = os.path.join(pwd.getpwnam(user).pw_dir, name)
    if not os.path.lexists(target):
        accounts.run_as(user, ["cp", "-R", "--no-dereference", folder, target],
                        f"copying the workshop edition into {user}'s home")


def _close_checkout():
    """The checkout's masters, grader (hidden tests, reference) and history: for the instructors'
    group only. Students keep what their servers run: the environment and the student package."""
    import grp

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
    folder = _first_closed_folder(os.path.dirname(path))
    if folder:
        raise HubError(f"{folder} is closed to other users (mode {oct(os.stat(folder).st_mode & 0o777)}), and "
                       f"{path} lies below it, which every user's server needs. Put the course and the "
                       f"hub where every user can read them (e.g. under /opt and /srv), or open {folder} "
                       f"with chmod o+x")


# -- files ------------------------------------------------------------------------------------------

def _write(path, text):
    """A file every user's server may read (never a secret: those go to state/)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    write_atomically(path, text, mode=0o644)


def _write_json(path, data):
    _write(path, json.dumps(data, indent=1) + "\n")


def hub_url(hub):
    scheme = "https" if hub.get("ssl_cert") else "http"
    return f"{scheme}://{hub['ip']}:{hub['port']}"


def _summary(hub_dir, hub):
    state = os.path.join(hub_dir, STATE)
    lines = [f"hub written in {hub_dir} ({hub['profile']}: {len(hub['users'])} accounts)",
             f"start it with: python -m grader hub start {hub_dir}",
             f"  (or as a systemd service: {os.path.join(hub_dir, SYSTEMD_UNIT)} says how)",
             f"then open {hub_url(hub)}/"]
    instructor = hub["groups"][INSTRUCTOR_GROUP][0]
    if hub["profile"] == "workshop":
        lines.append(f"the room's access code is in {os.path.join(state, 'access_code')} (root only); "
                     f"participants log in as {hub['users'][1]} to {hub['users'][-1]}")
        lines.append(f"the host logs in as {instructor}, the hub's admin, with the password in "
                     f"{os.path.join(state, 'admin_password')} (root only)")
    else:
        lines.append(f"first passwords of the new accounts: {os.path.join(state, 'passwords.csv')} (root only)")
    lines.append(f"the instructor's nbgrader course directory: {hub['course_dir']}")
    lines.append(f"the formgrader, in a browser tab of its own: {hub_url(hub)}{FORMGRADER_URL}")
    return "\n".join(lines)


# -- start ------------------------------------------------------------------------------------------

# `hub start` starts jupyterhub again when it dies (a crash, the kernel's out-of-memory killer, a
# kill -9), at most this many times in this many seconds; beyond that something is wrong with the
# hub itself, and it stops everything and says so (a systemd unit starts it again later).
RESTARTS = 5
RESTART_WINDOW = 600


class RestartBudget:
    """At most `most` restarts in any `window` seconds: a restart is allowed (and counted) while
    fewer than `most` happened in the last `window` seconds; older ones are forgotten."""

    def __init__(self, most=RESTARTS, window=RESTART_WINDOW, clock=time.monotonic):
        self.most, self.window, self.clock = most, window, clock
        self.times = []

    def spend(self):
        """Whether one more restart is allowed now; when it is, it is counted."""
        now = self.clock()
        self.times = [t for t in self.times if now - t < self.window]
        if len(self.times) >= self.most:
            return False
        self.times.append(now)
        return True

    def used(self):
        """Restarts counted in the window, the one just spent included."""
        return len(self.times)


def start(hub_dir, ready=None):
    """Run the hub in `hub_dir` until Ctrl-C, SIGTERM or SIGHUP (a closed terminal); then stop it,
    its proxy and every server and kernel it started. A jupyterhub that dies meanwhile is started
    again, and finds its users' servers still running (nobody logs in again). `ready`, if given,
    is called with the hub's process once it first answers."""
    hub_dir = os.path.abspath(hub_dir)
    config = os.path.join(hub_dir, "jupyterhub_config.py")
    if not os.path.exists(config):
        raise HubError(f"{hub_dir} holds no hub: write one with python -m grader hub init {hub_dir}")
    if os.geteuid() != 0:
        raise HubError("start it as root (sudo): the hub logs users in with PAM and starts each one's server as them")
    state = os.path.join(hub_dir, STATE)
    if not os.path.isdir(state):
        raise HubError(f"{hub_dir} was written by an older hub init: run python -m grader hub init on it again "
                       f"(it moves the hub's secrets into {state}, which root alone may enter)")
    hub = _read_json(os.path.join(hub_dir, "hub.json"))
    # The processes a dead jupyterhub leaves (the users' servers and kernels, its proxy) become
    # this process's children: stop() finds them all, and nothing outlives `hub start`.
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    # --upgrade-db: a JupyterHub upgraded since the last start brings its database up to date
    # (it keeps a backup beside it) instead of refusing to start. The ports are chosen once: the
    # users' servers reach the hub's API at the same address after a restart.
    command = [os.path.join(os.path.dirname(sys.executable), "jupyterhub"), "-f", config, "--upgrade-db",
               f"--JupyterHub.hub_bind_url=http://127.0.0.1:{free_port()}",
               f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{free_port()}"]
    stop_requested = []
    previous = {sig: signal.signal(sig, lambda *_: stop_requested.append(True))
                for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    process, restarts = None, RestartBudget()
    try:
        # In state/: whatever jupyterhub writes beside its database stays root's alone.
        process = subprocess.Popen(command, cwd=state, start_new_session=True)
        _wait_until_it_answers(process, hub, stop_requested)
        print(f"the hub answers at {hub_url(hub)}/ (Ctrl-C stops it)", flush=True)
        if ready:
            ready(process)
        while not stop_requested:
            time.sleep(0.2)
            _collect_zombies(keep=process.pid)
            if process.poll() is None:
                continue
            if not restarts.spend():
                print(f"hub start: jupyterhub stopped again ({_how_it_ended(process.returncode)}), the "
                      f"{RESTARTS + 1}th time in {RESTART_WINDOW // 60} minutes: stopping everything. Its "
                      f"messages above say why", file=sys.stderr, flush=True)
                break
            print(f"hub start: jupyterhub stopped ({_how_it_ended(process.returncode)}): starting it again "
                  f"({restarts.used()} of at most {RESTARTS} restarts in {RESTART_WINDOW // 60} minutes); the "
                  f"users' servers and kernels keep running", file=sys.stderr, flush=True)
            _end_hub_processes()
            started = time.monotonic()
            process = subprocess.Popen(command, cwd=state, start_new_session=True)
            _wait_until_it_answers(process, hub, stop_requested)
            print(f"hub start: the hub answers again, {time.monotonic() - started:.1f} s after its restart",
                  file=sys.stderr, flush=True)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        stop(process)
    return 0 if stop_requested else 1


def _how_it_ended(returncode):
    if returncode is not None and returncode < 0:
        return f"killed by {signal.Signals(-returncode).name}"
    return f"exit {returncode}"


def _end_hub_processes():
    """What a dead jupyterhub left running as root: its proxy and its services (the idle culler,
    with a token the next hub does not know). The next jupyterhub starts its own. The users'
    servers and kernels run as the users, and are kept."""
    import psutil

    left = [p for p in psutil.Process().children(recursive=True) if _runs_as_root(p)]
    for process in left:
        _signal(process, signal.SIGKILL)
    psutil.wait_procs(left, timeout=10)


def _runs_as_root(process):
    import psutil

    try:
        return process.uids().real == 0
    except psutil.NoSuchProcess:
        return False


def _collect_zombies(keep):
    """Reap the children that ended (orphans handed to this process), but `keep` (jupyterhub,
    whose status its Popen reads)."""
    import psutil

    for child in psutil.Process().children():
        try:
            if child.pid != keep and child.status() == psutil.STATUS_ZOMBIE:
                os.waitpid(child.pid, os.WNOHANG)
        except (psutil.NoSuchProcess, ChildProcessError):
            pass


def stop(process, timeout=60):
    """Stop jupyterhub (it stops its proxy and services), then every process it started that is
    still running (the users' servers, kept through restarts, and their kernels): SIGTERM, so that
    each server shuts its kernels down, then SIGKILL for what is left after ten seconds."""
    import psutil

    if process is not None and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    left = psutil.Process().children(recursive=True)
    for child in left:
        _signal(child, signal.SIGTERM)
    _, still_running = psutil.wait_procs(left, timeout=10)
    for child in still_running:
        _signal(child, signal.SIGKILL)
    psutil.wait_procs(still_running, timeout=10)


def _signal(process, sig):
    import psutil

    try:
        process.send_signal(sig)  # psutil checks the start time too: never a reused pid
    except psutil.NoSuchProcess:
        pass


def _wait_until_it_answers(process, hub, stop_requested, timeout=120):
    import urllib.request

    deadline = time.monotonic() + timeout
    local = dict(hub, ip="127.0.0.1" if hub["ip"] in ("0.0.0.0", "::") else hub["ip"])
    url = hub_url(local) + "/hub/health"
    # The hub's own health page, asked on this machine: the certificate may name another host.
    unverified = ssl._create_unverified_context() if hub.get("ssl_cert") else None
    while time.monotonic() < deadline and not stop_requested:
        if process.poll() is not None:
            raise HubError(f"jupyterhub stopped at once (exit {process.returncode}): see its messages above")
        try:
            with urllib.request.urlopen(url, timeout=5, context=unverified):
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
