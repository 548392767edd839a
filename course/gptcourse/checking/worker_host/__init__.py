"""The grading worker host: where graded student code runs, one task at a time.

The grader (`python -m grader grade`) starts one host per parallel job, inside a bubblewrap
sandbox when it can (see grader/grading/sandbox.py), as `python -m gptcourse.checking.worker_host`, and
talks to it over the host's stdin and stdout in length-prefixed frames. The host imports torch
once; for each job it forks a child that runs the course setup, the earlier tasks' reference
code and the student's cell, probes the cases and writes plain observations to a pipe. The host
then:

- stops the child when it runs past its time or memory limit;
- ends every process the child left behind (the host is a "child subreaper": orphans of its
  descendants become its own children, so a double fork or setsid cannot escape it);
- empties the child's private scratch folder;
- only then answers the grader, with the child's message as raw bytes, size-capped.

Nothing here decides a grade, and the grader trusts nothing the host sends: it checks every
message against a schema (grader/grading/pool.py). This package lives in the public package because
the sandbox holds no grader code at all: the hidden cases, the reference of the task being
graded and the expected outputs never enter it.

Its modules, one topic each, in the order a job meets them:

- __main__.py: what `python -m gptcourse.checking.worker_host` runs (host.main);
- host.py: the host's start-up, its loop over the grader's requests, and one request from the
  fork of its child to the reply;
- frames.py: the bytes on the pipes: length-prefixed frames to and from the grader, and what a
  child's pipe holds now;
- processes.py: the process tree: the host as subreaper, finding and ending descendants,
  reaping them, their memory;
- hidden_packages.py: the grader's own packages made unimportable to graded code;
- gpu.py: whether torch has a GPU backend, and the check that nothing initialised CUDA before fork;
- preload.py: what the host loads and sets up once so that every child starts with it done;
- watch.py: the host watching a child: its time, memory and message-size limits, and how it ended;
- where.py: where a child's code was when its time ran out (the signal the host sends, the
  child's answer, and reading a stack for the line of the student's cell);
- child.py: the forked child: cut off from the host's channel, in its scratch folder, its
  output captured, and the one message it writes;
- job.py: what the child runs: the course setup, the earlier tasks' reference, the student's
  cell statement by statement, and the probes;
- memory_limit.py: the memory cap of a child (and of the kernels nbgrader starts).

Importing this package imports nothing (the host loads torch itself, once, before it forks).
"""
