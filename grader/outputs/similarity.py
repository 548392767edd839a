"""Copied work: the pairs of students whose task cells are more alike than writing the same
answer explains, task by task, and the cells that match code given as a reference.

    python -m grader similarity DIR [--reference FOLDER ...] [--threshold SHARE]

DIR is the folder a grade run wrote: its run.json says where the submissions are, its
grades.json which notebooks were graded. For every graded task, each student's task cell (found
the way the grader finds it, grader/grading/submissions.py) is compared with every other student's, and
with every file of the --reference folders (last year's submissions, the book's public code).
Written: DIR/similarity.json (what was found), DIR/similarity/<task>/<a>--<b>.html (a page per
flagged pair, the two cells side by side with the shared passages marked) and DIR/report.html
again, whose "Similar work" section lists them (grader/outputs/class_report.py).

The comparison is copydetect's (MOSS-style fingerprints): each cell is tokenised by Pygments'
Python lexer, with every name, attribute and string reduced to one letter and comments and
layout dropped (renaming a variable or reformatting the code changes nothing), its k-grams are
hashed into fingerprints, and two cells share a passage where they share fingerprints. What
this module decides is which shared fingerprints count, and when a pair is worth an
instructor's time:

1. the release notebook's own code never counts: each line of a cell that the chapter's release
   notebook also has (the stub, its signature and docstring, the imports of the setup cell) is
   blanked before fingerprinting, and any fingerprint of the release notebook's code is dropped
   (which catches the release's code laid out on other lines);
2. what much of the class wrote does not count: a fingerprint found in the cells of at least
   `common_cells` students, and of at least `common_share` of the task's cells, is the common way
   of writing that passage (MOSS ignores such passages the same way). A task whose answer is a few
   lines that everyone writes alike thus has nothing left to compare;
3. a pair is flagged when the passages its two cells share, after 1 and 2, make at least
   `min_shared_tokens` tokens (filtered characters: `self.W = x` is `self.V=V`, 8 tokens) and at
   least `threshold` of one of the two cells' own code. The minimum keeps two identical answers
   of a short task out of the report when the class is too small for rule 2 (the reference
   answers of the course's tasks of four statements or fewer have at most 83 such tokens):
   identical short answers are what students who worked alone write too.

4. rule 2 would hide a ring: five students who share one leaked answer share passages that five
   students wrote alike. So before it, the students who hold exactly the same passages, found
   in no other student's cell, form a group when those passages pass rule 3's measures; a group
   of at least `group_cells` students and at most `group_share` of the task's cells is reported
   with its members. More than that share is the class's common way of writing the answer, and
   never a group.

A cell matched to a --reference file is reported apart, with the share of the student's own code
found there: "matches the book's code" is information for the instructor, not an accusation. The
reference files are compared before rule 2 too (the book's code stays the book's however many
students wrote it), and a group whose members all match one reference file says so.

copydetect hashes with Python's hash(), whose values differ from one process to the next: the
fingerprints of one task are all made in one process, and every k-gram is kept (NOISE_TOKENS), so
that what is found does not depend on those values.
"""
import argparse
import functools
import html
import io
import json
import os
import shutil
import sys
from dataclasses import dataclass, field
from itertools import combinations

import numpy as np

from gptcourse.checking.tasks import get_task, tasks_of
from grader import paths
from grader.grading import gradefolder
from grader.grading.gradefolder import safe_name, write_atomically

# A passage shorter than NOISE_TOKENS filtered characters is never a match (copydetect's default).
# Its default guarantee threshold (30) winnows with a window of 6: which fingerprints a cell keeps
# then depends on the values of Python's hash(), which change from one process to the next, and
# so did the shares by a few percent, enough to move a pair across the threshold from one run to
# the next. With the guarantee threshold equal to the noise threshold (copydetect's setting for
# "computation time is not an issue") every k-gram is a fingerprint: the same cells give the same
# report in any process, for about a third more time.
NOISE_TOKENS = 25
GUARANTEE_TOKENS = 25
REFERENCE_CONTEXT_LINES = 6  # lines shown around each match in a reference file's column


