"""nbgrader's collect for the course hub (grader/hub/commands.py): only a student's own submissions.

A submission is a folder in the exchange's inbound named student+assignment+time+random, and
every account may write there (students cannot list it, only add to it). nbgrader's own collect
warns when the folder's owner is not the student it names, then collects it as that student's
anyway: one student could hand in work in another's name, or replace it. `OwnerCheckedCollect`
leaves such a folder out, says so in the log, and takes the student's own latest submission.
The hub's instructor configuration selects it (c.ExchangeFactory.collect).

The time of a submission is the student's word, too: nbgrader takes it from the folder's name and
copies the folder's timestamp.txt, both written by the student's own submit, which anyone can
backdate. A late policy (docs/grading.md) must not rest on it. `OwnerCheckedCollect` takes the
time the file system recorded instead: the latest status-change time (ctime) of the folder and
everything in it. The kernel sets a ctime on every change of a file, its name or its links, and
no user can set it back. The student's own time stands only when it lies within
CLOCK_AGREEMENT before that one (the hub's clock wrote both); collect writes the time it took
into the collected copy's timestamp.txt, where both graders read it.
"""
import datetime
import os
import pwd

from nbgrader.exchange.default.collect import ExchangeCollect

# How far the time in a submission's name may lie before the file system's last change of it: the
# second or two nbgrader's submit takes to copy the files. A claim outside it, backdated or not,
# gives way to the file system's time; so a student can backdate by this much at most.
CLOCK_AGREEMENT = datetime.timedelta(seconds=10)


class OwnerCheckedCollect(ExchangeCollect):

    def _path_to_record(self, path):
        record = super()._path_to_record(path)
        claimed = record["timestamp"]
        record["timestamp"] = trusted_time(os.path.join(self.inbound_path, record["filename"]), claimed)
        if record["timestamp"] != claimed:
            self.log.warning("%s names the time %s, but its files were last changed at %s UTC: that time counts",
                             record["filename"], claimed, record["timestamp"])
        return record

    def do_copy(self, src, dest):
        super().do_copy(src, dest)
        when = trusted_time(src, self._path_to_record_quietly(src))
        # A new file in place of the copied one, never through a link, whatever the copy holds.
        path = os.path.join(dest, "timestamp.txt")
        if os.path.lexists(path):
            os.unlink(path)
        handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(handle, "w", encoding="utf-8") as f:
            f.write(f"{when:%Y-%m-%d %H:%M:%S.%f} UTC")

    def _path_to_record_quietly(self, path):
        """The time in a submission's folder name (nbgrader's reading of it), without the check."""
        return super()._path_to_record(path)["timestamp"]

    def _sort_by_timestamp(self, records):
        # A student's own submissions first, newest first; what others made in their name last,
        # and said in the log: an instructor should know who tried.
        for record in records:
            if not self._genuine(record):
                self.log.error("%s claims to be a submission of %s but was made by %s: not collected",
                               record["filename"], record["username"], self._owner(record))
        return sorted(records, key=lambda record: (self._genuine(record), record["timestamp"]), reverse=True)

    def copy_files(self):
        # A student with no submission of their own has only others' claims: collect nothing.
        self.src_records = [record for record in self.src_records if self._genuine(record)]
        return super().copy_files()

    def _owner(self, record):
        try:
            return pwd.getpwuid(os.stat(os.path.join(self.inbound_path, record["filename"])).st_uid).pw_name
        except KeyError:
            return "an unknown account"

    def _genuine(self, record):
        return self._owner(record) == record["username"]


def last_change(path):
    """The latest ctime (naive UTC, as nbgrader keeps times) of a folder and everything in it;
    links are not followed."""
    latest = os.lstat(path).st_ctime
    for here, folders, files in os.walk(path):
        for name in folders + files:
            latest = max(latest, os.lstat(os.path.join(here, name)).st_ctime)
    return datetime.datetime.fromtimestamp(latest, datetime.timezone.utc).replace(tzinfo=None)


def trusted_time(path, claimed):
    """The submission time of the folder `path`: the time its name claims (naive UTC) when the file
    system's last change of it agrees, else that last change."""
    changed = last_change(path)
    if claimed is not None and changed - CLOCK_AGREEMENT <= claimed <= changed:
        return claimed
    return changed
