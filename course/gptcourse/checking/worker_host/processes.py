"""The host's process tree: hardening the host, finding its descendants, ending and reaping them.

Linux only in full (prctl, /proc); elsewhere these do what they can.
"""
import ctypes
import os
import signal
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_DUMPABLE = 4


def prctl(option, value):
    """Call prctl(2); False where it is not available (macOS) or refused."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(option, value, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def become_reaper():
    """Make orphaned descendants our children, and our memory and /proc files unreadable to
    processes of the same user (a non-dumpable process cannot be ptraced or have its fds,
    memory or environment read through /proc without CAP_SYS_PTRACE)."""
    reaper = prctl(PR_SET_CHILD_SUBREAPER, 1)
    prctl(PR_SET_DUMPABLE, 0)
    return reaper


def process_table():
    """{pid: (ppid, state)} of every process this /proc shows."""
    table = {}
    try:
        entries = os.listdir("/proc")
    except OSError:
        return table
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as f:
                stat = f.read().decode("ascii", "replace")
        except OSError:
            continue
        # The command name may hold spaces and parentheses: the fields after the last ')' are fixed.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) >= 2:
            table[int(entry)] = (int(fields[1]), fields[0])
    return table


def descendants(root, table=None):
    """Living (not zombie) descendants of `root`, deepest last."""
    table = process_table() if table is None else table
    children = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found, stack = [], list(children.get(root, []))
    while stack:
        pid = stack.pop()
        found.append(pid)
        stack.extend(children.get(pid, []))
    return [pid for pid in found if table[pid][1] != "Z"]


def collect_zombies():
    """Reap exited children (ours, and orphans handed to us as subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def end_descendants(root=None, keep=(), rounds=200):
    """SIGKILL every descendant of `root` (default: this process) except `keep` and theirs.

    Repeats until none is left, since a process may fork while we kill; returns how many
    processes were ended. Stopping first (SIGSTOP) keeps a fork loop from outrunning us.
    """
    root = os.getpid() if root is None else root
    ended = set()
    for _ in range(rounds):
        table = process_table()
        spared = set(keep)
        for pid in keep:
            spared.update(descendants(pid, table))
        victims = [pid for pid in descendants(root, table) if pid not in spared]
        if not victims:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in victims:
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        ended.update(victims)
        collect_zombies()
        time.sleep(0.005)
    collect_zombies()
    return len(ended)


def exit_status(pid):
    """A child's wait status once it has exited, else None (0 when it was already reaped)."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return 0
    return status if done else None


def rss_mb(pid):
    """The resident memory of a process in MB (0.0 when /proc does not say)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return 0.0
