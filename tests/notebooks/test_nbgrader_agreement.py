"""nbgrader and the course grader give the same points for the same submissions.

Both run the same hidden tests: nbgrader inside each student's kernel (the check cells call
grader/nbgrading/bridge.py), the course grader in its own worker processes. One nbgrader
course directory holds a correct student (every chapter; the demo cells only in chapter 05's,
DEMO_CHAPTERS), students with corpus mistakes and correct alternatives (a chapter's share a
student, one per task), students whose mistake in one task could leak into another, and an
untouched release of a sample of chapters. nbgrader
autogrades it with a fixed seed on the CPU, the course grader grades the same submitted/
folder with the same seed, and every task's score must match, as must its maximum.
"""
import json
import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from nbgrader.api import Gradebook

from factory import (CAUSAL_ATTENTION_REUSING_2_4, CORPUS, filled_notebook, grade_id, manifest, records_by_submission,
                     release_notebook, start_grader, without_demos)
from gptcourse.checking.tasks import CHAPTERS, get_task, tasks_of
from grader.nbgrading import course as nbgrader_course

pytestmark = pytest.mark.slow  # 26 notebooks run in nbgrader kernels

SEED = 4242
CH2, CH3 = "02_attention", "03_multihead_attention"

# Corpus files: diverse mistakes across the chapters (an in-place edit of the input, dropout
# in the wrong place, a missing error, a missing head...) and correct alternatives that must
# get full points from both graders; corpus_students() gives a chapter's files to one student.
CORPUS_STUDENTS = [
    "1.1/wrong_decode_first_pattern",
    "1.4/wrong_default_drop_last_false",
    "1.5/cudaonly_arange_no_device",
    "1.3/correct_unfold",
    "2.1/wrong_softmax_dim0",
    "2.3/wrong_bias_always",
    "2.4/wrong_inplace_input",
    "2.5/wrong_dropout_on_context",
    "3.1/wrong_only_first_head",
    "3.2/wrong_no_raise",
    "2.5/correct_sdpa",
    "3.2/correct_einsum",
    "4.4/wrong_dropout_on_sum",
    "4.6/wrong_no_no_grad",
    "5.2/wrong_only_inputs_moved",
    "5.4/wrong_eval_no_eval_mode",
    "5.7/correct_book_inline_schedule",
    "6.4/wrong_temperature_before_filters",
    "6.5/correct_subclass_mha",
    "7.2/correct_csv_module_int_labels",
    "7.5/wrong_pads_past_context",
    "8.3/wrong_setattr_dotted_names",
    "9.1/wrong_strip_test",
    "9.2/wrong_not_on_device",
]

# The all-correct student's notebooks keep their demo cells in these chapters only. Chapter 05's
# (pretraining) show nbgrader triggering the quick mode in a real autograde run
# (gptcourse.notebook.being_graded: one epoch). Every chapter's demos run in the masters test, and
# in quick mode in the workshop test (GPTCOURSE_QUICK_RUN); here the others would only add time.
# Every chapter's graded cells (setup, carry-over, task and check cells) still run here.
DEMO_CHAPTERS = ["05_pretraining"]
UNTOUCHED_CHAPTERS = [CHAPTERS[0], CH3, CHAPTERS[-1]]  # the first, a carry-over cell, the last


def corpus(item):
    return (CORPUS / f"{item}.py").read_text()


def release_cell(chapter, cell_id):
    return next("".join(c["source"]) for c in release_notebook(chapter)["cells"] if grade_id(c) == cell_id)


