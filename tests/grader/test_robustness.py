"""One submission never stops a batch: whatever a student's files hold, reading, parsing and
inspecting them is confined to that submission, which gets `error` records that say what is
wrong and where; resuming trusts nothing in results.jsonl but well-formed statuses.

The fast tests call the reading layer directly; the grading tests run the command line as an
instructor does. The property-based tests (hypothesis) generate broken notebooks: random
bytes, truncated and deeply nested JSON, wrong types where nbformat has strings or lists,
huge cells, odd encodings, nbformat 3 and lone surrogates.
"""
import contextlib
import copy
import json
import os
import signal
import tempfile
import zipfile
from pathlib import Path

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factory import corpus_items, filled_notebook, manifest, records_by_submission, run_grader, write_notebook
from gptcourse.checking.tasks import TASKS, tasks_of
from grader.grading import submissions
from grader.grading.gradefolder import load_results
from grader.grading.submissions import (Notebook, Submission, check_cell_note, discover, find_task_cell,
                                        graded_notebooks, read_notebook)

CH02, CH03 = "02_attention", "03_multihead_attention"
LONE_SURROGATE = "\udcff"
STATUSES = ("passed", "failed", "error", "timeout", "memory")  # docs/grading.md


def reference_source(task_id):
    return next(m["tasks"][task_id]["source"] for m in manifest().values() if task_id in m["tasks"])


def with_surrogate_in(task_id, chapter=CH02):
    """A filled notebook whose task cell ends with `# \\udcff` (saved as the JSON escape)."""
    return filled_notebook(chapter, {task_id: reference_source(task_id) + f"# {LONE_SURROGATE}\n"})


def write_bytes(path, data):
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def task_cell(nb, task_id):
    return next(c for c in nb["cells"] if c.get("metadata", {}).get("nbgrader", {}).get("grade_id")
                == "task_" + task_id.replace(".", "_"))


# ------------------------------------------------------------------------------------------
# Reading one notebook
# ------------------------------------------------------------------------------------------

def test_a_lone_surrogate_in_a_task_cell_is_an_error_naming_the_character_and_the_cell(tmp_path):
    path = write_notebook(with_surrogate_in("2.2"), tmp_path / f"{CH02}.ipynb")
    assert "\\udcff" in path.read_text()  # valid JSON, as Jupyter would save it
    notebook = read_notebook(str(path))
    assert notebook.error is None and notebook.chapter == CH02
    source, why = find_task_cell(notebook, "2.2")
    assert source is None
    assert "U+DCFF" in why and "lone surrogate" in why and "task_2_2" in why and "cell " in why
    for other in ("2.1", "2.3", "2.4", "2.5"):  # the other cells are fine
        assert find_task_cell(notebook, other) == (reference_source(other), None)


def test_a_nul_character_in_a_task_cell_is_an_error_naming_it(tmp_path):
    nb = filled_notebook(CH03, {"3.1": "x = 1\n\0\n"})
    source, why = find_task_cell(read_notebook(str(write_notebook(nb, tmp_path / "n.ipynb"))), "3.1")
    assert source is None and "NUL" in why and "task_3_1" in why and "line 2" in why


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-le", "utf-32"])
def test_notebooks_in_unicode_encodings_that_json_allows_are_read(tmp_path, encoding):
    nb = filled_notebook(CH03)
    task_cell(nb, "3.1")["source"] += "# café ✓\n"
    path = write_bytes(tmp_path / f"{CH03}.ipynb", json.dumps(nb, ensure_ascii=False).encode(encoding))
    notebook = read_notebook(str(path))
    assert notebook.error is None and notebook.chapter == CH03
    assert find_task_cell(notebook, "3.1")[0].endswith("# café ✓\n")


