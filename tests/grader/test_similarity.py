"""The similarity report (grader/outputs/similarity.py): copied work, task by task.

Classes are made of the course's own code: the reference answers (grader/reference/manifest.json),
the corpus's correct and wrong cells (tests/corpus/), and copies of them disguised the way a
student hides copying (factory.disguised: variables renamed, comments gone, code laid out anew).
Most tests compare cells in this process (find_similar); one grades a small class and runs the
command line on its grade folder, as an instructor does.
"""
import ast
import html
import json
import os
import re
import subprocess
import sys

import pytest

from factory import CORPUS, REPO, benchmark, disguised, filled_notebook, manifest, run_grader, statements, write_notebook
from gptcourse.checking.tasks import all_tasks
from grader.grading import gradefolder
from grader.outputs import class_report
from grader.outputs.similarity import Rules, find_similar, release_boilerplate, student_cell

REFERENCE = {task_id: t["source"] for chapter in manifest().values() for task_id, t in chapter["tasks"].items()}


def corpus(task_id, prefix="correct_"):
    """{name: source} of the corpus cells of a task whose file name starts with `prefix`."""
    return {path.stem: path.read_text() for path in sorted((CORPUS / task_id).glob(f"{prefix}*.py"))}


def compare(task_id, sources, references=()):
    return find_similar({task_id: sources}, references)[task_id]


def flagged(result):
    return {(m.first, m.second) for m in result.pairs}


def local_names(source):
    """The variables that a cell's functions assign (their parameters left out)."""
    names = set()
    for function in (n for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)):
        parameters = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
        assigned = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        names |= assigned - parameters
    return names


# The course's shortest tasks: answers of four statements or fewer (15 of the 40 tasks).
SHORTEST = sorted((t.id for t in all_tasks() if statements(REFERENCE[t.id]) <= 4),
                  key=lambda t: statements(REFERENCE[t]))
LONGEST = sorted(REFERENCE, key=lambda t: -statements(REFERENCE[t]))[:5]


# ------------------------------------------------------------------------------------------
# Copied: found, renamed and reformatted
# ------------------------------------------------------------------------------------------

def class_with_a_copy():
    """Task 2.5 in a class of 14: five students wrote the book's CausalAttention (each in their
    own names and layout), eight each another correct one of their own (the corpus's), and a
    ninth copied the einsum one and disguised it."""
    sources = {f"book_{k}": disguised(REFERENCE["2.5"], prefix=f"v{k}") for k in range(5)}
    sources.update(corpus("2.5"))
    sources["copier"] = disguised(sources["correct_einsum"], prefix="z")
    return sources


def test_a_copied_cell_renamed_and_reformatted_is_found():
    sources = class_with_a_copy()
    original, copied = sources["correct_einsum"], sources["copier"]
    # Disguised: no variable of the original's functions keeps its name, no comment is left.
    assert local_names(original) and not local_names(original) & set(re.findall(r"\w+", copied))
    assert "#" in original and "#" not in copied

    result = compare("2.5", sources)
    assert flagged(result) == {("copier", "correct_einsum")}
    match = result.pairs[0]
    assert min(match.shares) > 0.8 and match.shared_tokens >= Rules().min_shared_tokens


def test_the_page_of_a_flagged_pair_marks_the_shared_passages():
    from grader.outputs.similarity import pair_page

    sources = class_with_a_copy()
    match = compare("2.5", sources).pairs[0]
    page = pair_page(match, sources[match.first], sources[match.second])
    columns = re.findall(r"<pre>(.*?)</pre>", page, flags=re.S)
    assert len(columns) == 2
    for column, source in zip(columns, (sources[match.first], sources[match.second])):
        # The whole cell as the student wrote it, with the shared passages marked: the einsums
        # that make this implementation unusual in the class.
        assert html.unescape(re.sub(r"</?mark>", "", column)) == source
        marked = html.unescape("".join(re.findall(r"<mark>(.*?)</mark>", column, flags=re.S)))
        assert "bqd,bkd->bqk" in marked and "bqk,bkd->bqd" in marked
    assert "not proof of copying" in page