@dataclass(frozen=True)
class Rules:
    """When a shared passage counts and a pair is flagged (the module's docstring says why)."""
    threshold: float = 0.5  # share of one cell's own code found in the other
    min_shared_tokens: int = 90
    common_cells: int = 5  # a fingerprint in this many students' cells ...
    common_share: float = 0.05  # ... and in this share of the task's cells is common
    group_cells: int = 3  # a group: at least this many students whose cells are alike pairwise ...
    group_share: float = 1 / 3  # ... and at most this share of the task's cells (more is the class's way)

    def common_count(self, cells):
        """In how many of a task's `cells` cells a fingerprint must be to be common."""
        return max(self.common_cells, self.common_share * cells)


@dataclass
class Cell:
    """One piece of code compared: a student's task cell or a reference file."""
    owner: str  # the submission id, or the reference file's label
    source: str  # as written: what the pages show, and what the matches' positions refer to
    fingerprint: object  # copydetect's CodeFingerprint of the source without its boilerplate lines
    boilerplate: list = field(default_factory=list)  # [(start, end)] of its lines the release also has
    # Per token of fingerprint.filtered_code: whether it is part of a passage that never counts
    # (the release notebook's code, a passage common in the class). None: every token counts.
    not_own: object = None
    own: int = 0  # tokens of code of its own: covered by a fingerprint, and none of not_own


@dataclass
class Match:
    """Two cells of one task that share passages, after boilerplate and common passages."""
    task: str
    first: str  # a submission
    second: str  # another submission, or a reference file's label
    shares: tuple  # (share of first's own code found in second, of second's in first; None for a reference)
    shared_tokens: int  # tokens of own code shared (the smaller of the two sides' counts)
    reference: bool = False
    slices: tuple = ([], [])  # the shared passages, [(start, end)] in first's source and in second's
    page: str = None  # its side-by-side page, relative to DIR, once written

    def to_json(self):
        return {"first": self.first, "second": self.second, "shares": [_rounded(s) for s in self.shares],
                "shared_tokens": self.shared_tokens, "page": self.page}


@dataclass
class Group:
    """Students of one task who share passages no one else wrote (before the common filter): a
    ring that rule 2 would hide once it has five members."""
    task: str
    members: list  # submission ids, sorted
    shared_tokens: int  # the fewest tokens of a member's own code in the passages only the group holds
    references: list = field(default_factory=list)  # reference files every member's cell matches

    def to_json(self):
        return {"members": self.members, "shared_tokens": self.shared_tokens, "references": self.references}


@dataclass
class TaskResult:
    task: str
    cells: int  # students whose cell has code of their own (not only the release's)
    common: int  # fingerprints dropped as common in the class
    pairs: list = field(default_factory=list)  # flagged Matches between students, most alike first
    references: list = field(default_factory=list)  # flagged Matches with reference files
    groups: list = field(default_factory=list)  # Groups of students, largest first


class SimilarityError(Exception):
    """The similarity report cannot be made (the message says why and what to do)."""


def _rounded(share):
    return None if share is None else round(float(share), 3)


# ------------------------------------------------------------------------------------------
# Fingerprints (copydetect), without the release notebook's code
# ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Boilerplate:
    """A chapter's release notebook code: its lines (stripped) and its fingerprints."""
    lines: frozenset
    hashes: frozenset


@functools.lru_cache(maxsize=None)
def release_boilerplate(chapter):
    """The code cells of course/<chapter>.ipynb, the notebook every student started from."""
    from grader.grading.submissions import read_notebook

    notebook = read_notebook(os.path.join(paths.COURSE, f"{chapter}.ipynb"))
    if notebook.error:
        raise SimilarityError(f"the release notebook of {chapter} could not be read ({notebook.error}): "
                              f"it is the boilerplate that never counts; run `python -m grader build`")
    code = "\n\n".join(cell["source"] for cell in notebook.cells if cell["type"] == "code")
    lines = frozenset(line.strip() for line in code.splitlines() if line.strip())
    hashes = frozenset(_fingerprint(code).hashes)
    return Boilerplate(lines, hashes)


def _fingerprint(text):
    """copydetect's fingerprint of Python code; the window GUARANTEE_TOKENS - NOISE_TOKENS + 1 is 1:
    every k-gram is kept."""
    from copydetect import CodeFingerprint

    window = GUARANTEE_TOKENS - NOISE_TOKENS + 1
    return CodeFingerprint("cell.py", NOISE_TOKENS, window, fp=io.StringIO(text), language="python")


def boilerplate_spans(source, boilerplate):
    """[(start, end)] of each line of the source that the release notebook also has."""
    spans, position = [], 0
    for line in source.splitlines(keepends=True):
        text = line.rstrip("\r\n")
        if text.strip() in boilerplate.lines:
            spans.append((position, position + len(text)))
        position += len(line)
    return spans


