"""The course hub against its own users: each attack made as a real unix account that `hub init`
created, then the host runs `init` again (to add students, as docs/hub.md invites), as root.

- a link planted where init puts something in a home (the workshop edition, the instructor's
  course directory) must not make root change anything outside that home;
- the hub's secrets (cookie secret, proxy token, passwords, access codes, the list of its
  accounts) are in a folder no user can enter, the cookie secret there before the first start;
- nbgrader's exchange has the course's folders from init on, the instructor's: no student can
  plant a chapter, or block its release, before the first release;
- the accounts init may use: never a system account (a roster line `daemon`), not an existing
  account it did not make unless --adopt; what it refuses, it refuses before changing anything;
- every first password is on record before it is set, so an init stopped half-way leaves no
  account with a password nobody knows, and the next init sets it;

Root only (real accounts): skipped otherwise, saying so. The TLS login, idle culling, frames
and a user's own Jupyter configuration are tested on a running hub (test_hub_init.py).
"""
import os
import pwd
import stat
import subprocess

import pamela
import pytest

from grader.hub import accounts, commands as course_hub
from hub_machine import as_user, passwords, python_as
from lab_in_browser import free_port

pytestmark = pytest.mark.slow  # unix accounts, nbgrader's course directory


def mode(path):
    return stat.S_IMODE(os.lstat(path).st_mode)


def shell_as(hub_dir, name, script):
    result = as_user(hub_dir, name, "bash", "-c", script)
    assert result.returncode == 0, result.stderr
    return result


@pytest.fixture
def roots_folder(machine):
    """A folder of root's with a file of root's in it: what an attacker would like to own."""
    folder = machine.folder() / "roots"
    folder.mkdir(mode=0o755)
    (folder / "secret.txt").write_text("root's\n")
    os.chmod(folder / "secret.txt", 0o644)
    return folder


def untouched(folder):
    """Still root's, with the modes and text it had."""
    return all(os.lstat(p).st_uid == 0 for p in (folder, folder / "secret.txt")) and mode(folder) == 0o755 \
        and mode(folder / "secret.txt") == 0o644 and (folder / "secret.txt").read_text() == "root's\n"


@pytest.fixture(scope="module")
def term(machine):
    """A term hub: the instructor and two students; (hub folder, roster)."""
    folder = machine.folder()
    roster = folder / "roster.csv"
    roster.write_text("username\n" + "\n".join(machine.students) + "\n")
    course_hub.init(folder / "hub", roster=str(roster), instructor=machine.instructor, port=free_port())
    return folder / "hub", roster


def init_again(machine, hub_dir, roster):
    return course_hub.init(hub_dir, roster=str(roster), instructor=machine.instructor, port=free_port())


# -- root never acts inside a user's home -------------------------------------------------------------

def test_a_participants_link_in_place_of_the_workshop_edition_gives_them_nothing(machine, roots_folder):
    hub_dir = machine.folder() / "hub"
    prefix = machine.prefix + "w"
    course_hub.init(hub_dir, workshop=1, participant_prefix=prefix, instructor=machine.prefix + "h", port=free_port())
    participant = prefix + "01"
    home = pwd.getpwnam(participant).pw_dir
    assert os.path.isdir(os.path.join(home, "workshop")) and os.stat(os.path.join(home, "workshop")).st_uid != 0
    shell_as(hub_dir, participant, f"rm -rf ~/workshop && ln -s {roots_folder} ~/workshop")

    course_hub.init(hub_dir, workshop=1, participant_prefix=prefix, instructor=machine.prefix + "h", port=free_port())
    assert untouched(roots_folder), "init changed a folder of root's that a participant's link pointed to"
    assert os.readlink(os.path.join(home, "workshop")) == str(roots_folder)  # the participant's own business


