"""The hub's unix accounts: which ones it may use, creating them, their first passwords, and
running a command as one of them.

Root acts on the machine's account database (useradd, usermod, chpasswd) and on files only it
can reach (the hub's private state). Inside a user's home it acts only through `run_as`: a
process of that user, with that user's rights, so that a link the user planted there leads
nowhere the user could not already go.

Which accounts the hub may use:
- never a system account (a uid outside the machine's login range, /etc/login.defs): a roster
  line `daemon` must not give the hub a reason to change /usr/sbin, daemon's home;
- an account it created itself (listed in the hub's private `accounts` file);
- any other existing account only when the host says so (`hub init --adopt`).
"""
import grp
import os
import pwd
import secrets
import subprocess

from grader.grading.gradefolder import write_atomically


class AccountError(Exception):
    """An account the hub may not use, or a command about accounts that failed: one message."""


def valid_username(name):
    """Lower-case letters, digits, '_' and '-', starting with a letter, at most 32 characters:
    what Debian's useradd accepts without --badname, and what nbgrader can use as a student id."""
    allowed = set("abcdefghijklmnopqrstuvwxyz0123456789_-")
    return 0 < len(name) <= 32 and name[0].isalpha() and name.islower() and set(name) <= allowed


USERNAME_RULE = "an account name is lower-case letters, digits, '_' and '-', starting with a letter, at most 32 characters"


def login_range(login_defs="/etc/login.defs"):
    """(UID_MIN, UID_MAX) of this machine: the uids of people's accounts (Debian: 1000-60000)."""
    found = {"UID_MIN": 1000, "UID_MAX": 60000}
    try:
        with open(login_defs, encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0] in found and parts[1].isdigit():
                    found[parts[0]] = int(parts[1])
    except OSError:
        pass
    return found["UID_MIN"], found["UID_MAX"]


def check_may_use(names, hub_accounts, adopt=False):
    """Raise AccountError, before anything is changed, if one of `names` is an account the hub
    may not use: a system account always; another existing account unless `adopt`."""
    low, high = login_range()
    for name in names:
        try:
            account = pwd.getpwnam(name)
        except KeyError:
            continue  # the hub will create it
        if not low <= account.pw_uid <= high:
            raise AccountError(f"{name!r} is a system account of this machine (uid {account.pw_uid}, outside the "
                               f"login range {low}-{high}): the hub only uses people's accounts. Choose another name")
        if name not in hub_accounts and not adopt:
            raise AccountError(f"{name!r} is an account of this machine that this hub did not create: give --adopt "
                               f"to let the hub use it (it joins nbgrader's group and its home becomes private), "
                               f"or choose another name")


def run(command, what, timeout=120, **options):
    """Run a command; a failure or a hang becomes one AccountError naming `what` and the last line
    the command said."""
    try:
        result = subprocess.run(command, capture_output=True, text=True, timeout=timeout, **options)
    except subprocess.TimeoutExpired:
        raise AccountError(f"{what} did not finish within {timeout} s ({' '.join(command[:2])} ...)") from None
    except OSError as exc:
        raise AccountError(f"{what} could not run {command[0]} ({exc.strerror or exc})") from None
    if result.returncode != 0:
        said = (result.stderr.strip() or result.stdout.strip()).splitlines()
        raise AccountError(f"{what} failed (exit {result.returncode}): {said[-1] if said else 'no message'}")
    return result


def groups_of(name):
    """The gids of the groups `name` belongs to (its primary group and the others)."""
    account = pwd.getpwnam(name)
    return sorted({account.pw_gid} | {g.gr_gid for g in grp.getgrall() if name in g.gr_mem})


def run_as(name, command, what, env=None, cwd=None, timeout=120):
    """Run `command` as the account `name` (its uid, its groups, its home), never as root."""
    account = pwd.getpwnam(name)
    environment = dict(env or {}, HOME=account.pw_dir, USER=name, LOGNAME=name)
    environment.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    return run(command, what, timeout=timeout, user=account.pw_uid, group=account.pw_gid,
               extra_groups=groups_of(name), env=environment, cwd=cwd or account.pw_dir)


def ensure_group(name):
    try:
        grp.getgrnam(name)
    except KeyError:
        run(["groupadd", name], f"creating the group {name}")


def ensure_user(name, group, made, record_made):
    """The account `name`, in `group`. A new one gets a home only its owner can read, and is
    recorded at once with `record_made(name)`; an existing one (checked by check_may_use) joins
    the group, and its home is made private by the user themselves. True if created."""
    created = name not in {entry.pw_name for entry in pwd.getpwall()}
    if created:
        run(["useradd", "--create-home", "--shell", "/bin/bash", "--groups", group, name], f"creating the account {name}")
        record_made(name)
        # useradd made this folder a moment ago, as root: Debian's default leaves it readable by all.
        os.chmod(pwd.getpwnam(name).pw_dir, 0o700)
    else:
        run(["usermod", "--append", "--groups", group, name], f"adding {name} to the group {group}")
        if name not in made:  # adopted: its home is theirs, so they close it themselves
            home = pwd.getpwnam(name).pw_dir
            run_as(name, ["chmod", "go-rwx", home], f"making {name}'s home private")
            record_made(name)
    return created


def has_password(name):
    """Whether the account has a usable password (`passwd --status` says P)."""
    status = run(["passwd", "--status", name], f"reading {name}'s password status").stdout.split()
    return len(status) > 1 and status[1] == "P"


def give_first_passwords(names, path):
    """Every account of `names` without a usable password gets one: the one passwords.csv holds
    for it, else a new one, written there (0600, whole or not at all) before it is set. An init
    stopped half-way therefore leaves no account with a password nobody knows, and the next init
    sets what it recorded."""
    known = read_passwords(path)
    for name in names:
        if has_password(name):
            continue
        if name not in known:
            known[name] = secrets.token_urlsafe(12)
            lines = ["username,password"] + [f"{user},{password}" for user, password in sorted(known.items())]
            write_atomically(path, "\n".join(lines) + "\n", mode=0o600)
        run(["chpasswd"], f"setting {name}'s first password", input=f"{name}:{known[name]}\n")


def read_passwords(path):
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        rows = [line.rstrip("\n").split(",", 1) for line in f.readlines()[1:] if line.strip()]
    return {name: password for name, password in rows}
