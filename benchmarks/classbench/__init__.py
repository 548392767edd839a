"""The parts of benchmarks/class_bench.py, one concern each:

- build_class.py: the synthetic class (students, their mistakes, broken notebooks) and its plan;
- watch.py: one grader run in a fresh process, watched (wall time, when results arrive, memory,
  how busy the machine was), and its statuses against the plan;
- profiling.py: --profile (the grading process under cProfile, each task's time in its worker
  host, one job per task in-process) and where the time goes;
- nbgrader_compare.py: a slice of the class under nbgrader autograde, against the course grader.

class_bench.py is the command: it puts the course, the repository, tests/ and benchmarks/ on
sys.path, then imports these.
"""
import os

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(BENCH)
CLASS_BENCH = os.path.join(BENCH, "class_bench.py")
