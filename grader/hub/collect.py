"""nbgrader's collect for the course hub (grader/hub/commands.py): only a student's own submissions.

A submission is a folder in the exchange's inbound named student+assignment+time+random, and
every account may write there (students cannot list it, only add to it). nbgrader's own collect
warns when the folder's owner is not the student it names, then collects it as that student's
anyway: one student could hand in work in another's name, or replace it. `OwnerCheckedCollect`
leaves such a folder out, says so in the log, and takes the student's own latest submission.
The hub's instructor configuration selects it (c.ExchangeFactory.collect).
"""
import os
import pwd

from nbgrader.exchange.default.collect import ExchangeCollect


class OwnerCheckedCollect(ExchangeCollect):

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
