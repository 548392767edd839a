"""The course's late policy in nbgrader's autograde: the same final points as the course grader.

The course's nbgrader configuration puts `PolicyLatePenalties` in place of nbgrader's
AssignLatePenalties (grader/nbgrading/execute.py's use_course_execute). When the course directory
holds a policy.toml (docs/grading.md, "Due dates and late penalties"):

- `PolicyLatePenalties` (nbgrader's AssignLatePenalties step, autograde's last) first writes the
  chapter's due date from the policy into the gradebook, so that the formgrader shows it and
  nbgrader knows a late submission when it sees one; nbgrader then asks the plugin;
- `CoursePolicyPlugin` (nbgrader's LateSubmissionPlugin) answers with the penalty that
  grader/grading/policy.py decides: extensions from the policy's CSV, tokens spent by due date
  over the student's timestamp.txt files in submitted/, the penalty rounded the same way.

Extensions belong in the policy's CSV. An extension granted in nbgrader's own gradebook is not
seen by the course grader; if it makes a submission on time for nbgrader, nbgrader does not ask
the plugin at all. Without a policy.toml nothing changes: no penalty, as nbgrader's default.
"""
import glob
import os

from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import BasePlugin, LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties
from traitlets import Type, Unicode

from grader.grading import policy as late_policy


POLICY_FILE_HELP = "the course's policy.toml (grader/grading/policy.py); default: policy.toml in the course directory"


def policy_path(configurable):
    """The policy file a step or plugin applies: its policy_file, else the course directory's
    policy.toml; None when there is no such file (no late policy: nbgrader's default, no penalty)."""
    path = configurable.policy_file or os.path.join(CourseDirectory(config=configurable.config).root, "policy.toml")
    return path if os.path.isfile(path) else None


class CoursePolicyPlugin(LateSubmissionPlugin):
    policy_file = Unicode("", help=POLICY_FILE_HELP).tag(config=True)

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        path = policy_path(self)
        if path is None:
            return None
        policy = late_policy.read_policy(path)
        chapter = self.parent.assignment_id
        if chapter not in policy.chapters:
            return None
        lateness = late_policy.decide(policy, student_id, self._submission_times(student_id)).get(chapter)
        if lateness is None:
            return None
        self.log.info("%s, %s: %s", student_id, chapter, late_policy.summary(lateness, 0))
        return late_policy.penalty_points(score, lateness.share)

    def _submission_times(self, student_id):
        """{chapter: time} of the student's timestamp.txt files in submitted/, as the course grader reads them."""
        coursedir = CourseDirectory(config=self.config)
        times = {}
        pattern = coursedir.format_path(coursedir.submitted_directory, student_id, "*")
        for folder in glob.glob(pattern):
            moment = late_policy.read_timestamp_file(os.path.join(folder, late_policy.TIMESTAMP_FILE))
            if moment is not None:
                times[os.path.basename(folder)] = moment
        return times


class PolicyLatePenalties(AssignLatePenalties):
    policy_file = Unicode("", help=POLICY_FILE_HELP).tag(config=True)
    plugin_class = Type(CoursePolicyPlugin, klass=BasePlugin,
                        help="The plugin that assigns each late notebook's penalty.").tag(config=True)

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        path = policy_path(self)
        if path is None:
            return super().preprocess(nb, resources)
        chapter = late_policy.read_policy(path).chapters.get(resources["nbgrader"]["assignment"])
        if chapter is not None:
            with Gradebook(resources["nbgrader"]["db_url"]) as gradebook:
                assignment = gradebook.find_assignment(resources["nbgrader"]["assignment"])
                assignment.duedate = late_policy.instant(chapter.due).replace(tzinfo=None)  # nbgrader keeps UTC
                gradebook.db.commit()
        return super().preprocess(nb, resources)
