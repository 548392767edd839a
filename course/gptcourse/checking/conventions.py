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
# nbgrader's delimiters of the hidden tests (ClearHiddenTests' defaults, which the course keeps):
# the masters write them as "### BEGIN HIDDEN TESTS" lines, but nbgrader takes any line that
# contains one, anywhere, for a marker line, and so does without_hidden_tests.
HIDDEN_TESTS_DELIMITERS = ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS")


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
    """A check cell as students see it: the cell as nbgrader's ClearHiddenTests leaves it.

    Read as nbgrader reads it, so that the grader's copy of a released check cell is the
    release's: the lines are the source split at "\n"; a line that contains BEGIN HIDDEN TESTS
    opens a region, one that contains END HIDDEN TESTS closes it, and both lines and all between
    are dropped (an END without a BEGIN is dropped too). A region opened inside another, or never
    closed, raises RuntimeError, as nbgrader does: its cell would not be released.
    """
    begin, end = HIDDEN_TESTS_DELIMITERS
    kept, hidden = [], False
    for number, line in enumerate(source.split("\n"), 1):
        if begin in line:
            if hidden:
                raise RuntimeError(f"line {number} opens a region of hidden tests inside another: "
                                   f"a line with {begin!r} must be followed by one with {end!r} first")
            hidden, opened = True, number
        elif end in line:
            hidden = False
        elif not hidden:
            kept.append(line)
    if hidden:
        raise RuntimeError(f"the region of hidden tests opened on line {opened} is never closed: "
                           f"no line with {end!r} follows it")
    return "\n".join(kept)