def blanked(source, spans):
    """The source with each span replaced by as many spaces: the tokeniser skips them, and every
    other character keeps its position (the pages mark the shared passages in the source as
    written)."""
    parts, position = [], 0
    for start, end in spans:
        parts += [source[position:start], " " * (end - start)]
        position = end
    return "".join(parts) + source[position:]


def student_cell(owner, source, boilerplate):
    """A student's task cell, fingerprinted without the release notebook's lines, and with the
    release notebook's fingerprints dropped (its code laid out on other lines)."""
    spans = boilerplate_spans(source, boilerplate)
    fingerprint = _fingerprint(blanked(source, spans))
    cell = Cell(owner, source, fingerprint, spans, np.zeros(len(fingerprint.filtered_code), dtype=bool))
    drop_fingerprints(cell, boilerplate.hashes)
    return cell


class References:
    """The reference files, fingerprinted whole, and which of them hold each fingerprint.

    Nothing is dropped from a reference: a match needs the student's cell to have the
    fingerprint too, and the student's cells have neither boilerplate nor common passages."""

    def __init__(self, files=()):
        self.cells = [Cell(label, code, _fingerprint(code)) for label, code in files]
        self.holders = {}
        for index, cell in enumerate(self.cells):
            for h in cell.fingerprint.hashes:
                self.holders.setdefault(h, set()).add(index)

    def sharing_with(self, cell):
        """The reference Cells that share at least one fingerprint with `cell`, in file order."""
        found = set().union(*(self.holders.get(h, ()) for h in cell.fingerprint.hashes))
        return [self.cells[index] for index in sorted(found)]


def covered(cell, hashes):
    """Which tokens of the cell's filtered code the k-grams of `hashes` cover (a bool array)."""
    fp = cell.fingerprint
    starts = np.array([p for h in hashes for p in fp.hash_idx.get(h, ())], dtype=int)
    mask = np.zeros(len(fp.filtered_code), dtype=bool)
    if len(starts):
        for offset in range(fp.k):
            mask[starts + offset] = True
    return mask


def drop_fingerprints(cell, hashes):
    """Remove `hashes` from the cell's fingerprints; every token they cover stops counting as the
    cell's own code, also where a fingerprint that stays covers it too: a passage shared across
    the edge of a common one counts only its tokens beyond that edge.

    (copydetect can drop boilerplate itself, but it then also drops the second occurrence of
    any passage that a cell repeats: its numpy intersection assumes unique hashes.)"""
    fp = cell.fingerprint
    dropped = hashes.intersection(fp.hash_idx)
    if dropped:
        cell.not_own |= covered(cell, dropped)
        fp.hash_idx = {h: where for h, where in fp.hash_idx.items() if h not in dropped}
        fp.hashes = set(fp.hash_idx)
    cell.own = own_tokens(cell, fp.hashes)


def own_tokens(cell, hashes):
    """How many tokens of the cell's own code the k-grams of `hashes` cover."""
    mask = covered(cell, hashes)
    if cell.not_own is not None:
        mask &= ~cell.not_own
    return int(mask.sum())


# ------------------------------------------------------------------------------------------
# Comparing the cells of one task
# ------------------------------------------------------------------------------------------

def compare_task(task_id, sources, references=None, rules=Rules()):
    """The TaskResult of one task: `sources` is {submission: task cell source}, `references`
    the References (fingerprinted once for all tasks) or None."""
    boilerplate = release_boilerplate(get_task(task_id).chapter)
    cells = [student_cell(owner, source, boilerplate) for owner, source in sorted(sources.items())]
    cells = [cell for cell in cells if cell.own]  # a stub left as released has no code of its own
    holders = fingerprint_holders(cells)  # the class's fingerprints before rule 2, counted once
    common = common_fingerprints(holders, len(cells), rules)
    result = TaskResult(task_id, len(cells), len(common))
    # Before the common passages are dropped: a passage of a reference file that much of the
    # class shares is still that file's, and a ring of copies is still a ring.
    if references:
        result.references = reference_matches(task_id, cells, references, rules)
    result.groups = shared_groups(task_id, cells, holders, rules, result.references)
    for cell in cells:
        drop_fingerprints(cell, common)
    cells = [cell for cell in cells if cell.own]  # nothing left but what the class wrote alike
    for first, second in candidate_pairs(cells):
        match = compare(task_id, first, second)
        if match and is_meaningful(match, rules):
            result.pairs.append(with_passages(match, first, second))
    result.pairs.sort(key=lambda m: (-max(m.shares), -m.shared_tokens, m.first, m.second))
    return result