def students():
    """{student: ({chapter: notebook}, tasks that lose their points)}.

    The points lost follow the course's rule: a task is graded with the reference in place
    of the earlier tasks it uses, so one mistake costs points once.
    """
    found = {
        "all_correct": ({chapter: filled_notebook(chapter) if chapter in DEMO_CHAPTERS
                         else without_demos(filled_notebook(chapter)) for chapter in CHAPTERS}, set()),
        # A sample of chapters: the stubs fail the same way in every chapter.
        "untouched_release": ({chapter: release_notebook(chapter) for chapter in UNTOUCHED_CHAPTERS},
                              {task.id for chapter in UNTOUCHED_CHAPTERS for task in tasks_of(chapter)}),
        # Chapter 03 with the carry-over cell never filled in, or filled with a wrong Task 2.5:
        # tasks 3.1 and 3.2 are graded with the reference CausalAttention.
        "carry_cell_untouched": ({CH3: filled_notebook(CH3, {"2.5": release_cell(CH3, "carry_2_5")})}, set()),
        "carry_cell_wrong_2_5": (
            {CH3: filled_notebook(CH3, {"2.5": corpus("2.5/wrong_mask_includes_diagonal")})}, set()),
        # A wrong Task 2.4 that the (otherwise right) Task 2.5 calls costs the points of 2.4 only.
        "reuses_own_wrong_2_4": (
            {CH2: filled_notebook(CH2, {"2.4": corpus("2.4/wrong_no_scaling"),
                                        "2.5": CAUSAL_ATTENTION_REUSING_2_4})}, {"2.4"}),
    }
    found.update(hanging_students())
    # Late work (LATE_STUDENTS): full points before the policy; the test of final points checks the penalty.
    for student in LATE_STUDENTS:
        found[student] = ({CH2: without_demos(filled_notebook(CH2))}, set())
    for student, items in corpus_students().items():
        chapter = get_task(next(iter(items))).chapter
        overrides = {task_id: corpus(item) for task_id, item in items.items()}
        lost = {task_id for task_id, item in items.items() if "/correct_" not in item}
        found[student] = ({chapter: without_demos(filled_notebook(chapter, overrides))}, lost)
    return found


# A student whose cells hang or crash (chapter 02), and one whose loop never ends after the
# function it defines (chapter 05): each such cell costs its own task only, under both graders,
# with the same message. Both graders stop a task after TIMEOUT seconds here (the tasks of the
# other students take well under a second).
TIMEOUT = 10
CH5 = "05_pretraining"
HANGING_CELLS = {
    "hangs_and_crashes": (CH2, {
        # A loop whose counter never moves, inside the function: it hangs when the tests call it.
        "2.1": "def simple_self_attention(inputs):\n    i = 0\n    while i < 3:\n        scores = inputs @ inputs.T\n"
               "    return scores, scores\n",
        # A right class, then a loop at the top of the cell that never ends.
        "2.2": "{2.2}\nwhile True:\n    pass\n",
        # The kernel (the worker) ends.
        "2.3": "import os\nos._exit(3)\n",
        # A loop that swallows the interrupt: nbgrader's kernel never answers it.
        "2.4": "{2.4}\nimport time\nwhile True:\n    try:\n        time.sleep(0.2)\n    except:\n        pass\n",
    }),
    "loops_after_definition": (CH5, {
        # The hidden tests' call ends the kernel: the check cell itself is lost.
        "5.1": "{5.1}\nimport os\ndef text_to_token_ids(text, tokenizer):\n    os._exit(0)\n",
        "5.3": "{5.3}\nsteps = 0\nwhile steps < 3:\n    loss = 0.0\n",
    }),
}
# The kernel that swallowed the interrupt cannot say which line it was on: nbgrader's message then
# leaves the line out.
WITHOUT_LINE = {("hangs_and_crashes", "2.4")}


# The late policy (grader/grading/policy.py) in both graders: chapter 02 due on 5 October; one
# token each. two_days_late spends the token on one day and loses 10 % for the other; extended
# was granted two more days and is on time; token_covers_it spends the token and loses nothing.
# Everyone else has no timestamp.txt, so no submission time and no penalty in either grader.
POLICY = """timezone = "Europe/Berlin"
[penalty]
per_day = 0.1
[tokens]
per_student = 1
[extensions]
file = "extensions.csv"
[chapters.02_attention]
due = 2026-10-05T23:59:00
last = 2026-10-12T23:59:00
"""
EXTENSIONS = "student,chapter,due\nextended,02_attention,2026-10-07 23:59\n"
LATE_STUDENTS = {  # student: (nbgrader's timestamp.txt, the share of chapter 02 lost)
    "two_days_late": ("2026-10-07 10:00:00.000000 UTC", 0.1),
    "extended": ("2026-10-07 20:00:00.000000 UTC", 0.0),
    "token_covers_it": ("2026-10-06 12:00:00.000000 UTC", 0.0),
}