def test_the_release_notebook_s_lines_are_never_marked():
    """The copier kept the stub's lines (class, def, super().__init__()): they are the release
    notebook's, so no shared passage covers them, even where one runs from the line before such a
    line to the line after it."""
    release = {line.strip() for c in read_release("02_attention") if c["type"] == "code"
               for line in c["source"].splitlines() if line.strip()}
    sources = class_with_a_copy()
    match = compare("2.5", sources).pairs[0]
    for owner, slices in zip((match.first, match.second), match.slices):
        source, position, checked = sources[owner], 0, 0
        for line in source.splitlines(keepends=True):
            start, end = position + len(line) - len(line.lstrip()), position + len(line.rstrip())
            if line.strip() in release:
                checked += 1
                assert not any(s < end and e > start for s, e in slices), (owner, line)
            position += len(line)
        assert checked >= 3  # the class and def lines, super().__init__()


def read_release(chapter):
    from grader.grading.submissions import read_notebook

    return read_notebook(str(REPO / "course" / f"{chapter}.ipynb")).cells


def test_a_part_copied_into_a_cell_of_ones_own_is_found():
    """Half of a cell taken from another student, the rest one's own: the copied half is most
    of the other's cell, so the pair is flagged on the other's share."""
    sources = corpus("2.5")
    own = sources["correct_einsum"]
    taken = disguised(sources["correct_bool_buffer_where"], prefix="w")
    sources["mixer"] = own + "\n\n" + taken.replace("class CausalAttention", "class _Unused")
    result = compare("2.5", sources)
    assert ("correct_bool_buffer_where", "mixer") in flagged(result)


# ------------------------------------------------------------------------------------------
# What is not meaningful: short answers everyone writes, the release notebook's own code
# ------------------------------------------------------------------------------------------

def test_the_shortest_tasks_are_the_short_ones():
    assert len(SHORTEST) >= 10 and "6.1" in SHORTEST and "4.2" in SHORTEST
    assert all(statements(REFERENCE[t]) <= 4 for t in SHORTEST)


@pytest.mark.parametrize("task_id", SHORTEST)
def test_two_students_with_the_same_short_answer_are_not_flagged(task_id):
    """Too few students for anything to be common: the minimum of shared code alone keeps an
    identical short answer (each student's names and layout) out of the report."""
    sources = {"ana": REFERENCE[task_id], "ben": disguised(REFERENCE[task_id], prefix="b")}
    assert flagged(compare(task_id, sources)) == set()


@pytest.mark.parametrize("task_id", LONGEST)
def test_two_students_with_the_same_long_answer_are_flagged(task_id):
    """The control of the test above: what keeps a short answer out is its length."""
    sources = {"ana": REFERENCE[task_id], "ben": disguised(REFERENCE[task_id], prefix="b")}
    assert flagged(compare(task_id, sources)) == {("ana", "ben")}


def test_a_class_that_all_wrote_the_same_answers_flags_nothing():
    """Six students, every task answered alike (each in their own names and layout): every
    passage is in every cell, so it is the common way of writing it, short task or long."""
    students = ["ana", "ben", "cleo", "dev", "eli", "fay"]
    by_task = {task_id: {s: disguised(source, prefix=s) for s in students} for task_id, source in REFERENCE.items()}
    results = find_similar(by_task)
    assert {task_id: flagged(r) for task_id, r in results.items() if r.pairs} == {}
    assert all(r.cells == 6 for task_id, r in results.items() if task_id != "6.1")


def test_a_common_answer_does_not_hide_a_pair_that_shares_more():
    """Five students wrote the reference's TransformerBlock; two others share an implementation
    of their own (a helper for the shortcuts): that pair alone is flagged."""
    sources = {f"s{k}": disguised(REFERENCE["4.4"], prefix=f"v{k}") for k in range(5)}
    unusual = corpus("4.4")["correct_residual_helper"]
    sources["ana"] = unusual
    sources["ben"] = disguised(unusual, prefix="q")
    result = compare("4.4", sources)
    assert flagged(result) == {("ana", "ben")}
    assert result.common > 0


