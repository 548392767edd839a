"""gptcourse.checking.conventions: the one place that spells the notebooks' cell conventions."""
from gptcourse.checking import conventions
from gptcourse.checking.tasks import TASKS, task_of_cell


def test_every_task_s_cells_are_named_and_read_back_the_same_way():
    for task in TASKS:
        for kind in (conventions.SOLUTION, conventions.CHECK, conventions.CARRY):
            name = conventions.grade_id_for(kind, task.id)
            assert conventions.parse_grade_id(name) == (kind, task.id)
            assert conventions.is_kind(name, kind) and task_of_cell(name) == task
        assert task.solution_cell_id == conventions.grade_id_for(conventions.SOLUTION, task.id)


def test_other_names_are_no_graded_cell():
    for name in ("colab", "", None, 7, "task_", "answer_2_5", "tasks_2_5"):
        assert conventions.parse_grade_id(name) == (None, None)
        assert task_of_cell(name) is None


def test_a_student_s_odd_metadata_reads_as_none():
    for cell in ({}, {"metadata": []}, {"metadata": {"nbgrader": "x", "tags": "setup"}},
                 {"metadata": {"nbgrader": {"grade_id": 5}}}):
        assert conventions.grade_id(cell) == "" and conventions.tags(cell) == []
    cell = {"metadata": {"nbgrader": {"grade_id": "check_2_5", "points": 3}, "tags": ["setup"]}}
    assert conventions.grade_id(cell) == "check_2_5" and conventions.tags(cell) == ["setup"]


def test_markers_are_taken_out_as_nbgrader_does():
    solution = "### BEGIN SOLUTION\nx = 1\n### END SOLUTION\n"
    assert conventions.strip_markers(solution) == "x = 1\n"
    check = "check(1)\n### BEGIN HIDDEN TESTS\nsecret()\n### END HIDDEN TESTS\n"
    assert conventions.without_hidden_tests(check) == "check(1)\n"
