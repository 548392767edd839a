"""The checking machinery: how a task is exercised and judged, shared by the notebooks'
self-checks (`gptcourse.check`) and the grader. Nothing here is for a student to call.

- course: the course as plain data (chapters, their tasks and budgets); tasks adds the
  import of a chapter's module. No torch in course.
- contract: what each task's checks pin down and what they leave free, in words (plain data
  too); docs/contract.md and `python -m grader where` are made from it and the course table.
- conventions: the notebooks' cell conventions (grade ids, tags, markers).
- records: the plain-data records (cases, observations) that fixtures and grader processes
  exchange.
- probes and kinds/: running a task's code on a case and observing it.
- chapters/: per chapter, each task's probes and hints (its SPECS), and the toy models the
  probes drive.
- judge and findings: comparing observations with the reference's; the message and the
  finding that say what was wrong.
- selfcheck and fixtures/: the self-check a notebook runs, against the reference's
  observations shipped in fixtures/NN_chapter.json.
- worker_host/: the grader's worker process (`python -m gptcourse.checking.worker_host`,
  which grader/grading/sandbox.py starts), a module per topic: framing, processes, hidden packages, the
  GPU, preloading, watching a child, where it was stopped, the child, the job, its memory cap.
- challenge_runner: one class-challenge entry trained in a process of its own, which the grader
  (grader/outputs/leaderboard.py) starts in its sandbox and hands the training batches over a pipe.
- memory: what running out of memory looks like and what the student is told, for the grader
  and the self-check; kernel_memory: the same memory cap as the grader's, in the kernels that
  nbgrader starts (an IPython extension).

Importing this package imports nothing: the worker host starts before torch is loaded.
"""