def test_the_release_notebook_s_code_never_counts():
    """Two students paste the chapter's setup cell (imports, the example inputs) into their
    cells: that code is the release notebook's, so they share nothing of their own."""
    setup = release_cell("02_attention", "setup")
    ana = setup + "\n" + corpus("2.4")["correct_additive_mask"]
    ben = setup + "\n" + corpus("2.4")["correct_torch_where"]
    assert flagged(compare("2.4", {"ana": ana, "ben": ben})) == set()
    # The control: the same two cells with code that is not the release's in place of the setup.
    not_release = re.sub(r"0\.(\d)(\d)", r"0.\2\1", setup).replace("import math", "import math as m")
    assert not_release != setup
    shared_not_release = {"ana": not_release + "\n" + corpus("2.4")["correct_additive_mask"],
                          "ben": not_release + "\n" + corpus("2.4")["correct_torch_where"]}
    assert flagged(compare("2.4", shared_not_release)) == {("ana", "ben")}


def test_a_stub_left_as_released_has_no_code_of_its_own():
    stub = release_cell("04_gpt_model", "task_4_4")
    cell = student_cell("ana", stub, release_boilerplate("04_gpt_model"))
    assert cell.fingerprint.hashes == set()
    result = compare("4.4", {"ana": stub, "ben": stub, "cleo": REFERENCE["4.4"]})
    assert result.cells == 1 and result.pairs == []


def release_cell(chapter, grade_id):
    """The source of a cell of the release notebook, as every student got it."""
    return next(c["source"] for c in read_release(chapter) if c["grade_id"] == grade_id)


# ------------------------------------------------------------------------------------------
# Reference folders: reported apart
# ------------------------------------------------------------------------------------------

BOOK_FILE = ("import torch\nimport torch.nn as nn\n\n\n{}\n\n\n"
             "def unrelated(n):\n    return [i * i for i in range(n) if i % 2]\n")


def test_a_cell_that_matches_a_reference_file_is_reported_apart():
    book_code = corpus("3.2")["correct_book_style"]
    sources = {name: source for name, source in corpus("3.2").items() if name != "correct_book_style"}
    sources["reader"] = disguised(book_code, prefix="r")
    result = compare("3.2", sources, [("book/ch03.py", BOOK_FILE.format(book_code))])
    found = {m.first: m for m in result.references}
    assert found["reader"].second == "book/ch03.py"
    assert found["reader"].reference and found["reader"].shares[1] is None
    assert found["reader"].shares[0] > 0.8
    # The reference comparison comes before the common-passage rule: a cell that is the book's
    # code with one line more (an assert) is the book's code too, whoever else wrote it.
    assert set(found) == {"reader", "correct_assert_divisible"}
    assert not any("book/ch03.py" in pair for pair in flagged(result))


def test_reference_folders_are_read_file_by_file(tmp_path):
    from grader.outputs.similarity import reference_files

    (tmp_path / "book" / "ch03").mkdir(parents=True)
    (tmp_path / "book" / "ch03" / "mha.py").write_text("x = 1\n")
    write_notebook(filled_notebook("03_multihead_attention"), tmp_path / "book" / "last_year.ipynb")
    (tmp_path / "book" / "notes.txt").write_text("not code")
    found = dict(reference_files([tmp_path / "book"]))
    assert sorted(found) == ["book/ch03/mha.py", "book/last_year.ipynb"]
    assert REFERENCE["3.2"].strip() in found["book/last_year.ipynb"]