def hanging_students():
    """{student: ({chapter: notebook}, tasks that lose their points)} of HANGING_CELLS."""
    reference = {tid: t["source"] for m in manifest().values() for tid, t in m["tasks"].items()}
    found = {}
    for student, (chapter, cells) in HANGING_CELLS.items():
        overrides = {task_id: source.replace(f"{{{task_id}}}", reference[task_id]) for task_id, source in cells.items()}
        found[student] = ({chapter: without_demos(filled_notebook(chapter, overrides))}, set(cells))
    return found


def corpus_students():
    """{student: {task: corpus item}}: the items of a chapter share a student, one item per task
    (the second item of a task starts another student). Each task is graded with the reference
    in place of the earlier tasks, by both graders, so one student's mistakes do not meet; and
    every notebook nbgrader runs costs a kernel, which this keeps to about one per chapter."""
    students = {}
    for item in CORPUS_STUDENTS:
        task_id = item.split("/")[0]
        chapter = get_task(task_id).chapter
        number = 1
        while task_id in students.get(f"corpus_{chapter[:2]}_{number}", {}):
            number += 1
        students.setdefault(f"corpus_{chapter[:2]}_{number}", {})[task_id] = item
    return students


class Graded:
    """What the tests compare; a short repr keeps pytest's failure reports readable."""

    def __init__(self, root, nbgrader_scores, course, submissions):
        self.root, self.nbgrader_scores, self.course, self.submissions = root, nbgrader_scores, course, submissions

    def __repr__(self):
        return f"<nbgrader course directory {self.root}>"


def autograde_two_at_a_time(root, submissions):
    """nbgrader's autograde of every chapter, two chapters at a time: nbgrader runs one kernel at a
    time, busy on one core, so two chapters take the time of about one. Each autograde process
    writes its own chapter's rows to the gradebook (SQLite waits out the other's short writes);
    the students are in it beforehand, so that two processes never both add the same student."""
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gradebook:
        for student in submissions:
            gradebook.update_or_create_student(student)
    # The chapters with the most to run first (chapter 05 trains, in its demos): the pool hands the
    # next chapter to whichever process is free, so the two end together.
    notebooks = {chapter: sum(chapter in chapters for chapters, _ in submissions.values()) for chapter in CHAPTERS}
    longest_first = sorted(CHAPTERS, key=lambda c: (c not in DEMO_CHAPTERS, -notebooks[c]))
    # One torch thread per kernel, as the course grader gives each worker: two kernels of two
    # threads each, beside the grader, would fight over the two cores.
    environment = dict(nbgrader_course.grading_env(SEED, "cpu"), OMP_NUM_THREADS="1")
    with ThreadPoolExecutor(2) as pool:
        # list() waits for every chapter and raises what an autograde raised.
        list(pool.map(lambda chapter: nbgrader_course.autograde(root, chapter, env=environment, timeout=TIMEOUT),
                      longest_first))


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """Both graders on the same submissions: the slow part, shared by the tests below."""
    root = tmp_path_factory.mktemp("nbgrader_course")
    nbgrader_course.make_course(root)
    submissions = students()
    for student, (notebooks, _) in submissions.items():
        for chapter, notebook in notebooks.items():
            nbgrader_course.add_submission(root, student, chapter, notebook)
    (root / "policy.toml").write_text(POLICY)
    (root / "extensions.csv").write_text(EXTENSIONS)
    for student, (stamp, _) in LATE_STUDENTS.items():
        (root / "submitted" / student / CH2 / "timestamp.txt").write_text(stamp)
    # The course directory itself, as an instructor would pass it: the grader reads submitted/,
    # which autograde only reads too. It grades while nbgrader does, with one worker beside
    # nbgrader's two kernels (its share of the work is the smaller one).
    course_grader = start_grader([root], tmp_path_factory.mktemp("grades"),
                                 "--jobs", "1", "--seed", str(SEED), "--device", "cpu", "--timeout", str(TIMEOUT),
                                 "--policy", str(root / "policy.toml"))
    try:
        autograde_two_at_a_time(root, submissions)
    except BaseException:
        course_grader.stop()  # nothing will ask for its records
        raise
    nbgrader_scores = nbgrader_course.scores(root)
    return Graded(root, nbgrader_scores, records_by_submission(course_grader.records()), submissions)