def shared_groups(task_id, cells, holders, rules, reference_found=()):
    """The groups of at least `group_cells` students, at most `group_share` of the task's cells,
    who share passages that no one else wrote: rule 2 drops what five students share, so five
    copies of one leaked answer would otherwise show nothing. A group is the students that hold
    exactly the same fingerprints, found in no other cell, when those cover at least
    `min_shared_tokens` of each member's own code and `threshold` of one member's (rule 3's
    measures). What more than `group_share` of the class writes is the common way of writing it.
    `holders`: fingerprint_holders(cells)."""
    most = max(rules.group_cells, rules.group_share * len(cells))
    by_holders = {}
    for h, indices in holders.items():
        if rules.group_cells <= len(indices) <= most:
            by_holders.setdefault(frozenset(indices), set()).add(h)
    found = []
    for indices, hashes in by_holders.items():
        tokens = {i: own_tokens(cells[i], hashes) for i in indices}
        shares = [tokens[i] / cells[i].own for i in indices]
        if min(tokens.values()) >= rules.min_shared_tokens and max(shares) >= rules.threshold:
            found.append((indices, min(tokens.values())))
    # A group inside a larger one (two members changed a part alike) is the larger one's.
    found = [(indices, tokens) for indices, tokens in found if not any(indices < other for other, _ in found)]
    by_file = {}
    for match in reference_found:
        by_file.setdefault(match.second, set()).add(match.first)
    groups = []
    for indices, tokens in found:
        owners = sorted(cells[i].owner for i in indices)
        files = sorted(name for name, matched in by_file.items() if set(owners) <= matched)
        groups.append(Group(task_id, owners, tokens, files))
    groups.sort(key=lambda g: (-len(g.members), g.members))
    return groups


def fingerprint_holders(cells):
    """{fingerprint: the indices of the cells that hold it}, in cell order."""
    holders = {}
    for index, cell in enumerate(cells):
        for h in cell.fingerprint.hashes:
            holders.setdefault(h, []).append(index)
    return holders


def common_fingerprints(holders, cells, rules):
    """The fingerprints found in so many of the class's `cells` cells (`holders`:
    fingerprint_holders of them) that they are the common way of writing that passage."""
    limit = rules.common_count(cells)
    return frozenset(h for h, indices in holders.items() if len(indices) >= limit)


def candidate_pairs(cells):
    """The pairs of cells that share at least one fingerprint (all others share nothing), each
    once, in a stable order. Common fingerprints are gone, so no fingerprint is in many cells."""
    pairs = {pair for indices in fingerprint_holders(cells).values() for pair in combinations(indices, 2)}
    return [(cells[a], cells[b]) for a, b in sorted(pairs)]


def compare(task_id, first, second, reference=False):
    """The Match of two cells, or None when they share no fingerprint. The shares are of each
    cell's own code (Cell.own); for a reference file, only the student's cell (first) counts."""
    shared = first.fingerprint.hashes & second.fingerprint.hashes
    if not shared:
        return None
    first_shared = own_tokens(first, shared)
    if reference:
        return Match(task_id, first.owner, second.owner, (first_shared / first.own, None), first_shared, True)
    second_shared = own_tokens(second, shared)
    return Match(task_id, first.owner, second.owner, (first_shared / first.own, second_shared / second.own),
                 min(first_shared, second_shared))


def with_passages(match, first, second):
    """The match with the passages its two cells share, in each source (copydetect's
    compare_files maps them from the tokens back to the code as written)."""
    from copydetect import compare_files

    _, _, (slices_first, slices_second) = compare_files(first.fingerprint, second.fingerprint)
    match.slices = (_marked(first, slices_first), _marked(second, slices_second))
    return match


def _marked(cell, slices):
    """copydetect's 2 x N array of shared passages as [(start, end)], without the cell's
    boilerplate lines: a passage that runs over a blanked line (it joined the code before and
    after it) is cut there, so that a page never marks the release notebook's code."""
    marked = []
    for start, end in zip(map(int, slices[0]), map(int, slices[1])):
        for span_start, span_end in cell.boilerplate:
            if span_end <= start or span_start >= end:
                continue
            if span_start > start:
                marked.append((start, span_start))
            start = max(start, span_end)
        if start < end:
            marked.append((start, end))
    return [(start, end) for start, end in marked if cell.source[start:end].strip()]


