"""nbgrader's execute step, made to grade hanging and crashing cells as the course grader does.

nbgrader runs a submission's notebook cell by cell in one kernel. Left to itself, a cell that
never finishes or kills its kernel costs far more than its own task:

- a task cell that loops at its top level after defining its function is interrupted, and the
  hidden tests then pass on the function it defined (the course grader: a timeout, 0 points);
- a kernel that does not answer the interrupt (stuck in a long C call, or code that catches
  KeyboardInterrupt), or one that dies (os._exit, a crash), stops the notebook, and nbgrader
  removes the whole submission of that chapter ("Removing failed assignment": every task 0).

`CourseExecute` replaces nbgrader's `Execute` (grader/nbgrading/nbgrader_config.py says so) and keeps
each of those to its task, with the course grader's verdict and message:

- a task cell runs with the course grader's per-task time limit (`task_timeout`, the
  `--timeout` of `python -m grader grade`); when it is interrupted, or its kernel has to be
  replaced, the task is *unfinished*: its check cell is not run but gets the verdict's message
  as an error ("did not finish within 60 s and was stopped at line 3 of your solution cell");
- a kernel that does not answer an interrupt, or that died, is replaced by a fresh one, which
  first runs again the cells every task runs with (setup, carry-over and paste cells) and the
  task cells that finished, quietly; the notebook goes on from the next cell;
- the hidden tests in a check cell keep to the same limit themselves
  (grader/nbgrading/bridge.py), so a function that loops when called fails with the same
  message as under the course grader;
- the kernel has the course grader's memory cap (grader/nbgrading/nbgrader_config.py starts it with
  gptcourse/checking/kernel_memory.py), so an allocation beyond it fails in the student's code.
  A cell that ran out of memory may leave its kernel full (a list its loop kept): the next cell
  gets a fresh kernel, except the task's own check cell, whose hidden tests run in that kernel
  as the course grader's run after the student's cell in the same process (and give its memory
  verdict, "used more than the 2,048 MB memory limit"). The cell is not replayed.

Nothing here decides points: nbgrader gives a check cell its points when it runs without an
error, as always.
"""
import os
import re

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbformat import NotebookNode
from nbgrader.converters import Autograde
from nbgrader.preprocessors import AssignLatePenalties, Execute
from traitlets import Integer

from gptcourse.checking import conventions
from gptcourse.checking.memory import memory_exhausted
from grader.paths import TIMEOUT_ENV_VAR

def use_course_execute(config, task_timeout):
    """In an nbgrader configuration: autograde with CourseExecute in place of Execute, with
    `task_timeout` seconds per task, and with the course's late policy step in place of nbgrader's
    (grader/nbgrading/late.py: the course directory's policy.toml, when it has one); nbgrader's
    other steps as they are."""
    from grader.nbgrading.late import PolicyLatePenalties

    course_steps = {Execute: CourseExecute, AssignLatePenalties: PolicyLatePenalties}
    defaults = Autograde.class_traits()["autograde_preprocessors"].default()
    config.Autograde.autograde_preprocessors = [course_steps.get(step, step) for step in defaults]
    config.CourseExecute.task_timeout = task_timeout


# The expression the kernel evaluates, after an interrupt, to say where the interrupted cell was.
_WHERE_EXPRESSION = "__import__('grader.nbgrading.bridge', fromlist=['_']).interrupted_line()"