# ------------------------------------------------------------------------------------------
# The command line on a graded class, and the class report
# ------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """Chapter 02, six students: the reference everywhere but for 2.5, where ana and ben share
    one implementation (ben's renamed and reformatted), cleo wrote the book's, and the others
    each their own. A reference folder holds the book's code."""
    root = tmp_path_factory.mktemp("similarity")
    answers = corpus("2.5")
    own = {"ana": answers["correct_einsum"], "ben": disguised(answers["correct_einsum"], prefix="b"),
           "cleo": disguised(answers["correct_book_style"], prefix="c"), "dev": answers["correct_sdpa"],
           "eli": answers["correct_functional_dropout"], "fay": answers["correct_bool_buffer_where"]}
    for student, source in own.items():
        notebook = filled_notebook("02_attention", {"2.5": source})
        write_notebook(notebook, root / "class" / student / "02_attention.ipynb")
    (root / "book").mkdir()
    (root / "book" / "ch03.py").write_text(BOOK_FILE.format(answers["correct_book_style"]))
    out = root / "out"
    run_grader([root / "class"], out, "--jobs", "2", "--device", "cpu", "--seed", "7")
    command = [sys.executable, "-m", "grader", "similarity", str(out), "--reference", str(root / "book"), "--jobs", "2"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=600)
    assert result.returncode == 0, result.stderr
    return out, result.stdout


@pytest.mark.slow  # a real grade run of the class (module fixture)
def test_the_command_writes_what_it_found(graded_class):
    out, printed = graded_class
    data = json.loads((out / gradefolder.SIMILARITY).read_text())
    by_task = {t["task"]: t for t in data["tasks"]}
    assert sorted(by_task) == ["2.1", "2.2", "2.3", "2.4", "2.5"]
    assert [(p["first"], p["second"]) for p in by_task["2.5"]["pairs"]] == [("ana", "ben")]
    assert [(m["first"], m["second"]) for m in by_task["2.5"]["references"]] == [("cleo", "book/ch03.py")]
    assert all(not t["pairs"] for task_id, t in by_task.items() if task_id != "2.5")  # the reference: common
    # The book's file holds a CausalAttention, which Task 2.3's reference answer mostly is: the six
    # who wrote it match the book's code (the reference comparison comes before the common rule).
    assert {m["first"] for m in by_task["2.3"]["references"]} == {"ana", "ben", "cleo", "dev", "eli", "fay"}
    page = out / by_task["2.5"]["pairs"][0]["page"]
    assert page.is_file() and "<mark>" in page.read_text()
    assert (out / by_task["2.5"]["references"][0]["page"]).is_file()
    assert "1 pair(s) of students flagged in 1 task(s), 7 cell(s) matching a reference file" in printed


@pytest.mark.slow  # a real grade run of the class (module fixture)
def test_the_class_report_lists_pairs_and_reference_matches_apart(graded_class):
    out, _ = graded_class
    page = (out / "report.html").read_text()
    section = page[page.index('<h2 id="similarity">'):]
    pairs = re.findall(r'<tr class="pair"><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>', section)
    assert pairs == [("2.5", "ana", "ben")]
    references = re.findall(r'<tr class="reference"><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>', section)
    assert ("2.5", "cleo", "book/ch03.py") in references and len(references) == 7
    assert "information, not an accusation" in section
    assert section.index("Pairs of students") < section.index("Matches with reference code")
    # The report command keeps the section (it reads similarity.json again).
    subprocess.run([sys.executable, "-m", "grader", "report", str(out)], check=True, cwd=REPO, capture_output=True)
    assert re.findall(r'<tr class="pair"><td>([^<]*)</td>', (out / "report.html").read_text()) == ["2.5"]


@pytest.mark.slow  # a real grade run of the class (module fixture)
def test_the_same_class_gives_the_same_findings_in_any_process(graded_class):
    """copydetect hashes with Python's hash(), which each process seeds anew: what is found must
    not depend on it (grader/outputs/similarity.py, NOISE_TOKENS)."""
    out, _ = graded_class
    first = json.loads((out / gradefolder.SIMILARITY).read_text())["tasks"]
    for seed in ("1", "2"):
        environment = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-m", "grader", "similarity", str(out), "--reference",
                        str(out.parent / "book"), "--jobs", "1"], check=True, cwd=REPO, capture_output=True,
                       env=environment, timeout=600)
        assert json.loads((out / gradefolder.SIMILARITY).read_text())["tasks"] == first