def is_meaningful(match, rules):
    """Rule 3 of the module's docstring: enough shared tokens, and enough of one cell's own code."""
    shares = [s for s in match.shares if s is not None]
    return match.shared_tokens >= rules.min_shared_tokens and max(shares) >= rules.threshold


def reference_matches(task_id, cells, references, rules):
    """The student cells of a task that match a reference file, most alike first."""
    found = []
    for cell in cells:
        for reference in references.sharing_with(cell):
            match = compare(task_id, cell, reference, reference=True)
            if match and is_meaningful(match, rules):
                found.append(with_passages(match, cell, reference))
    found.sort(key=lambda m: (-m.shares[0], -m.shared_tokens, m.first, m.second))
    return found


# ------------------------------------------------------------------------------------------
# Reading the class (from a grade folder) and the reference folders
# ------------------------------------------------------------------------------------------

@dataclass
class ClassCells:
    by_task: dict  # {task id: {submission: cell source}}
    notebooks: dict  # {submission: {chapter: sha256 of the notebook as graded}}, for the report
    changed: list  # "submission (chapter)" of notebooks whose file changed since grading: read as they are now


def class_cells(out_dir):
    """The task cells of the notebooks that DIR's grade run graded, read again from where run.json
    says they are (grade folders do not keep the students' code)."""
    from grader.grading.submissions import discover, find_task_cell, graded_notebooks

    records = gradefolder.read_grades(out_dir)
    run = gradefolder.read_run(out_dir)
    graded = {(r.get("submission"), r.get("chapter")): r.get("notebook_sha") for r in records}
    where = run.get("paths")
    if not where or not isinstance(where, list) or not all(isinstance(p, str) for p in where):
        raise SimilarityError(f"{os.path.join(out_dir, gradefolder.RUN)} does not record which submissions "
                              f"were graded: grade them again with `python -m grader grade PATH... --out {out_dir}`")
    missing = [p for p in where if not os.path.lexists(p)]
    if missing:
        raise SimilarityError(f"the graded submissions are no longer at {', '.join(missing)}: the similarity "
                              f"report reads the students' cells from there")
    found = ClassCells({}, {}, [])
    for submission in discover(where, os.path.join(out_dir, ".unpacked")):
        for notebook in graded_notebooks(submission):
            key = (submission.id, notebook.chapter)
            if key not in graded or notebook.error:
                continue
            if notebook.sha != graded[key]:
                found.changed.append(f"{submission.id} ({notebook.chapter})")
            found.notebooks.setdefault(submission.id, {})[notebook.chapter] = graded[key]
            for task in tasks_of(notebook.chapter):
                source, _ = find_task_cell(notebook, task.id)
                if source and source.strip():
                    found.by_task.setdefault(task.id, {})[submission.id] = source
    return found


REFERENCE_SUFFIXES = (".py", ".ipynb")


def reference_files(folders):
    """[(label, code)] of every .py file and notebook under the folders; a notebook's code is its
    code cells, one after the other. The label is the folder's name and the file's path in it."""
    from grader.grading.submissions import read_notebook

    found = []
    for folder in folders:
        if not os.path.isdir(folder):
            raise SimilarityError(f"--reference {folder}: no such folder")
        base = os.path.basename(os.path.normpath(os.path.abspath(folder)))
        for here, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__MACOSX")
            for name in sorted(files):
                if name.startswith(".") or not name.lower().endswith(REFERENCE_SUFFIXES):
                    continue
                path = os.path.join(here, name)
                label = f"{base}/{os.path.relpath(path, folder)}"
                if name.lower().endswith(".ipynb"):
                    notebook = read_notebook(path)
                    code = "\n\n".join(c["source"] for c in notebook.cells if c["type"] == "code")
                else:
                    with open(path, encoding="utf-8", errors="replace") as f:
                        code = f.read()
                if code.strip():
                    found.append((label, code))
    return found


# ------------------------------------------------------------------------------------------
# The whole run: compare, then write similarity.json, the pages and the class report
# ------------------------------------------------------------------------------------------