class CourseExecute(Execute):
    task_timeout = Integer(
        60, help="Seconds a task cell, and the hidden tests of its check cell, may run: the course "
                 "grader's --timeout (python -m grader grade), so that both graders stop the same code."
    ).tag(config=True)

    def preprocess(self, nb, resources=None, km=None):
        self._unfinished = {}  # task id -> the outcome the verdict reads ({"killed": "timeout", ...})
        self._replay = []  # sources a fresh kernel runs first, in notebook order
        # After a cell ran out of memory: the one cell that still runs in its kernel, as
        # (kind, task id) (the task's check cell; ("", "") when none), before a fresh kernel.
        self._spent = None
        # The hidden tests read the limit in the kernel, which inherits this environment.
        os.environ[TIMEOUT_ENV_VAR] = str(self.task_timeout)
        # nbclient's public hook for a limit per cell (it wins over `timeout` when set).
        self.timeout_func = self._cell_timeout
        return super().preprocess(nb, resources, km)

    def _cell_timeout(self, cell):
        """A task cell runs as long as the course grader lets a task run; any other cell, `timeout`."""
        if conventions.is_kind(conventions.grade_id(cell), conventions.SOLUTION):
            return self.task_timeout
        return self.timeout

    async def _async_handle_timeout(self, timeout, cell=None):
        self._timed_out = True
        return await super()._async_handle_timeout(timeout, cell)

    def preprocess_cell(self, cell, resources, index):
        kind, task_id = conventions.parse_grade_id(conventions.grade_id(cell))
        if kind == conventions.CHECK and task_id in self._unfinished:
            cell.outputs = [_error_output(unfinished_message(task_id, self._unfinished[task_id]))]
            return cell, self.resources
        if self._spent is not None and cell.cell_type == "code" and (kind, task_id) != self._spent:
            self._spent = None
            self._start_fresh_kernel()
        self._timed_out = False
        try:
            cell, resources = super().preprocess_cell(cell, resources, index)
        except (CellTimeoutError, DeadKernelError) as stop:
            outcome = self._kernel_lost(stop)
            if kind == conventions.SOLUTION:
                self._unfinished[task_id] = outcome  # its check cell says why
            if kind == conventions.CHECK:  # the hidden tests' call hung or crashed: the verdict says so
                text = unfinished_message(task_id, outcome)
            else:
                text = (f"The grader stopped this cell and started a fresh kernel: "
                        f"{'it did not finish in time' if 'killed' in outcome else 'its kernel died'}.")
            cell.outputs.append(_error_output(text))
            return cell, self.resources
        if kind == conventions.SOLUTION and self._timed_out:
            self._unfinished[task_id] = {"killed": "timeout", "limit": self.task_timeout, **self._interrupted_where()}
        elif _ran_out_of_memory(cell):
            self._spent = (conventions.CHECK, task_id) if kind == conventions.SOLUTION else ("", "")
        elif _replayed(cell, kind):
            self._replay.append(cell.source)
        return cell, resources

    # -- a kernel that hangs or died ------------------------------------------------------------

    def _kernel_lost(self, stop):
        """Replace the kernel; the outcome of the cell that lost it."""
        if isinstance(stop, DeadKernelError):
            outcome = {"died": self._kernel_exit_status()}
        else:  # the interrupt went unanswered
            outcome = {"killed": "timeout", "limit": self.task_timeout}
        self.log.warning("The kernel %s; starting a fresh one for the rest of the notebook",
                         "died" if "died" in outcome else "did not answer an interrupt")
        self._start_fresh_kernel()
        return outcome

    def _kernel_exit_status(self):
        """The dead kernel's exit status (as the course grader reports a child's), when known."""
        try:
            status = self.km.provisioner.process.poll()
        except AttributeError:
            status = None
        return status if isinstance(status, int) else "unknown"

    def _start_fresh_kernel(self):
        shutdown, self.shutdown_kernel = self.shutdown_kernel, "immediate"
        try:
            self._cleanup_kernel()
        finally:
            self.shutdown_kernel = shutdown
        self.km = self.create_kernel_manager()
        self.start_new_kernel()
        self.start_new_kernel_client()
        for source in self._replay:
            quiet = NotebookNode(cell_type="code", source=source, metadata={}, outputs=[], execution_count=None)
            super().preprocess_cell(quiet, self.resources, -1)

    def _interrupted_where(self):
        """{"line": n} of the interrupted cell's code, as the kernel still knows it ({} when not)."""
        try:
            reply = self.wait_for_reply(self.kc.execute("", silent=True, store_history=False,
                                                        user_expressions={"where": _WHERE_EXPRESSION}))
            text = reply["content"]["user_expressions"]["where"]["data"]["text/plain"]
            return {"line": int(text)}
        except (KeyError, TypeError, ValueError, RuntimeError, TimeoutError):
            return {}


# What a check cell raises when its hidden tests give the memory verdict (nbgrader_bridge.failure_text).
_MEMORY_VERDICT = re.compile(r"Task \S+ \(memory\): ")


def _ran_out_of_memory(cell):
    """Whether the cell ended in a failed allocation: its own (MemoryError, torch's "can't
    allocate memory") or its hidden tests' memory verdict."""
    return any(output.output_type == "error"
               and (memory_exhausted({"type": output.ename, "message": output.evalue})
                    or _MEMORY_VERDICT.match(output.evalue))
               for output in cell.get("outputs", ()))


def _replayed(cell, kind):
    """Whether a fresh kernel runs this cell again: what every task runs with (setup, carry-over
    and paste cells) and the task cells that finished (a later cell may subclass one)."""
    tags = conventions.tags(cell)
    return cell.cell_type == "code" and (
        kind in (conventions.SOLUTION, conventions.CARRY)
        or conventions.SETUP_TAG in tags or conventions.PASTE_TAG in tags)


def unfinished_message(task_id, outcome):
    """What a check cell says for a task whose cell did not finish: the course grader's verdict."""
    from grader.nbgrading.bridge import failure_text
    from grader.grading.verdict import verdict

    return failure_text(task_id, verdict(task_id, [], [], outcome))


def _error_output(text):
    return NotebookNode(output_type="error", ename="AssertionError", evalue=text, traceback=[f"AssertionError: {text}"])