def test_a_report_before_the_comparison_says_how_to_make_it(tmp_path):
    records = [{"submission": "ana", "chapter": "02_attention", "task": "2.1", "status": "passed", "points": 1,
                "max_points": 1, "notebook_sha": "a"}]
    page = class_report.render(records, str(tmp_path), {})
    assert "Not computed." in page and "python -m grader similarity" in page


def test_the_report_says_when_the_comparison_is_older_than_the_grades(tmp_path):
    records = [{"submission": s, "chapter": "02_attention", "task": "2.1", "status": "passed", "points": 1,
                "max_points": 1, "notebook_sha": sha} for s, sha in (("ana", "new"), ("ben", "b"))]
    (tmp_path / gradefolder.SIMILARITY).write_text(json.dumps({
        "notebooks": {"ana": {"02_attention": "old"}, "ben": {"02_attention": "b"}}, "tasks": [], "rules": {}}))
    page = class_report.render(records, str(tmp_path), {})
    section = page[page.index('<h2 id="similarity">'):]
    assert "before the last grade run: the notebooks of ana are not those compared" in section


def test_a_notebook_changed_since_grading_is_named_and_is_not_taken_for_a_new_grade_run(tmp_path):
    """ben replaced his notebook after grading: the comparison reads the file as it is, and the
    report names it, without saying that the grades are newer than the comparison."""
    from grader.outputs.similarity import similarity_report

    bench = benchmark("similarity_bench")
    for student in ("ana", "ben"):
        write_notebook(filled_notebook("02_attention"), tmp_path / "class" / student / "02_attention.ipynb")
    bench.write_grade_folder(tmp_path / "out", tmp_path / "class", seed=1)
    changed = filled_notebook("02_attention", {"2.5": corpus("2.5")["correct_einsum"]})
    write_notebook(changed, tmp_path / "class" / "ben" / "02_attention.ipynb")
    similarity_report(str(tmp_path / "out"))

    data = json.loads((tmp_path / "out" / gradefolder.SIMILARITY).read_text())
    assert data["changed_since_grading"] == ["ben (02_attention)"]
    section = (tmp_path / "out" / "report.html").read_text()
    section = section[section.index('<h2 id="similarity">'):]
    assert "had changed on disk since they were graded" in section and "ben (02_attention)" in section
    assert "before the last grade run" not in section


def test_the_similarity_section_escapes_names_and_links_only_its_own_pages(tmp_path):
    hostile = '<script>alert("x")</script>'
    (tmp_path / gradefolder.SIMILARITY).write_text(json.dumps({"tasks": [{"task": "2.5", "cells": 2, "pairs": [
        {"first": hostile, "second": "ben", "shares": [0.9, 0.8], "shared_tokens": 120, "page": "javascript:alert(1)"},
        {"first": "cleo", "second": "dan", "shares": [0.9, 0.8], "shared_tokens": 120,
         "page": "similarity/2.5/c--d.html"},
    ]}]}))
    page = class_report.render([{"submission": "ben", "chapter": "02_attention", "task": "2.5", "status": "passed",
                                 "points": 1, "max_points": 1}], str(tmp_path), {})
    assert hostile not in page and html.escape(hostile) in page
    assert "javascript:" not in page and 'href="similarity/2.5/c--d.html"' in page


def test_the_class_report_lists_a_group_with_its_members(tmp_path):
    hostile = '<b>eve</b>'
    (tmp_path / gradefolder.SIMILARITY).write_text(json.dumps({"rules": {"group_share": 1 / 3}, "tasks": [
        {"task": "2.5", "cells": 30, "pairs": [], "groups": [
            {"members": ["ana", "ben", "cleo", "dev", hostile], "shared_tokens": 180, "references": []},
            {"members": "not a list", "shared_tokens": 1}]}]}))
    page = class_report.render([{"submission": "ana", "chapter": "02_attention", "task": "2.5", "status": "passed",
                                 "points": 1, "max_points": 1}], str(tmp_path), {})
    rows = re.findall(r'<tr class="group"><td>([^<]*)</td><td>([^<]*)</td><td class="num">(\d+)</td>', page)
    assert rows == [("2.5", "ana, ben, cleo, dev, " + html.escape(hostile), "5")]
    assert "Groups of students" in page and "at most 33% of the class" in page