def find_similar(by_task, references=(), rules=Rules(), jobs=1):
    """{task id: TaskResult} for {task id: {submission: source}} and [(label, code)] references.

    Tasks are independent, so with jobs > 1 a pool of processes compares them, the largest
    first. Each task is compared whole in one process: copydetect's fingerprints are made with
    Python's hash(), whose values differ from one process to the next, so fingerprints never
    travel between processes (each process fingerprints the references once for itself)."""
    work = sorted(by_task.items(), key=lambda item: -sum(len(source) for source in item[1].values()))
    if jobs <= 1 or len(work) <= 1:
        _start_comparing(references, rules)
        results = [_compare_one(item) for item in work]
    else:
        import multiprocessing

        with multiprocessing.Pool(min(jobs, len(work)), initializer=_start_comparing,
                                  initargs=(references, rules)) as pool:
            results = list(pool.imap_unordered(_compare_one, work))
    return {result.task: result for result in sorted(results, key=lambda r: _task_order(r.task))}


# What a comparing process holds for all its tasks (set by _start_comparing): the References,
# fingerprinted in that process, and the rules.
_COMPARING = {}


def _start_comparing(references, rules):
    _COMPARING["references"] = References(references) if references else None
    _COMPARING["rules"] = rules


def _compare_one(item):
    task_id, sources = item
    return compare_task(task_id, sources, _COMPARING["references"], _COMPARING["rules"])


def _task_order(task_id):
    return tuple(int(part) if part.isdigit() else 0 for part in str(task_id).split("."))


def similarity_report(out_dir, reference_folders=(), rules=Rules(), jobs=1):
    """Compare the class of DIR and write what was found; returns {task id: TaskResult}."""
    cells = class_cells(out_dir)
    references = reference_files(reference_folders)
    results = find_similar(cells.by_task, references, rules, jobs)
    write_pages(out_dir, cells.by_task, dict(references), results)
    summary = {
        "library": _library(),
        "rules": {"threshold": rules.threshold, "min_shared_tokens": rules.min_shared_tokens,
                  "common_cells": rules.common_cells, "common_share": rules.common_share,
                  "group_cells": rules.group_cells, "group_share": rules.group_share,
                  "noise_tokens": NOISE_TOKENS, "guarantee_tokens": GUARANTEE_TOKENS},
        "references": [os.path.abspath(f) for f in reference_folders],
        "notebooks": cells.notebooks,
        "changed_since_grading": cells.changed,
        "tasks": [{"task": r.task, "cells": r.cells, "common_fingerprints": r.common,
                   "pairs": [m.to_json() for m in r.pairs], "groups": [g.to_json() for g in r.groups],
                   "references": [m.to_json() for m in r.references]} for r in results.values()],
    }
    write_atomically(os.path.join(out_dir, gradefolder.SIMILARITY), json.dumps(summary, indent=1))
    _write_class_report(out_dir)
    return results


def _library():
    from copydetect import __version__

    return f"copydetect {__version__}"


def _write_class_report(out_dir):
    from grader.outputs.class_report import write_report

    write_report(gradefolder.read_grades(out_dir), out_dir, gradefolder.read_run(out_dir, required=False))


def write_pages(out_dir, by_task, references, results):
    """A side-by-side page for every flagged Match, whose `page` is set to its path relative to DIR."""
    folder = os.path.join(out_dir, gradefolder.SIMILARITY_PAGES)
    if os.path.islink(folder) or os.path.isfile(folder):
        os.unlink(folder)  # not ours
    shutil.rmtree(folder, ignore_errors=True)  # pages of an earlier run: their pairs may be gone
    for result in results.values():
        task_folder = os.path.join(folder, safe_name(result.task))
        for match in result.pairs + result.references:
            os.makedirs(task_folder, exist_ok=True)
            name = f"{safe_name(match.first)}--{'reference-' if match.reference else ''}{safe_name(match.second)}.html"
            first = by_task[result.task][match.first]
            second = references[match.second] if match.reference else by_task[result.task][match.second]
            write_atomically(os.path.join(task_folder, name), pair_page(match, first, second))
            match.page = f"{gradefolder.SIMILARITY_PAGES}/{safe_name(result.task)}/{name}"


# ------------------------------------------------------------------------------------------
# A flagged pair's page
# ------------------------------------------------------------------------------------------

PAGE_CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #222;
       background: #fafafa; line-height: 1.4; }
