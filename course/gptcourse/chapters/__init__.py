"""One public module per chapter: how its tasks are probed and explained.

A chapter module `chNN_name.py` (found by name from gptcourse.course, which holds the
chapter's task rows) defines:

- CHAPTER: its name in gptcourse.course.COURSE;
- PROBES: {task id: {case kind: a kind from gptcourse.kinds}};
- KEY_NAMES: observation key -> how feedback names it ("Attention weights");
- ERROR_HINTS: [(regular expression on "Type: message", hint, task ids or None for all)],
  tried before the generic hints of gptcourse.judge;
- HINTS: {task id: [fn(key, got, expected, case) -> hint or ""]}, property hints that
  explain a wrong observation when no known mistake matches.

Modules shared by several chapters hold what those chapters have in common: attention.py
(the attention chapters' probes and hints) and toys.py (the small models the probes run,
which the hidden cases build too). A chapter module imports from these, never from another
chapter's module.
Nothing here is secret: the hidden cases and known mistakes live in grader/chapters/.
"""