@pytest.mark.parametrize("encoding", ["latin-1", "cp1252"])
def test_a_notebook_in_a_legacy_encoding_is_an_error_naming_the_byte(tmp_path, encoding):
    nb = filled_notebook(CH03)
    task_cell(nb, "3.1")["source"] += "# café\n"
    text = json.dumps(nb, ensure_ascii=False)
    path = write_bytes(tmp_path / f"{CH03}.ipynb", text.encode(encoding, errors="replace"))
    notebook = read_notebook(str(path))
    assert notebook.chapter == CH03  # from the file name: its tasks get the error
    first = next(ch for ch in text if ord(ch) > 127 and ch.encode(encoding, errors="replace") != b"?")
    assert "not UTF-8 text" in notebook.error and f"byte 0x{first.encode(encoding)[0]:02x}" in notebook.error


def as_nbformat_3(nb):
    """The notebook as an nbformat 3 file's data (cells inside worksheets)."""
    current = nbformat.reads(json.dumps(nb), as_version=4)
    return json.loads(nbformat.writes(nbformat.converter.convert(current, 3), version=3))


def test_an_nbformat_3_notebook_is_converted_and_graded(tmp_path):
    old = as_nbformat_3(filled_notebook(CH03))
    assert old["nbformat"] == 3 and "worksheets" in old and "cells" not in old
    notebook = read_notebook(str(write_notebook(old, tmp_path / "old.ipynb")))
    assert notebook.error is None and notebook.chapter == CH03
    assert find_task_cell(notebook, "3.2") == (reference_source("3.2"), None)


def test_an_nbformat_3_notebook_that_cannot_be_converted_says_so(tmp_path):
    path = write_bytes(tmp_path / f"{CH03}.ipynb", b'{"nbformat": 3, "worksheets": 7}')
    error = read_notebook(str(path)).error
    assert "nbformat 3" in error and "save it again" in error


@pytest.mark.parametrize("text,words", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"cells": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested too deeply"),
    ('{"cells": {"0": {}}}', "'cells' as an object"),
    ('{"metadata": {}}', "no 'cells'"),
    ("[1, 2]", "holds a list"),
    ('{"cells": [], "nbformat": ' + "9" * 5000 + "}", "not valid notebook JSON"),
    ("", "empty"),
    ("\n\n  ", "empty"),
], ids=["nested_top", "nested_cells", "cells_dict", "no_cells", "a_list", "huge_integer", "empty", "blank"])
def test_notebook_level_damage_is_one_clear_error(tmp_path, text, words):
    notebook = read_notebook(str(write_bytes(tmp_path / f"{CH02}.ipynb", text.encode())))
    assert words in notebook.error and notebook.chapter == CH02 and notebook.cells == []


@pytest.mark.parametrize("value,words", [
    (42, "source is a number"), ({"a": 1}, "source is an object"), (["x = 1\n", 3], "lists a number"),
    (None, "source is null"),
])
def test_a_task_cell_whose_source_has_the_wrong_type_is_an_error_for_that_task_only(tmp_path, value, words):
    nb = filled_notebook(CH03)
    task_cell(nb, "3.1")["source"] = value
    notebook = read_notebook(str(write_notebook(nb, tmp_path / "n.ipynb")))
    source, why = find_task_cell(notebook, "3.1")
    assert source is None and words in why and "task_3_1" in why
    assert find_task_cell(notebook, "3.2") == (reference_source("3.2"), None)


def test_without_notebook_metadata_the_chapter_comes_from_task_cells_not_carry_over_cells(tmp_path):
    nb = filled_notebook(CH03)
    del nb["metadata"]["gptcourse"]
    assert any(c["metadata"].get("nbgrader", {}).get("grade_id") == "carry_2_5" for c in nb["cells"])
    assert read_notebook(str(write_notebook(nb, tmp_path / "mine.ipynb"))).chapter == CH03


def test_wrong_types_in_metadata_are_ignored(tmp_path):
    nb = filled_notebook(CH03)
    cell_3_1, cell_3_2 = task_cell(nb, "3.1"), task_cell(nb, "3.2")
    nb["metadata"]["gptcourse"] = {"chapter": [CH02]}
    nb["cells"][0]["metadata"] = ["not", "a", "dict"]
    cell_3_2["metadata"]["nbgrader"]["grade_id"] = ["task_3_2"]
    cell_3_1["cell_type"] = 5
    notebook = read_notebook(str(write_notebook(nb, tmp_path / "n.ipynb")))
    assert notebook.error is None and notebook.chapter == CH03  # from the remaining grade_ids
    source, note = find_task_cell(notebook, "3.2")  # still found: the cell that defines the name
    assert source == reference_source("3.2") and "not in its own cell" in note
    assert find_task_cell(notebook, "3.1")[0] is None  # not a code cell any more
    assert check_cell_note(notebook, "3.1", None) is not None


