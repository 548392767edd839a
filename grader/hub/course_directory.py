"""The instructor's nbgrader course directory, made by the instructor's own account.

    python -m grader.hub.course_directory PATH --task-timeout SECONDS

`hub init` runs this as the instructor (grader/hub/accounts.py's run_as), never as root: the
folder lies in the instructor's home, where they may have put links or an nbgrader_config.py
of their own, and whatever those do, they do with the instructor's rights only.
"""
import argparse
import os

from grader.nbgrading import course as nbgrader_course

# Every kernel of the hub starts with the grader's memory cap already (its python3 kernel,
# grader/hub/commands.py): nbgrader must not add the same arguments again (a kernel given them
# twice refuses to start).
NO_SECOND_CAP = ["# The hub's python3 kernel has the grader's memory cap (grader/hub/commands.py): nbgrader adds none.",
                 "c.Execute.extra_arguments = []"]


def make(path, task_timeout):
    """Every chapter generated, unless the folder has a gradebook already (a second init); the
    course's nbgrader_config.py, with this hub's time limit per task and kernel."""
    if os.path.exists(os.path.join(path, "gradebook.db")):
        return False
    nbgrader_course.make_course(path)
    with open(os.path.join(path, "nbgrader_config.py"), "a", encoding="utf-8") as f:
        f.write("\n# In the course hub (python -m grader hub init):\n" + "\n".join(NO_SECOND_CAP) + "\n"
                f"c.CourseExecute.task_timeout = {task_timeout}\n")
    return True


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--task-timeout", type=int, required=True)
    args = parser.parse_args(argv)
    make(args.path, args.task_timeout)


if __name__ == "__main__":
    main()