def test_links_in_the_instructors_course_directory_give_them_nothing(machine, term, roots_folder):
    hub_dir, roster = term
    course = course_hub.course_directory(machine.instructor)
    # The instructor empties their course directory, with a link where nbgrader's configuration goes.
    shell_as(hub_dir, machine.instructor,
             f"rm -rf {course} && mkdir {course} && ln -s {roots_folder / 'secret.txt'} {course}/nbgrader_config.py")
    with pytest.raises(AccountError, match="making the instructor's course directory"):
        init_again(machine, hub_dir, roster)
    assert untouched(roots_folder), "init wrote through a link the instructor put in their course directory"
    # The instructor puts it right; the next init makes the course directory again, as theirs.
    shell_as(hub_dir, machine.instructor, f"rm -rf {course}")
    init_again(machine, hub_dir, roster)
    owner = pwd.getpwnam(machine.instructor).pw_uid
    assert os.stat(os.path.join(course, "gradebook.db")).st_uid == owner
    assert os.stat(os.path.join(course, "source", "02_attention", "02_attention.ipynb")).st_uid == owner


AccountError = accounts.AccountError


# -- the hub's secrets ---------------------------------------------------------------------------------

def test_no_user_can_read_the_hubs_secrets(machine, term):
    hub_dir, _ = term
    state = hub_dir / course_hub.STATE
    assert os.stat(state).st_uid == 0 and mode(state) == 0o700
    present = sorted(os.listdir(state))
    # The cookie secret and the proxy's token exist before the first start, 0600 from the start.
    assert {"jupyterhub_cookie_secret", "proxy_token", "passwords.csv", "accounts"} <= set(present)
    assert all(mode(state / name) == 0o600 for name in present)
    for user in (machine.students[0], machine.instructor):
        for name in present:
            result = python_as(hub_dir, user, f"open({str(state / name)!r}).read()")
            assert "PermissionError" in result.stderr, (user, name, result.stdout)
        result = python_as(hub_dir, user, f"import os; os.listdir({str(state)!r})")
        assert "PermissionError" in result.stderr
    # Nothing secret is left in the hub's folder, which every server reads.
    assert not set(os.listdir(hub_dir)) & set(course_hub.PRIVATE_FILES)


# -- the exchange ----------------------------------------------------------------------------------------

def test_no_student_can_plant_a_chapter_before_the_first_release(machine, term):
    hub_dir, _ = term
    course = hub_dir / "exchange" / course_hub.COURSE_ID
    instructor = pwd.getpwnam(machine.instructor).pw_uid
    for name, wanted in course_hub.EXCHANGE_FOLDERS.items():
        folder = course / name if name else course
        assert os.lstat(folder).st_uid == instructor and mode(folder) == wanted, (folder, oct(mode(folder)))
    planted = course / "outbound" / "02_attention"
    result = python_as(hub_dir, machine.students[0], f"import os; os.makedirs({str(planted)!r})")
    assert "PermissionError" in result.stderr and not planted.exists()
    for name in ("outbound", "feedback"):  # nor replace the instructor's folders
        result = python_as(hub_dir, machine.students[0], f"import os; os.rename({str(course / name)!r}, '/tmp/x')")
        assert "PermissionError" in result.stderr


def test_a_course_folder_a_student_made_first_stops_init(machine, roots_folder):
    """A hub written before init made the exchange's folders: a student got there first."""
    folder = machine.folder()
    roster = folder / "roster.csv"
    roster.write_text(f"username\n{machine.students[0]}\n")
    hub_dir = folder / "hub"
    # adopt: the accounts are the term fixture's, made by another hub of this module
    course_hub.init(hub_dir, roster=str(roster), instructor=machine.instructor, port=free_port(), adopt=True)
    course = hub_dir / "exchange" / course_hub.COURSE_ID
    subprocess.run(["rm", "-rf", str(course)], check=True)
    shell_as(hub_dir, machine.students[0], f"mkdir -p {course}/outbound/02_attention")
    with pytest.raises(course_hub.HubError, match=f"was made by {machine.students[0]}, not by the instructor"):
        course_hub.init(hub_dir, roster=str(roster), instructor=machine.instructor, port=free_port())


# -- which accounts init may use ----------------------------------------------------------------------------

