"""gptcourse.checking.conventions: the one place that spells the notebooks' cell conventions."""
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_notebook
from nbgrader.preprocessors import ClearHiddenTests

from factory import REPO
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


# ------------------------------------------------------------------------------------------
# A check cell's hidden tests: read as nbgrader's ClearHiddenTests reads them
# ------------------------------------------------------------------------------------------

CHECK_CELLS = {
    "one region": "check(1)\n### BEGIN HIDDEN TESTS\nsecret()\n### END HIDDEN TESTS\n",
    "markers indented": "if True:\n    ### BEGIN HIDDEN TESTS\n    secret()\n    ### END HIDDEN TESTS\n    check(1)\n",
    "markers without the hashes": "BEGIN HIDDEN TESTS\nsecret()\nEND HIDDEN TESTS\ncheck(1)",
    "a marker inside a longer line": 'check(1)\nprint("BEGIN HIDDEN TESTS now")\nsecret()\nx = 1  # END HIDDEN TESTS\nafter()\n',
    "two regions": "### BEGIN HIDDEN TESTS\na()\n### END HIDDEN TESTS\nkept()\n### BEGIN HIDDEN TESTS\nb()\n"
                   "### END HIDDEN TESTS\n",
    "an end without a begin": "check(1)\n### END HIDDEN TESTS\nafter()\n",
    "blank lines around": "\n\ncheck(1)\n\n### BEGIN HIDDEN TESTS\nsecret()\n### END HIDDEN TESTS\n\n\n",
    "Windows line ends": "check(1)\r\n### BEGIN HIDDEN TESTS\r\nsecret()\r\n### END HIDDEN TESTS\r\nafter()\r\n",
    "no region": "check(1)",
    "never closed": "check(1)\n### BEGIN HIDDEN TESTS\nsecret()\n",
    "never closed, the end misspelt": "check(1)\n### BEGIN HIDDEN TESTS\nsecret()\n### END HIDDEN TEST\n",
    "one region inside another": "### BEGIN HIDDEN TESTS\na()\n### BEGIN HIDDEN TESTS\nb()\n### END HIDDEN TESTS\n",
}


def outcome(read, source):
    """("released", the cell's text) or ("refused", the exception's type)."""
    try:
        return "released", read(source)
    except Exception as exc:  # noqa: BLE001 - the type is what is compared
        return "refused", type(exc)


def nbgrader_reading(source):
    """What nbgrader's ClearHiddenTests makes of a check cell's source."""
    cell = new_code_cell(source, metadata={"nbgrader": {
        "grade": True, "solution": False, "locked": True, "points": 1, "grade_id": "check_1_1", "schema_version": 3}})
    notebook, _ = ClearHiddenTests().preprocess(new_notebook(cells=[cell]), {})
    return notebook.cells[0].source


def masters_check_cells():
    return {f"{path.stem} {conventions.grade_id(cell)}": cell.source
            for path in sorted((REPO / "solutions").glob("*.ipynb"))
            for cell in nbformat.read(path, as_version=4).cells
            if conventions.is_kind(conventions.grade_id(cell), conventions.CHECK)}


@pytest.mark.parametrize("source", CHECK_CELLS.values(), ids=CHECK_CELLS.keys())
def test_a_check_cell_is_read_as_nbgrader_reads_it(source):
    """The same text kept, or the same refusal, on every cell: the grader compares a student's
    check cell with its copy of the released one, and the release is nbgrader's."""
    assert outcome(conventions.without_hidden_tests, source) == outcome(nbgrader_reading, source)


def test_the_cases_above_cover_each_way_of_reading():
    """Each edge case is there: kept text, a region dropped, and both refusals."""
    outcomes = {name: outcome(nbgrader_reading, source) for name, source in CHECK_CELLS.items()}
    assert outcomes["a marker inside a longer line"] == ("released", "check(1)\nafter()\n")
    assert outcomes["markers indented"] == ("released", "if True:\n    check(1)\n")
    assert outcomes["never closed"] == ("refused", RuntimeError)
    assert outcomes["one region inside another"] == ("refused", RuntimeError)


def test_every_masters_check_cell_is_read_as_nbgrader_reads_it():
    cells = masters_check_cells()
    assert len(cells) == len(TASKS)
    for name, source in cells.items():
        assert outcome(conventions.without_hidden_tests, source) == outcome(nbgrader_reading, source), name
        assert "HIDDEN TESTS" not in conventions.without_hidden_tests(source), name


def test_a_refusal_says_which_line_opened_the_region():
    with pytest.raises(RuntimeError, match="opened on line 2 is never closed"):
        conventions.without_hidden_tests(CHECK_CELLS["never closed"])
    with pytest.raises(RuntimeError, match="line 3 opens"):
        conventions.without_hidden_tests(CHECK_CELLS["one region inside another"])