def test_a_huge_task_cell_is_an_error_and_the_others_are_graded(tmp_path):
    big = "x = 1\n" * (submissions.MAX_CELL_CHARS // 6 + 1)
    nb = filled_notebook(CH03, {"3.1": big})
    notebook = read_notebook(str(write_notebook(nb, tmp_path / "n.ipynb")))
    source, why = find_task_cell(notebook, "3.1")
    assert source is None and "too large" in why and "task_3_1" in why
    assert find_task_cell(notebook, "3.2") == (reference_source("3.2"), None)


def test_a_notebook_file_over_the_limit_is_not_read(tmp_path, monkeypatch):
    path = write_notebook(filled_notebook(CH03), tmp_path / "n.ipynb")
    monkeypatch.setattr(submissions, "MAX_NOTEBOOK_BYTES", path.stat().st_size - 1)
    notebook = read_notebook(str(path))
    assert "too large" in notebook.error and notebook.cells == []


def test_deeply_nested_code_does_not_stop_the_search_for_the_task_cell(tmp_path):
    nb = filled_notebook(CH03)
    nb["cells"].insert(0, {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                           "source": "-" * 100_000 + "1\n" + "f" + "()" * 100_000})
    notebook = read_notebook(str(write_notebook(nb, tmp_path / "n.ipynb")))
    assert find_task_cell(notebook, "3.1") == (reference_source("3.1"), None)


# ------------------------------------------------------------------------------------------
# Finding submissions
# ------------------------------------------------------------------------------------------

def test_duplicate_submission_names_are_both_graded_under_distinct_names(tmp_path):
    first, second = tmp_path / "batch1", tmp_path / "batch2"
    write_notebook(filled_notebook(CH03), first / "alice" / f"{CH03}.ipynb")
    write_notebook(filled_notebook(CH03), second / "alice.ipynb")
    with zipfile.ZipFile(first / "alice.zip", "w") as archive:
        archive.writestr(f"{CH03}.ipynb", json.dumps(filled_notebook(CH03)))
    found = discover([first, second], str(tmp_path / "unpacked"))
    assert [s.id for s in found] == ["alice", "alice (2)", "alice (3)"]
    assert all(s.notebooks and s.notebooks[0].error is None for s in found)
    assert any("'alice (2)'" in note for note in found[0].notes)
    assert "graded as 'alice (3)'" in found[2].notes[0] and "alice.ipynb" in found[2].notes[0]


def test_two_zips_with_the_same_name_unpack_to_separate_folders(tmp_path):
    for batch, task in (("batch1", "3.1"), ("batch2", "3.2")):
        (tmp_path / batch).mkdir()
        with zipfile.ZipFile(tmp_path / batch / "bob.zip", "w") as archive:
            archive.writestr(f"{CH03}.ipynb", json.dumps(filled_notebook(CH03, {task: "# mine\n"})))
    found = discover([tmp_path / "batch1", tmp_path / "batch2"], str(tmp_path / "unpacked"))
    first, second = (s.notebooks[0] for s in found)
    assert first.path != second.path and first.sha != second.sha


@contextlib.contextmanager
def fails_after(seconds):
    """Turn a hang (a blocking open, say) into a failure."""
    def hung(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_links_pipes_and_dangling_files_in_a_submission_are_errors(tmp_path):
    outside = write_notebook(filled_notebook(CH03), tmp_path / "elsewhere" / "secret.ipynb")
    student = tmp_path / "batch" / "carol"
    student.mkdir(parents=True)
    (student / f"{CH02}.ipynb").symlink_to(outside)
    os.mkfifo(student / f"{CH03}.ipynb")  # reading a pipe would wait forever
    (student / "x_03_multihead.ipynb").symlink_to(student / "missing.ipynb")
    with fails_after(20):
        [found] = discover([tmp_path / "batch"], str(tmp_path / "unpacked"))
    errors = {os.path.basename(n.path): n.error for n in found.notebooks}
    assert "outside the submission" in errors[f"{CH02}.ipynb"]
    assert "not a regular file" in errors[f"{CH03}.ipynb"]
    assert "could not be read (No such file or directory)" in errors["x_03_multihead.ipynb"]


@pytest.mark.parametrize("content,words", [
    (b"PK\x03\x04 not really a zip", "damaged"),
    (None, "unsafe path"),
])
def test_a_broken_zip_is_an_error_for_that_submission(tmp_path, content, words):
    batch = tmp_path / "batch"
    batch.mkdir()
    if content is None:
        with zipfile.ZipFile(batch / f"dave_{CH02}.zip", "w") as archive:
            archive.writestr(f"../../{CH02}.ipynb", "{}")
    else:
        (batch / f"dave_{CH02}.zip").write_bytes(content)
    write_notebook(filled_notebook(CH03), batch / "erin" / f"{CH03}.ipynb")
    dave, erin = discover([batch], str(tmp_path / "unpacked"))
    assert words in dave.notebooks[0].error and dave.notebooks[0].chapter == CH02
    assert erin.notebooks[0].error is None
    assert not (tmp_path / f"{CH02}.ipynb").exists()


def test_a_zip_member_over_the_size_limit_is_not_unpacked(tmp_path, monkeypatch):
    batch = tmp_path / "batch"
    batch.mkdir()
    with zipfile.ZipFile(batch / "fay.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{CH02}.ipynb", json.dumps(filled_notebook(CH02)) + " " * 5000)
        archive.writestr(f"{CH03}.ipynb", json.dumps(filled_notebook(CH03)))
    monkeypatch.setattr(submissions, "MAX_NOTEBOOK_BYTES", len(json.dumps(filled_notebook(CH02))) + 100)
    [fay] = discover([batch], str(tmp_path / "unpacked"))
    by_chapter = {n.chapter: n for n in fay.notebooks}
    assert "too large" in by_chapter[CH02].error and not os.path.exists(by_chapter[CH02].path)
    assert by_chapter[CH03].error is None


def test_a_zip_that_would_unpack_too_much_is_an_error(tmp_path, monkeypatch):
    batch = tmp_path / "batch"
    batch.mkdir()
    with zipfile.ZipFile(batch / f"gil_{CH03}.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        for copy_number in range(3):
            archive.writestr(f"{copy_number}/{CH03}.ipynb", json.dumps(filled_notebook(CH03)))
    monkeypatch.setattr(submissions, "MAX_ZIP_BYTES", 2 * len(json.dumps(filled_notebook(CH03))))
    [gil] = discover([batch], str(tmp_path / "unpacked"))
    assert "would unpack to" in gil.notebooks[0].error and gil.notebooks[0].chapter == CH03
    assert not any(Path(tmp_path / "unpacked").rglob("*.ipynb"))


def test_a_folder_name_that_is_not_utf8_becomes_a_readable_id(tmp_path):
    batch = tmp_path / "batch"
    folder = os.path.join(os.fsencode(batch), b"caf\xe9")
    os.makedirs(folder)
    write_notebook(filled_notebook(CH03), os.path.join(os.fsdecode(folder), f"{CH03}.ipynb"))
    [found] = discover([batch], str(tmp_path / "unpacked"))
    assert found.id == "caf\ufffd"
    found.id.encode("utf-8")  # what the reports do with it


def test_a_broken_copy_of_a_chapter_never_replaces_a_readable_one():
    good, broken = Notebook("a/02_attention.ipynb", CH02), Notebook("a/02_attention_copy.ipynb", CH02, error="x")
    assert graded_notebooks(Submission("a", [good, broken])) == [good]
    assert graded_notebooks(Submission("a", [broken, good])) == [good]
    newer = Notebook("a/02_attention_v2.ipynb", CH02)
    assert graded_notebooks(Submission("a", [good, newer])) == [newer]  # the last readable one wins


# ------------------------------------------------------------------------------------------
# Resuming: results.jsonl is untrusted
# ------------------------------------------------------------------------------------------

RUN = {"seed": 5, "device": "cpu"}
FINDING = {"kind": "wrong result", "case": "a case", "device": "cpu", "observed": "The output", "difference": "wrong shape"}


def good_line(task_id="3.2", status="passed", points=None, **changes):
    task = next(t for t in TASKS if t.id == task_id)
    record = {"submission": "s", "notebook": "n.ipynb", "notebook_sha": "abc", "chapter": task.chapter,
              "task": task_id, "names": list(task.names), "level": task.level, "max_points": 4,
              "seed": 5, "device": "cpu", "notes": [], "status": status,
              "points": 4 if points is None else points, "feedback": "fine", "duration_s": 0.5,
              "finding": None if status == "passed" else FINDING}
    record.update(changes)
    return json.dumps(record)


def test_resume_recomputes_points_from_status_and_manifest(tmp_path):
    (tmp_path / "results.jsonl").write_text("\n".join([
        good_line("3.1", "failed", points=99, max_points=99),
        good_line("3.2", "passed", points=99, max_points=99, names=["os"], level="Z"),
    ]) + "\n")
    done = load_results(str(tmp_path), RUN, manifest())
    failed, passed = done[("s", "abc", "3.1")], done[("s", "abc", "3.2")]
    points = {t: manifest()[CH03]["tasks"][t]["points"] for t in ("3.1", "3.2")}
    assert (failed["points"], failed["max_points"]) == (0, points["3.1"])
    assert (passed["points"], passed["max_points"]) == (points["3.2"], points["3.2"])
    assert passed["names"] == ["MultiHeadAttention"] and passed["level"] == "A"


@pytest.mark.parametrize("line", [
    good_line(status="bogus"), good_line(status=None), good_line(task="9.9"), good_line(task=3.2),
    good_line(submission=["s"]), good_line(notebook_sha=None), good_line(notes="x"), good_line(notes=[1]),
    good_line(feedback=7), good_line(duration_s="1"), good_line(seed=6), good_line(device="cuda"),
    good_line(grader_fault=True), good_line(status="failed", finding=None), good_line(finding=FINDING),
    good_line(status="failed", finding={"kind": "bogus"}), good_line(status="error", finding=dict(FINDING, step=3)),
    good_line(status="failed", finding=dict(FINDING, html="<b>")), good_line(status="failed", finding="wrong"),
    "[1, 2]", "7", '"text"', "null", "{" * 50_000, good_line()[:40],
], ids=lambda line: line[:60])
def test_resume_ignores_a_malformed_or_foreign_record(tmp_path, line):
    (tmp_path / "results.jsonl").write_text(line + "\n")
    assert load_results(str(tmp_path), RUN, manifest()) == {}


def test_resume_keeps_a_well_formed_finding(tmp_path):
    """What went wrong, as fields (the class report groups on them), survives a resume."""
    (tmp_path / "results.jsonl").write_text(good_line("3.1", "failed") + "\n")
    [record] = load_results(str(tmp_path), RUN, manifest()).values()
    assert record["finding"] == FINDING and record["status"] == "failed"


def test_resume_reads_past_bytes_that_are_not_utf8(tmp_path):
    (tmp_path / "results.jsonl").write_bytes(b"\xff\xfe garbage\n" + good_line().encode() + b"\n")
    assert list(load_results(str(tmp_path), RUN, manifest())) == [("s", "abc", "3.2")]


def test_resumed_strings_cannot_carry_lone_surrogates(tmp_path):
    (tmp_path / "results.jsonl").write_text(good_line(feedback="bad \udcff", notes=["\ud800"]) + "\n")
    [record] = load_results(str(tmp_path), RUN, manifest()).values()
    assert record["feedback"] == "bad \ufffd" and record["notes"] == ["\ufffd"]


# ------------------------------------------------------------------------------------------
# Generated broken notebooks
# ------------------------------------------------------------------------------------------

BASE = filled_notebook(CH03)
BASE_TEXT = json.dumps(BASE, indent=1)
TASK_CELLS = [i for i, c in enumerate(BASE["cells"]) if c["metadata"].get("nbgrader", {}).get("grade_id", "")
              .startswith(("task_", "check_"))]

ANY_VALUE = st.one_of(
    st.integers(), st.floats(), st.booleans(), st.none(), st.text(max_size=20),
    st.lists(st.one_of(st.integers(), st.text(max_size=5), st.none()), max_size=3),
    st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
)
# Where nbformat has a string or a list (or an object holding them); {i}: a cell's index.
TYPED_POSITIONS = [
    ("cells",), ("metadata",), ("metadata", "gptcourse"), ("metadata", "gptcourse", "chapter"),
    ("nbformat",), ("cells", "{i}"), ("cells", "{i}", "source"), ("cells", "{i}", "source", 0),
    ("cells", "{i}", "cell_type"), ("cells", "{i}", "metadata"), ("cells", "{i}", "metadata", "nbgrader"),
    ("cells", "{i}", "metadata", "nbgrader", "grade_id"),
]


def _set(nb, position, cell, value):
    """Put `value` at `position` (a TYPED_POSITIONS entry) if the path still leads somewhere."""
    keys = [cell if key == "{i}" else key for key in position]
    target = nb
    for key in keys[:-1]:
        if isinstance(target, dict) and key in target or isinstance(target, list) and isinstance(key, int) \
                and 0 <= key < len(target):
            if keys[-1] == 0 and key == "source" and isinstance(target[key], str):
                target[key] = target[key].splitlines(True) or [""]
            target = target[key]
        else:
            return
    if isinstance(target, dict) or isinstance(target, list) and isinstance(keys[-1], int) and keys[-1] < len(target):
        target[keys[-1]] = value


@st.composite
def wrong_types(draw):
    nb = copy.deepcopy(BASE)
    for _ in range(draw(st.integers(1, 3))):
        cell = draw(st.one_of(st.sampled_from(TASK_CELLS), st.integers(0, len(BASE["cells"]) - 1)))
        _set(nb, draw(st.sampled_from(TYPED_POSITIONS)), cell, draw(ANY_VALUE))
    return json.dumps(nb).encode()


@st.composite
def deeply_nested(draw):
    depth = draw(st.sampled_from([300, 1500, 100_000]))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a": ', "}")]))
    nested = opener * depth + "1" + closer * depth
    where = draw(st.sampled_from([
        "{}", '{{"cells": {}}}', '{{"metadata": {}, "cells": []}}',
        '{{"cells": [{{"cell_type": "code", "metadata": {{}}, "source": {}}}]}}',
    ]))
    return where.format(nested).encode()


@st.composite
def odd_encoding(draw):
    nb = copy.deepcopy(BASE)
    nb["cells"][draw(st.sampled_from(TASK_CELLS))]["source"] += "\n# café\n"
    encoding = draw(st.sampled_from(["utf-8-sig", "utf-16", "utf-16-be", "utf-32-le", "latin-1", "cp1252"]))
    return json.dumps(nb, ensure_ascii=False).encode(encoding, errors="replace")


@st.composite
def lone_surrogates(draw):
    nb = copy.deepcopy(BASE)
    cell = nb["cells"][draw(st.one_of(st.sampled_from(TASK_CELLS), st.integers(0, len(BASE["cells"]) - 1)))]
    source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    at = draw(st.integers(0, len(source)))
    cell["source"] = source[:at] + chr(draw(st.integers(0xD800, 0xDFFF))) + source[at:]
    return json.dumps(nb).encode()  # written as a \\uXXXX escape: valid JSON


@st.composite
def old_format(draw):
    old = as_nbformat_3(BASE)
    if draw(st.booleans()):
        _set(old, draw(st.sampled_from([("worksheets",), ("worksheets", 0, "cells"), ("nbformat",)])), 0,
             draw(ANY_VALUE))
    return json.dumps(old).encode()


def huge_cell():
    nb = copy.deepcopy(BASE)
    nb["cells"][TASK_CELLS[0]]["source"] = "x = 1\n" * (submissions.MAX_CELL_CHARS // 6 + 1)
    return json.dumps(nb).encode()


BROKEN_NOTEBOOKS = st.one_of(
    st.binary(max_size=2000),
    st.integers(0, len(BASE_TEXT) - 1).map(lambda n: BASE_TEXT[:n].encode()),
    deeply_nested(), wrong_types(), odd_encoding(), lone_surrogates(), old_format(),
    st.just(b"huge"),  # a marker: huge_cell() is built only when drawn (5 MB)
)
# How a broken notebook reaches the grader: in a student folder named by chapter, loose in
# the batch folder (chapter from its content, if any), zipped, or a zip that is not one.
CONTAINERS = st.sampled_from(["folder", "loose", "zip", "bad_zip"])


def place(batch, name, container, content):
    """Write one broken submission; True when its file name says its chapter (CH03)."""
    content = huge_cell() if content == b"huge" else content
    if container == "folder":
        write_bytes(batch / name / f"{CH03}.ipynb", content)
    elif container == "loose":
        write_bytes(batch / f"{name}.ipynb", content)
    elif container == "zip":
        with zipfile.ZipFile(batch / f"{name}.zip", "w") as archive:
            archive.writestr(f"{name}/{CH03}.ipynb", content)
    else:
        write_bytes(batch / f"{name}.zip", content)
    return container in ("folder", "zip")


def check_notebook_inspection(notebook):
    """What the engine does with a notebook before any worker runs, which must never raise."""
    assert isinstance(notebook.error, str) or isinstance(notebook.cells, list)
    if notebook.error:
        assert notebook.error.strip()
        return
    for task in tasks_of(notebook.chapter) if notebook.chapter else TASKS:
        source, why = find_task_cell(notebook, task.id)
        assert isinstance(source, str) or (source is None and why.strip())
        check_cell_note(notebook, task.id, "check(...)")


@settings(max_examples=200, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(content=BROKEN_NOTEBOOKS)
def test_reading_any_generated_notebook_never_raises(content):
    with tempfile.TemporaryDirectory() as folder:
        path = write_bytes(Path(folder) / f"{CH03}.ipynb", huge_cell() if content == b"huge" else content)
        notebook = read_notebook(str(path))
    assert notebook.chapter in (None, CH02, CH03)
    check_notebook_inspection(notebook)


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(broken=st.lists(st.tuples(CONTAINERS, BROKEN_NOTEBOOKS), min_size=1, max_size=6))
def test_discovering_a_batch_of_generated_submissions_never_raises(broken):
    with tempfile.TemporaryDirectory() as folder:
        batch = Path(folder) / "batch"
        batch.mkdir()
        write_notebook(BASE, batch / "good" / f"{CH03}.ipynb")
        for i, (container, content) in enumerate(broken):
            place(batch, f"broken_{i}", container, content)
        found = discover([batch], str(Path(folder) / "unpacked"))
        assert len(found) == len(broken) + 1 and len({s.id for s in found}) == len(found)
        for submission in found:
            for notebook in submission.notebooks:
                check_notebook_inspection(notebook)
    good = next(s for s in found if s.id == "good")
    assert [find_task_cell(good.notebooks[0], t.id)[0] for t in tasks_of(CH03)] == \
        [reference_source(t.id) for t in tasks_of(CH03)]


@pytest.mark.slow  # five generated batches, each graded by the grader's command: make test, not the edit loop
@settings(max_examples=5, deadline=None, database=None, suppress_health_check=list(HealthCheck))
@given(broken=st.lists(st.tuples(CONTAINERS, BROKEN_NOTEBOOKS), min_size=3, max_size=5))
def test_a_batch_with_generated_broken_notebooks_completes_and_grades_the_good_ones(broken):
    with tempfile.TemporaryDirectory() as folder:
        batch, out = Path(folder) / "batch", Path(folder) / "out"
        write_notebook(filled_notebook(CH03), batch / "good_folder" / f"{CH03}.ipynb")
        write_notebook(filled_notebook(CH03), batch / "good_loose.ipynb")
        named = {f"broken_{i}": place(batch, f"broken_{i}", container, content)
                 for i, (container, content) in enumerate(broken)}
        records = run_grader([batch], out, "--device", "cpu", "--jobs", "2", "--timeout", "20", "--seed", "11")
        assert (out / "grades.csv").is_file() and (out / "grades.json").is_file()
        csv_text = (out / "grades.csv").read_text(encoding="utf-8")
    graded = records_by_submission(records)
    for name in ("good_folder", "good_loose"):
        assert sorted(graded[name]) == [t.id for t in tasks_of(CH03)]
        assert all(r["points"] == r["max_points"] > 0 for r in graded[name].values()), graded[name]
        assert name in csv_text
    for record in records:
        assert record["status"] in STATUSES and isinstance(record["feedback"], str) and record["feedback"].strip()
        assert record["points"] == (record["max_points"] if record["status"] == "passed" else 0)
    for name, chapter_in_name in named.items():
        if chapter_in_name:  # every task of the chapter gets a record, whatever the file holds
            assert sorted(graded[name]) == [t.id for t in tasks_of(CH03)], (name, graded.get(name))


# ------------------------------------------------------------------------------------------
# Whole batches
# ------------------------------------------------------------------------------------------

def test_a_lone_surrogate_costs_only_its_task_and_the_batch_completes(tmp_path):
    batch = tmp_path / "batch"
    nb = with_surrogate_in("2.2")
    # Code can also make one at run time: the skipped statement's message quotes it.
    task_cell(nb, "2.1")["source"] = reference_source("2.1") + "\nraise ValueError('bad ' + chr(0xDCFF))\n"
    write_notebook(nb, batch / "surrogate" / f"{CH02}.ipynb")
    write_notebook(filled_notebook(CH02), batch / "all_right" / f"{CH02}.ipynb")
    out = tmp_path / "out"
    graded = records_by_submission(run_grader([batch], out, "--device", "cpu", "--jobs", "2", "--seed", "3"))
    broken = graded["surrogate"]["2.2"]
    assert (broken["status"], broken["points"]) == ("error", 0)
    assert "U+DCFF" in broken["feedback"] and "lone surrogate" in broken["feedback"]
    assert "task_2_2" in broken["feedback"]
    others = [r for t, r in graded["surrogate"].items() if t != "2.2"] + list(graded["all_right"].values())
    assert len(others) == 9 and all(r["points"] == r["max_points"] for r in others)
    assert any("ValueError: bad \ufffd" in note for note in graded["surrogate"]["2.1"]["notes"])
    assert "U+DCFF" in (out / "feedback" / "surrogate.md").read_text(encoding="utf-8")
    for name in ("grades.json", "grades.csv", "results.jsonl", "feedback/surrogate.md"):
        text = (out / name).read_text(encoding="utf-8")
        assert "\\udcff" not in text and "\udcff" not in text, name  # neither escaped nor raw


def test_a_resumed_batch_recomputes_tampered_points_and_regrades_bogus_records(tmp_path):
    wrong = next(i for i in corpus_items() if i.task == "3.1" and i.expect == "wrong")
    batch, out = tmp_path / "batch", tmp_path / "out"
    write_notebook(filled_notebook(CH03, {"3.1": wrong.source}), batch / "gus" / f"{CH03}.ipynb")
    first = records_by_submission(run_grader([batch], out, "--device", "cpu", "--seed", "4"))["gus"]
    assert first["3.1"]["points"] == 0 and first["3.2"]["status"] == "passed"

    lines = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    for record in lines:
        if record["task"] == "3.1":  # a failed task made to look like full marks
            record.update(points=99, max_points=99, feedback="kept from the first run")
        else:
            record["status"] = "excellent"
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))

    second = records_by_submission(run_grader([batch], out, "--device", "cpu"))["gus"]
    assert second["3.1"]["feedback"] == "kept from the first run"  # resumed, not graded again...
    assert (second["3.1"]["points"], second["3.1"]["max_points"]) == (0, first["3.1"]["max_points"])  # ...but rescored
    assert second["3.2"]["status"] == "passed" and second["3.2"]["points"] == first["3.2"]["max_points"]
    assert "excellent" not in (out / "grades.json").read_text()