@pytest.mark.parametrize("system_account", ["daemon", "bin"])
def test_a_system_account_in_the_roster_is_refused_before_anything_changes(machine, system_account):
    account = pwd.getpwnam(system_account)
    home_before = os.stat(account.pw_dir)
    folder = machine.folder()
    newcomer = machine.prefix + "n"
    (folder / "roster.csv").write_text(f"username\n{newcomer}\n{system_account}\n")
    with pytest.raises(AccountError, match=f"'{system_account}' is a system account"):  # --adopt or not
        course_hub.init(folder / "hub", roster=str(folder / "roster.csv"), instructor=machine.instructor, adopt=True)
    home_after = os.stat(account.pw_dir)
    assert (home_after.st_mode, home_after.st_uid) == (home_before.st_mode, home_before.st_uid)
    assert course_hub.STUDENT_GROUP not in group_names(system_account)
    with pytest.raises(KeyError):  # nothing was created either
        pwd.getpwnam(newcomer)


def test_an_account_the_hub_did_not_make_needs_adopt(machine):
    existing, instructor = machine.prefix + "x", machine.prefix + "j"
    subprocess.run(["useradd", "--create-home", existing], check=True)
    os.chmod(pwd.getpwnam(existing).pw_dir, 0o755)
    folder = machine.folder()
    (folder / "roster.csv").write_text(f"username\n{existing}\n")
    with pytest.raises(AccountError, match=f"'{existing}' is an account of this machine that this hub did not create: "
                                           f"give --adopt"):
        course_hub.init(folder / "hub", roster=str(folder / "roster.csv"), instructor=instructor)
    assert mode(pwd.getpwnam(existing).pw_dir) == 0o755
    course_hub.init(folder / "hub", roster=str(folder / "roster.csv"), instructor=instructor, adopt=True)
    assert mode(pwd.getpwnam(existing).pw_dir) == 0o700  # made private by its owner's own process
    assert course_hub.STUDENT_GROUP in group_names(existing)
    # Adopted once, it is the hub's: the next init needs no --adopt.
    course_hub.init(folder / "hub", roster=str(folder / "roster.csv"), instructor=instructor)


# -- first passwords --------------------------------------------------------------------------------------

def test_an_init_stopped_half_way_leaves_no_password_unknown(machine, monkeypatch):
    folder = machine.folder()
    instructor, students = machine.prefix + "k", [machine.prefix + "s", machine.prefix + "t"]
    roster = folder / "roster.csv"
    roster.write_text("username\n" + "\n".join(students) + "\n")
    hub_dir = folder / "hub"
    run = accounts.run
    last = students[-1]

    def fails_for_the_last_student(command, what, **options):
        if command == ["chpasswd"] and options.get("input", "").startswith(last + ":"):
            raise AccountError(f"{what} failed (exit 1): the machine went away")
        return run(command, what, **options)

    monkeypatch.setattr(accounts, "run", fails_for_the_last_student)
    with pytest.raises(AccountError, match="the machine went away"):
        course_hub.init(hub_dir, roster=str(roster), instructor=instructor)
    recorded = passwords(hub_dir)
    for name in [instructor] + students:  # whoever has a password, has it on record
        assert not accounts.has_password(name) or pamela_accepts(name, recorded[name]), name
    assert not accounts.has_password(last)
    monkeypatch.setattr(accounts, "run", run)
    course_hub.init(hub_dir, roster=str(roster), instructor=instructor)
    assert passwords(hub_dir) == recorded  # the next init sets what was recorded
    assert all(pamela_accepts(name, recorded[name]) for name in [instructor] + students)


def group_names(name):
    return subprocess.run(["id", "-nG", name], capture_output=True, text=True, check=True).stdout.split()


def pamela_accepts(name, password):
    """A PAM login as the hub makes it (JupyterHub's PAMAuthenticator uses pamela)."""
    try:
        pamela.authenticate(name, password, service="login")
        return True
    except pamela.PAMError:
        return False