def test_the_command_says_what_is_missing(tmp_path):
    result = subprocess.run([sys.executable, "-m", "grader", "similarity", str(tmp_path)], capture_output=True,
                            text=True, cwd=REPO, timeout=120)
    assert result.returncode == 2 and "grades.json does not exist" in result.stderr


# ------------------------------------------------------------------------------------------
# The benchmark (benchmarks/similarity_bench.py), small
# ------------------------------------------------------------------------------------------

def test_the_benchmark_flags_only_its_planted_copies_when_everyone_else_wrote_the_book_s_answers(tmp_path):
    bench = benchmark("similarity_bench")
    figures = bench.main(["--students", "8", "--copies", "2", "--corpus-share", "0", "--jobs", "2",
                          "--workdir", str(tmp_path), "--out-json", str(tmp_path / "figures.json")])
    assert figures["cells"] == 8 * len(REFERENCE) and figures["planted"] == 2
    assert figures["planted_found"] >= 1
    assert figures["pairs"] == figures["planted_found"]  # nothing else is flagged
    assert json.loads((tmp_path / "figures.json").read_text()) == figures


# ------------------------------------------------------------------------------------------
# Rings: a leaked answer shared by a group
# ------------------------------------------------------------------------------------------

def class_of_30_with_a_ring(size):
    """Task 2.5 in a class of 30: a ring of `size` students who share one answer (each in their
    own names and layout), the others each with an answer of their own (the corpus's correct ones,
    and the book's written by a handful, also in their own names)."""
    own = list(corpus("2.5").values())
    leaked = corpus("2.5")["correct_einsum"]
    sources = {f"ring_{k}": disguised(leaked, prefix=f"r{k}") for k in range(size)}
    others = [source for name, source in corpus("2.5").items() if name != "correct_einsum"]
    for k in range(30 - size):
        base = others[k % len(others)] if k < len(others) else REFERENCE["2.5"]
        sources[f"s{k:02d}"] = disguised(base, prefix=f"q{k}")
    assert len(sources) == 30 and own
    return sources


@pytest.mark.parametrize("size", [3, 5, 8])
def test_a_ring_of_three_five_or_eight_is_reported_with_its_members(size):
    result = compare("2.5", class_of_30_with_a_ring(size))
    rings = [g for g in result.groups if any(m.startswith("ring_") for m in g.members)]
    assert len(rings) == 1 and rings[0].members == sorted(f"ring_{k}" for k in range(size)), result.groups
    assert rings[0].shared_tokens >= 90
    if size == 3:  # below rule 2's five: the pairs are listed too, as before
        assert {(a, b) for a, b in flagged(result) if a.startswith("ring_")} == {
            (f"ring_{a}", f"ring_{b}") for a in range(3) for b in range(a + 1, 3)}


def test_a_class_that_all_wrote_the_same_answer_is_no_group():
    students = ["ana", "ben", "cleo", "dev", "eli", "fay"]
    result = compare("2.5", {s: disguised(REFERENCE["2.5"], prefix=s) for s in students})
    assert result.groups == [] and flagged(result) == set()


def test_a_group_whose_code_is_a_reference_file_says_so():
    """A ring of five who share last year's answer, and last year's answers given as a reference
    folder: the group names the file its members all match."""
    leaked = corpus("2.5")["correct_einsum"]
    sources = class_of_30_with_a_ring(0)
    sources.update({f"ring_{k}": disguised(leaked, prefix=f"r{k}") for k in range(5)})
    for name in list(sources)[:5]:
        del sources[name]  # a class of 30 again
    result = compare("2.5", sources, [("last_year/alice.py", BOOK_FILE.format(leaked))])
    rings = [g for g in result.groups if g.members[0].startswith("ring_")]
    assert rings and rings[0].references == ["last_year/alice.py"], result.groups