main { max-width: 1400px; margin: 0 auto; padding: 1.5em 2em 3em; background: #fff; }
.columns { display: grid; grid-template-columns: 1fr 1fr; gap: 1em; }
pre { white-space: pre-wrap; word-break: break-word; background: #f4f4f4; padding: 0.6em; font-size: 0.85em; }
mark { background: #ffd27a; } .muted { color: #666; } .small { font-size: 0.85em; }
"""


def pair_page(match, first_source, second_source):
    """The HTML page of one Match: the two cells side by side, shared passages marked."""
    from copydetect.utils import highlight_overlap

    def marked(source, slices, context):
        if not slices:
            return html.escape(source)
        array = np.array(list(zip(*slices)))
        text, _ = highlight_overlap(source, array, "<mark>", "</mark>", truncate=context, escape_html=True)
        return text

    first_share = f"{100 * match.shares[0]:.0f}%"
    if match.reference:
        title = f"Task {match.task}: {match.first} and the reference file {match.second}"
        what = (f"{first_share} of {match.first}'s own code in this cell ({match.shared_tokens} tokens) is also in "
                f"{match.second}. A match with a reference file is information, not an accusation: students "
                f"may read the book's code, and a cell that follows it closely is worth a look, nothing more.")
        second_title = f"{match.second} (only the parts around the shared passages)"
        second = marked(second_source, match.slices[1], REFERENCE_CONTEXT_LINES)
    else:
        title = f"Task {match.task}: {match.first} and {match.second}"
        what = (f"The two cells share {match.shared_tokens} tokens of code: {first_share} of {match.first}'s own "
                f"code and {100 * match.shares[1]:.0f}% of {match.second}'s. Similar code is a reason to talk with "
                f"the students, not proof of copying.")
        second_title = match.second
        second = marked(second_source, match.slices[1], -1)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
            f"<title>{html.escape(title)}</title><style>{PAGE_CSS}</style></head><body><main>"
            f"<p class=\"small\"><a href=\"../../{gradefolder.REPORT}#similarity\">back to the class report</a></p>"
            f"<h1>{html.escape(title)}</h1><p>{html.escape(what)}</p>"
            "<p class=\"small muted\">Marked: the passages the two share. Not counted: the release notebook's own "
            "code (stub, signature, imports) and passages that many students of the class wrote alike. Names, "
            "strings, comments and layout are ignored, so renamed or reformatted code still matches.</p>"
            f"<div class=\"columns\"><div><h2>{html.escape(match.first)}</h2>"
            f"<pre>{marked(first_source, match.slices[0], -1)}</pre></div>"
            f"<div><h2>{html.escape(second_title)}</h2><pre>{second}</pre></div></div>"
            "</main></body></html>\n")


# ------------------------------------------------------------------------------------------
# Command line
# ------------------------------------------------------------------------------------------

def add_parser(commands):
    p = commands.add_parser("similarity", help="the pairs of students whose task cells are alike (copied work)")
    p.add_argument("dir", metavar="DIR", help="the folder that `grade --out` wrote")
    p.add_argument("--reference", metavar="FOLDER", nargs="+", action="extend", default=[],
                   help="folders of code to compare with (last year's submissions, the book's code): "
                        "reported apart from the pairs of students")
    p.add_argument("--threshold", type=float, default=Rules.threshold, metavar="SHARE",
                   help=f"flag a pair when this share of one cell's own code is in the other "
                        f"(default {Rules.threshold})")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="processes comparing tasks in parallel (default: one per core)")
    return p


def main(args):
    if not 0 < args.threshold <= 1:
        print(f"error: --threshold is a share between 0 and 1, not {args.threshold}", file=sys.stderr)
        return 2
    try:
        results = similarity_report(args.dir, args.reference, Rules(threshold=args.threshold), max(1, args.jobs))
    except (SimilarityError, gradefolder.GradeFolderError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    pairs = sum(len(r.pairs) for r in results.values())
    matched = sum(len(r.references) for r in results.values())
    flagged_tasks = sum(1 for r in results.values() if r.pairs)
    print(f"compared the cells of {len(results)} tasks: {pairs} pair(s) of students flagged in {flagged_tasks} "
          f"task(s), {matched} cell(s) matching a reference file; see "
          f"{os.path.join(args.dir, gradefolder.REPORT)}#similarity")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="python -m grader.outputs.similarity")
    add_parser(parser.add_subparsers(dest="command", required=True))
    sys.exit(main(parser.parse_args()))
