"""The graded tasks, and the chapter module that says how each is checked.

The table itself is `gptcourse.checking.course` (plain data, no torch): every name of it is here too,
for the many modules that import them from here. This module adds `chapter_module`, which
imports a chapter's public module (probes, hints: torch and all).
"""
import importlib

from . import course
from .course import (Chapter, Task, all_tasks, carried_tasks, chapter_names, chapters, chapters_for,  # noqa: F401
                     get_chapter, get_task, register_chapter, task, task_of_cell, tasks_before, tasks_of,
                     unregister_chapter)


def chapter_module(chapter):
    """'02_attention' -> the public module gptcourse.checking.chapters.ch02_attention."""
    if chapter not in chapter_names():
        raise KeyError(f"unknown chapter {chapter!r}; the chapters are {', '.join(chapter_names())}")
    return importlib.import_module(f"gptcourse.checking.chapters.ch{chapter}")


def __getattr__(name):
    """CHAPTERS, TASKS and TASKS_BY_ID, as gptcourse.checking.course has them now."""
    if name in ("CHAPTERS", "TASKS", "TASKS_BY_ID"):
        return getattr(course, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
