"""The synthetic class of benchmarks/class_bench.py: one folder per student holding one notebook
per chapter, as an instructor collects them; most students correct, the others with corpus
mistakes, a few notebooks broken. Seeded."""
import collections
import json
import os
import random

from classbench import REPO
from factory import corpus_items, filled_notebook
from gptcourse.checking.tasks import CHAPTERS, tasks_of

TASKS_PER_STUDENT = sum(len(tasks_of(chapter)) for chapter in CHAPTERS)


def syntax_error_in(source):
    """The cell with its first `def` or `class` line missing its colon (a typo students make)."""
    lines = source.splitlines()
    for i, line in enumerate(lines):
        if line.lstrip().startswith(("def ", "class ")) and line.rstrip().endswith(":"):
            lines[i] = line.rstrip()[:-1]
            return "\n".join(lines) + "\n"
    return source + "\nif True\n    pass\n"


def build_class(folder, students, seed, correct_share=0.6):
    """Write the class under folder/<student>/<chapter>.ipynb; returns its plan:
    {student: {"mistakes": [corpus ids], "broken": (kind, chapter, task or None) or None}} and
    the (student, task) pairs that must not pass."""
    rng = random.Random(seed)
    wrong = [item for item in corpus_items() if item.expect == "wrong"]
    correct_text = {chapter: json.dumps(filled_notebook(chapter), indent=1) for chapter in CHAPTERS}
    names = [f"student_{k:03d}" for k in range(students)]
    per_kind = max(1, round(students * 0.02)) if students >= 3 else 0
    broken_students = rng.sample(names, 3 * per_kind)
    broken = {name: kind for name, kind in zip(broken_students, [k for k in ("truncated", "empty", "syntax")
                                                                   for _ in range(per_kind)])}
    plan, must_fail = {}, set()
    for name in names:
        mistakes = []
        if rng.random() >= correct_share:
            by_task = {}
            for item in rng.sample(wrong, rng.choice([1, 1, 1, 2, 2, 3])):
                by_task.setdefault(item.task, item)  # one mistake per task
            mistakes = sorted(by_task.values(), key=lambda item: item.id)
        overrides = {item.task: item.source for item in mistakes}
        must_fail |= {(name, item.task) for item in mistakes}
        damage = None
        if name in broken:
            chapter = rng.choice(CHAPTERS)
            task = rng.choice(tasks_of(chapter)).id if broken[name] == "syntax" else None
            damage = (broken[name], chapter, task)
            if task:
                overrides[task] = syntax_error_in(overrides.get(task) or _reference_source(task))
                must_fail.add((name, task))
            else:
                must_fail |= {(name, t.id) for t in tasks_of(chapter)}
        os.makedirs(os.path.join(folder, name), exist_ok=True)
        for chapter in CHAPTERS:
            # With overrides, later chapters' carry-over cells hold the student's own earlier code too.
            text = json.dumps(filled_notebook(chapter, overrides), indent=1) if overrides else correct_text[chapter]
            if damage and damage[1] == chapter and damage[0] == "truncated":
                text = text[: len(text) // 2]
            elif damage and damage[1] == chapter and damage[0] == "empty":
                text = ""
            with open(os.path.join(folder, name, f"{chapter}.ipynb"), "w", encoding="utf-8") as f:
                f.write(text)
        plan[name] = {"mistakes": [item.id for item in mistakes], "broken": damage}
    return plan, must_fail


_SOURCES = {}


def _reference_source(task_id):
    if not _SOURCES:
        with open(os.path.join(REPO, "grader", "reference", "manifest.json"), encoding="utf-8") as f:
            _SOURCES.update({tid: t["source"] for m in json.load(f).values() for tid, t in m["tasks"].items()})
    return _SOURCES[task_id]


def describe_class(plan):
    with_mistakes = [p for p in plan.values() if p["mistakes"]]
    kinds = collections.Counter(p["broken"][0] for p in plan.values() if p["broken"])
    correct = sum(1 for p in plan.values() if not p["mistakes"] and not p["broken"])
    return {"students": len(plan), "fully_correct": correct, "with_mistakes": len(with_mistakes),
            "mistakes": sum(len(p["mistakes"]) for p in with_mistakes), "broken_notebooks": dict(kinds)}
