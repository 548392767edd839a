"""The course's late policy in nbgrader's autograde: the same final points as the course grader.

The course directory's nbgrader_config.py calls `use_course_policy(c, policy.toml)` when the
course directory holds a policy.toml (docs/grading.md, "Due dates and late penalties"). Then:

- `PolicyLatePenalties` (nbgrader's AssignLatePenalties step, autograde's last) first writes the
  chapter's due date from the policy into the gradebook, so that the formgrader shows it and
  nbgrader knows a late submission when it sees one; nbgrader then asks the plugin;
- `CoursePolicyPlugin` (nbgrader's LateSubmissionPlugin) answers with the penalty that
  grader/grading/policy.py decides: extensions from the policy's CSV, tokens spent by due date
  over the student's timestamp.txt files in submitted/, the penalty rounded the same way.

Extensions belong in the policy's CSV. An extension granted in nbgrader's own gradebook is not
seen by the course grader; if it makes a submission on time for nbgrader, nbgrader does not ask
the plugin at all.
"""
import glob
import os

from nbgrader.coursedir import CourseDirectory
from nbgrader.plugins import LateSubmissionPlugin
from nbgrader.preprocessors import AssignLatePenalties
from traitlets import Unicode

from grader.grading import policy as late_policy


def use_course_policy(config, policy_file):
    """In an nbgrader configuration: apply `policy_file` (a policy.toml) when autograde grades;
    nothing when there is no such file."""
    if not os.path.isfile(policy_file):
        return
    from nbgrader.converters import Autograde

    steps = config.Autograde.get("autograde_preprocessors") or Autograde.class_traits()["autograde_preprocessors"].default()
    config.Autograde.autograde_preprocessors = [PolicyLatePenalties if step is AssignLatePenalties else step
                                                for step in steps]
    config.PolicyLatePenalties.plugin_class = CoursePolicyPlugin
    config.PolicyLatePenalties.policy_file = os.path.abspath(policy_file)
    config.CoursePolicyPlugin.policy_file = os.path.abspath(policy_file)


POLICY_FILE_HELP = "the course's policy.toml (grader/grading/policy.py)"


class PolicyLatePenalties(AssignLatePenalties):
    policy_file = Unicode("", help=POLICY_FILE_HELP).tag(config=True)

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook

        chapter = late_policy.read_policy(self.policy_file).chapters.get(resources["nbgrader"]["assignment"])
        if chapter is not None:
            with Gradebook(resources["nbgrader"]["db_url"]) as gradebook:
                assignment = gradebook.find_assignment(resources["nbgrader"]["assignment"])
                assignment.duedate = late_policy.instant(chapter.due).replace(tzinfo=None)  # nbgrader keeps UTC
                gradebook.db.commit()
        return super().preprocess(nb, resources)


class CoursePolicyPlugin(LateSubmissionPlugin):
    policy_file = Unicode("", help=POLICY_FILE_HELP).tag(config=True)

    def late_submission_penalty(self, student_id, score, total_seconds_late):
        policy = late_policy.read_policy(self.policy_file)
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