def check_cell_output(root, student, task_id):
    """What nbgrader's run of the task's check cell printed or raised (for failure messages)."""
    task = get_task(task_id)
    path = root / "autograded" / student / task.chapter / f"{task.chapter}.ipynb"
    for cell in json.loads(path.read_text())["cells"]:
        if grade_id(cell) == task.check_cell_id:
            return "\n".join("".join(o.get("text", "")) or f"{o.get('ename')}: {o.get('evalue')}"
                             for o in cell["outputs"])
    return "(no check cell in the autograded notebook)"


def test_both_graders_grade_the_same_tasks(graded):
    course_tasks = {(student, task) for student, tasks in graded.course.items() for task in tasks}
    assert set(graded.nbgrader_scores) == course_tasks


def test_scores_and_maximums_agree(graded):
    disagreements = []
    for (student, task_id), (score, max_score) in sorted(graded.nbgrader_scores.items()):
        record = graded.course[student][task_id]
        if (score, max_score) != (record.get("raw_points", record["points"]), record["max_points"]):
            disagreements.append(
                f"{student} task {task_id}: nbgrader {score:g}/{max_score:g}, course grader "
                f"{record['points']}/{record['max_points']} ({record['status']}: {record['feedback'][:200]})\n"
                f"  nbgrader's check cell: {check_cell_output(graded.root, student, task_id)[-400:]}")
    assert not disagreements, "\n".join(disagreements)


def test_the_submissions_lose_the_expected_points(graded):
    """Agreement alone could be vacuous (say, both graders failing every task)."""
    for student, (_, lost) in graded.submissions.items():
        for task_id, record in graded.course[student].items():
            expected = 0 if task_id in lost else record["max_points"]
            assert record.get("raw_points", record["points"]) == expected, (student, task_id, record["feedback"])


def test_both_graders_give_the_same_final_points_under_the_late_policy(graded):
    """nbgrader's notebook score less its late_submission_penalty (the course's plugin) against the
    course grader's final points, for every student's chapter 02; and the late students lose what
    the policy says (a penalty that neither grader applied would agree too)."""
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{graded.root / 'gradebook.db'}") as gradebook:
        for submitted in gradebook.notebook_submissions(CH2, CH2):
            records = [r for r in graded.course[submitted.student.id].values() if r["chapter"] == CH2]
            course_final = round(sum(r["points"] for r in records), 2)
            nbgrader_final = round(submitted.score - (submitted.late_submission_penalty or 0), 2)
            assert nbgrader_final == course_final, (submitted.student.id, submitted.late_submission_penalty)
            if submitted.student.id in LATE_STUDENTS:
                share = LATE_STUDENTS[submitted.student.id][1]
                raw = sum(r["raw_points"] for r in records)
                assert course_final == round(raw * (1 - share), 2), records[0]["late"]
        assert gradebook.find_assignment(CH2).duedate is not None  # the policy's, for the formgrader


@pytest.mark.parametrize("student", sorted(HANGING_CELLS))
def test_a_cell_that_hangs_or_crashes_costs_its_task_with_the_course_graders_message(graded, student):
    """nbgrader used to drop the whole chapter when a cell's kernel died or would not stop
    ("Removing failed assignment"), and to give points to a function whose cell was interrupted
    after defining it. Now each such task gets 0 and its check cell says what the course grader
    says; the student's other tasks keep their points (test_scores_and_maximums_agree)."""
    chapter, cells = HANGING_CELLS[student]
    assert (graded.root / "autograded" / student / chapter / f"{chapter}.ipynb").is_file()
    for task_id in cells:
        record = graded.course[student][task_id]
        assert record["status"] in ("timeout", "error") and record["points"] == 0, record
        said = check_cell_output(graded.root, student, task_id)
        expected = f"Task {task_id} ({record['status']}): {record['feedback']}"
        if (student, task_id) in WITHOUT_LINE:
            expected = re.sub(r" at line \d+ of your solution cell", "", expected)
        assert said == f"AssertionError: {expected}", said
    assert graded.course["hangs_and_crashes"]["2.2"]["feedback"].startswith(
        f"your code did not finish within {TIMEOUT} s and was stopped at line ")
