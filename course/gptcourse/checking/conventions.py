"""The notebooks' cell conventions, in one place: every reader and writer of notebooks uses these.

A graded cell carries nbgrader metadata whose grade_id says what it is and for which task:
`task_<slug>` (the solution cell), `check_<slug>` (the check cell), `carry_<slug>` (a later
chapter's cell that brings the task's names in), the slug being the task id with "_" for
"." (task_2_5 is Task 2.5). Cell tags mark the rest: `setup` (runs before every task) and
`paste` (where a student pastes earlier code). Inside a master's cells, marker lines fence
the solution and the hidden tests, as nbgrader expects.

Nothing here imports torch; nothing here trusts a notebook to be well formed (a student's file
may hold anything where a dictionary should be).
"""
SOLUTION, CHECK, CARRY = "task", "check", "carry"  # the kinds of graded cell: grade_id prefixes
SETUP_TAG, PASTE_TAG = "setup", "paste"
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN_TESTS_MARKERS = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")


def grade_id_for(kind, task_id):
    """grade_id_for(CHECK, "2.5") -> "check_2_5"."""
    return f"{kind}_{task_id.replace('.', '_')}"


def parse_grade_id(grade_id):
    """(kind, task id) of a graded cell's grade_id, e.g. ("check", "2.5"); (None, None) when it
    is not one of the three kinds (the task id is not checked against the course here)."""
    kind, _, slug = str(grade_id or "").partition("_")
    if kind in (SOLUTION, CHECK, CARRY) and slug:
        return kind, slug.replace("_", ".")
    return None, None


def is_kind(grade_id, kind):
    """Whether a grade_id is of this kind of graded cell (is_kind("carry_3_2", CARRY))."""
    return isinstance(grade_id, str) and grade_id.startswith(f"{kind}_")


def nbgrader_metadata(cell):
    """The cell's nbgrader metadata; {} when it has none, or something else than a dictionary."""
    metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    return metadata.get("nbgrader") if isinstance(metadata.get("nbgrader"), dict) else {}


def grade_id(cell):
    """The cell's grade_id; "" when it has none (or one that is not text)."""
    value = nbgrader_metadata(cell).get("grade_id")
    return value if isinstance(value, str) else ""


def tags(cell):
    """The cell's tags; [] when it has none (or they are not a list)."""
    metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    return metadata.get("tags") if isinstance(metadata.get("tags"), list) else []


def strip_markers(source, markers=SOLUTION_MARKERS):
    """The cell's source without the marker lines themselves."""
    lines = [line for line in source.splitlines() if line.strip() not in markers]
    return "\n".join(lines).strip("\n") + "\n"


def without_hidden_tests(source):
    """A check cell as students see it: nbgrader drops the hidden-test region."""
    kept, hidden = [], False
    for line in source.splitlines():
        if line.strip() == HIDDEN_TESTS_MARKERS[0]:
            hidden = True
        elif line.strip() == HIDDEN_TESTS_MARKERS[1]:
            hidden = False
        elif not hidden:
            kept.append(line)
    return "\n".join(kept).strip("\n") + "\n"
