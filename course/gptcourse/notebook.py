"""One-line messages, instead of tracebacks, for cells that need a task you have not finished.

The setup cell of every chapter notebook calls

    explain_unfinished_tasks("02_attention")

From then on, a cell that stops because it uses a task that is still a stub shows

    This cell needs Task 2.5 (CausalAttention): finish it above and run its cell first.

instead of a traceback. That covers
- a NotImplementedError raised by the `raise NotImplementedError()` stub of a task cell;
- a NameError for a graded name (the task's cell has not been run, or was deleted);
- a NameError for a variable that an earlier cell would have defined had it not stopped for
  an unfinished task (the plot after Task 2.3 defines `attn_scores`, which the demos of
  section 4 use: they then need Task 2.3, too).
A demo that stops on what a failed task's code gave it (torch or a plot of the course refusing
values that are not probabilities, say), or any error raised inside the course's own helpers, is
one sentence too, naming the failed task.
Every other error keeps its full traceback, once: a later cell that needs a variable the
failed cell did not get to define says so in one line instead of stopping with a NameError,

    This cell needs `full_history`, which cell [31] did not define: that cell stopped with an
    IndexError. Fix it and run it again, then this cell.

so that one failure never becomes a cascade of tracebacks.

A task whose check failed still runs: the demos after it use the student's code as it is, and
its output can look right (a classifier whose head never trained still reaches a good accuracy
through the blocks that did). So a demo cell that builds on a task whose latest check in this
kernel failed (a carry-over cell's check counts too) says so first, in one line,

    Task 7.3's check failed above: this runs your code as it is.

A cell builds on a task when it uses one of the task's graded names, or a variable that a cell
building on it assigned, or a model it passed to it (`add_classification_head(model, ...)` makes
`model` one), before the cell binds that name itself (a loop variable of the same name is the
cell's own). The task's own cell and the cells that run a check never say it.

Outside IPython (a plain Python process, the grader, the reference package that repeats the
setup cell) the call does nothing, and the message is still an error for IPython: "Run all"
stops there, and nbgrader still counts a check cell that shows it as failed. Messages longer
than a line are broken between words (gptcourse.messages).
"""
import ast
import contextlib
import re
import sys

from .checking import tasks
from .messages import say, wrap_at_words

_STUB_ERRORS = (NotImplementedError, NameError)


def explain_unfinished_tasks(chapter):
    """Install the one-line messages in this notebook's IPython kernel; True if installed.

    `chapter` is the notebook's own chapter ("03_multihead_attention"): a task from an
    earlier chapter gets a message that points to the carry-over cell instead.
    """
    shell = _running_shell()
    # Only a notebook cell installs it: the same setup code also runs inside imported modules
    # (the hidden reference package), and those must not touch the kernel.
    if shell is None or sys._getframe(1).f_globals is not shell.user_ns:
        return False
    previous = getattr(shell, "_gptcourse_explainer", None)
    if previous is not None:  # the setup cell ran again: replace, don't stack
        for event, method in (("pre_run_cell", "remember_cell"), ("post_run_cell", "after_cell")):
            with contextlib.suppress(ValueError, AttributeError):  # already unregistered, or never
                shell.events.unregister(event, getattr(previous, method))
    explainer = _Explainer(shell, chapter)
    shell.events.register("pre_run_cell", explainer.remember_cell)
    shell.events.register("post_run_cell", explainer.after_cell)
    # Every error passes through handle(), which shows it as IPython would unless it has one of the
    # one-line messages above.
    shell.set_custom_exc((Exception,), explainer.handle)
    shell._gptcourse_explainer = explainer
    return True


def unfinished_task_message(error):
    """The one line for a NotImplementedError raised by a task's stub, outside a cell (the chat
    panel calling an unfinished `generate`): None when it is not a stub's."""
    if not isinstance(error, NotImplementedError) or error.args or error.__traceback__ is None:
        return None  # the stubs raise NotImplementedError() without a message
    tb = error.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    names = {tb.tb_frame.f_code.co_name}
    owner = tb.tb_frame.f_locals.get("self")
    if owner is not None:
        names.add(type(owner).__name__)
    task = next((task for task in tasks.TASKS if names & set(task.names)), None)
    if task is None:
        return None
    return f"This cell needs Task {task.id} ({', '.join(task.names)}): finish it above and run its cell first."


def _running_shell():
    """The IPython shell this code runs in, or None (IPython is never imported here)."""
    ipython = sys.modules.get("IPython")
    return ipython.get_ipython() if ipython is not None else None


class _Explainer:
    def __init__(self, shell, chapter):
        self.shell = shell
        self.chapter = chapter
        self.cell = ""  # the source of the cell that is running
        self.blocked_names = {}  # variable -> the task that kept its cell from defining it
        self.failed_names = {}  # variable -> (cell number, error) of the cell that stopped before defining it
        self.explained = None  # the NameError of the running cell that handle() put down to a failed cell
        self.made_with = {}  # variable -> ids of the tasks whose checks had failed when a cell made it
        self.built_on = set()  # the failed tasks the running cell builds on

    def remember_cell(self, info):
        self.cell = info.raw_cell or ""
        self.explained = None
        self.built_on = set()
        with contextlib.suppress(Exception):  # noqa: BLE001 - a bug here must never stop the student's cell
            self.say_which_failed_checks_it_builds_on()

    def say_which_failed_checks_it_builds_on(self):
        """Before the cell runs: one line when it builds on a task whose latest check failed."""
        from .checking import selfcheck  # imported once a cell runs, not with the setup cell

        tree = ast.parse(self.shell.transform_cell(self.cell))
        assigned = _assigned_names(self.shell, self.cell)
        if _runs_a_check(tree) or assigned & _GRADED_NAMES:
            return  # a task's own cell, a check cell, a carry-over or paste cell
        failed = selfcheck.failed_checks()
        used = _read_before_written(tree.body)
        built_on = {task.id for task in tasks.TASKS if task.id in failed and used & set(task.names)}
        for name in used:
            built_on |= self.made_with.get(name, set()) & failed
        self.built_on = built_on
        if not built_on:
            for name in assigned:
                self.made_with.pop(name, None)  # made again, by code whose checks did not fail
            return
        for name in assigned | _modules_passed_to(self.shell, tree, _names_of(built_on)):
            self.made_with[name] = built_on
        say(_failed_checks_message(built_on))

    def after_cell(self, result):
        """Once a cell has stopped with an error, the variables it did not get to define wait for it."""
        error = result.error_in_exec
        if error is None or result.execution_count is None:
            return
        failed = self.explained or (result.execution_count, type(error).__name__)
        with contextlib.suppress(Exception):  # noqa: BLE001 - a bug here must never disturb the kernel
            for name in _assigned_names(self.shell, self.cell):
                if name not in self.shell.user_ns and name not in self.blocked_names:
                    self.failed_names.setdefault(name, failed)

    def handle(self, shell, etype, value, tb, tb_offset=None):
        """IPython calls this for every error a cell raises."""
        try:
            task = self.unfinished_task(value, tb) if isinstance(value, _STUB_ERRORS) else None
            failed = self.failed_names.get(_undefined_name(value)) if isinstance(value, NameError) else None
            if task is not None:
                self.block_names_of_this_cell(task)
                message = wrap_at_words(self.message(task))
                value._render_traceback_ = lambda: [message]  # IPython shows this instead
            elif failed is not None:
                self.explained = failed  # this cell's own variables wait for the same cell
                message = wrap_at_words(_failed_cell_message(_undefined_name(value), *failed))
                value._render_traceback_ = lambda: [message]
            elif not hasattr(value, "_render_traceback_") and (self.built_on or _raised_in_course_code(tb)):
                # A demo given code whose check failed stops (torch refusing what is not a
                # probability, or a plot of the course's helpers): one sentence, not frames of code
                # the student did not write; the check above says what is wrong with theirs.
                message = wrap_at_words(_course_code_message(value, self.built_on))
                value._render_traceback_ = lambda: [message]
        except Exception:  # noqa: BLE001 - a bug here must never hide the student's error
            pass
        shell.showtraceback((etype, value, tb), tb_offset=tb_offset)

    # -- which task is behind the error ---------------------------------------------------
    def unfinished_task(self, error, tb):
        if isinstance(error, NotImplementedError):
            return self.stub_behind(error, tb)
        name = _undefined_name(error)
        return self.task_defining(name) or self.blocked_names.get(name)

    def stub_behind(self, error, tb):
        """The task whose stub raised `error`: the innermost frame is a graded name's code."""
        if error.args:  # the stub raises NotImplementedError() without a message
            return None
        while tb.tb_next is not None:
            tb = tb.tb_next
        raising_code = id(tb.tb_frame.f_code)
        for task in tasks.TASKS:
            for name in task.names:
                if raising_code in _code_ids(self.shell.user_ns.get(name)):
                    return task
        return None

    def task_defining(self, name):
        return next((task for task in tasks.TASKS if name in task.names), None)

    def block_names_of_this_cell(self, task):
        """The variables this cell did not get to define now wait for `task` too."""
        for name in _assigned_names(self.shell, self.cell):
            if name not in self.shell.user_ns:
                self.blocked_names.setdefault(name, task)

    def message(self, task):
        names = ", ".join(task.names)
        if task.chapter == self.chapter:
            return f"This cell needs Task {task.id} ({names}): finish it above and run its cell first."
        number = task.chapter.split("_")[0]
        return (f"This cell needs Task {task.id} ({names}) from chapter {number}: finish it in "
                f"{task.chapter}.ipynb, then run the carry-over cell near the top of this notebook.")


# Every task's graded names: a cell that assigns one is a task's cell (or a paste cell).
_GRADED_NAMES = {name for task in tasks.TASKS for name in task.names}
# What a check cell, a paste cell and a master's hidden tests call.
_CHECK_CALLS = {"check", "check_pasted", "run_hidden_tests"}


def _failed_checks_message(task_ids):
    ordered = [task.id for task in tasks.TASKS if task.id in task_ids]  # in course order
    if len(ordered) == 1:
        return f"Task {ordered[0]}'s check failed above: this runs your code as it is."
    listed = ", ".join(ordered[:-1]) + " and " + ordered[-1]
    # Too long for one line, it breaks after the colon, never before a last word alone.
    return f"The checks of Tasks {listed} failed above:\nthis runs your code as it is."


def _raised_in_course_code(tb):
    """Whether the error came from the course package's own code (its innermost frame of the
    package's is not the self-check's, which has a message of its own), rather than the student's."""
    import os

    package = os.path.dirname(os.path.abspath(__file__))
    files = []
    while tb is not None:
        files.append(os.path.abspath(tb.tb_frame.f_code.co_filename))
        tb = tb.tb_next
    ours = [f for f in files if f.startswith(package + os.sep)]
    return bool(ours) and not ours[-1].startswith(os.path.join(package, "checking") + os.sep)


def _course_code_message(error, built_on):
    """One sentence for a demo stopped inside the course's helpers: their words, and the failed
    task the cell builds on (its code is what the helpers refused)."""
    said = " ".join(str(error).split()) or type(error).__name__
    if built_on:
        ordered = [task.id for task in tasks.TASKS if task.id in built_on]
        which = f"Task {ordered[0]}'s" if len(ordered) == 1 else "Tasks " + " and ".join(ordered) + "'"
        return f"This cell stopped on what {which} code gave it, whose check failed above: {said}"
    return f"This cell stopped: {said}"


def _read_before_written(statements, bound=frozenset()):
    """The names a cell reads before it binds them itself (in function bodies too: a function
    defined here calls what it uses). A loop variable or a name the cell assigns first is the
    cell's own, whatever an earlier cell made under that name."""
    read, bound = set(), set(bound)
    for statement in statements:
        if isinstance(statement, (ast.For, ast.AsyncFor)):
            read |= _loads(statement.iter) - bound
            bound |= _stores(statement.target)
            read |= _read_before_written(statement.body + statement.orelse, bound)
        elif isinstance(statement, (ast.If, ast.While)):
            read |= _loads(statement.test) - bound
            read |= _read_before_written(statement.body + statement.orelse, bound)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            for item in statement.items:
                read |= _loads(item.context_expr) - bound
                if item.optional_vars is not None:
                    bound |= _stores(item.optional_vars)
            read |= _read_before_written(statement.body, bound)
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own = {a.arg for a in ast.walk(statement) if isinstance(a, ast.arg)}
            read |= _read_before_written(statement.body, bound | own) | (_loads_outside_body(statement) - bound)
            bound.add(statement.name)
            continue
        elif isinstance(statement, ast.Try):
            read |= _read_before_written(statement.body + statement.orelse + statement.finalbody, bound)
            for handler in statement.handlers:
                read |= _read_before_written(handler.body, bound | ({handler.name} if handler.name else set()))
        else:
            read |= _loads(statement) - bound
        bound |= _stores(statement)
    return read


def _loads(node):
    """Names read in `node`, without those a comprehension or lambda inside it binds."""
    own = set()
    for inner in ast.walk(node):
        if isinstance(inner, ast.comprehension):
            own |= _stores(inner.target)
        elif isinstance(inner, ast.Lambda):
            own |= {a.arg for a in ast.walk(inner.args) if isinstance(a, ast.arg)}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - own


def _stores(node):
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _loads_outside_body(definition):
    """A definition's decorators, defaults and bases: read when it is defined."""
    parts = list(definition.decorator_list) + list(getattr(definition, "bases", []))
    if hasattr(definition, "args"):
        parts += list(definition.args.defaults) + [d for d in definition.args.kw_defaults if d is not None]
    return set().union(*(_loads(part) for part in parts)) if parts else set()


def _names_of(task_ids):
    return {name for task in tasks.TASKS if task.id in task_ids for name in task.names}


def _runs_a_check(tree):
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _CHECK_CALLS
               for node in ast.walk(tree))


def _modules_passed_to(shell, tree, functions):
    """The models passed to a call of one of `functions`: what that code changes in place by design
    (`add_classification_head(model, ...)`, `replace_linear_with_lora(model, ...)`). A tensor passed
    to a function stays the caller's (the checks catch a function that changes one), so the logits a
    softmax was given do not become its work."""
    module = getattr(sys.modules.get("torch.nn"), "Module", None)
    passed = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
            arguments = node.args + [keyword.value for keyword in node.keywords]
            passed |= {argument.id for argument in arguments if isinstance(argument, ast.Name)
                       and module is not None and isinstance(shell.user_ns.get(argument.id), module)}
    return passed


def _failed_cell_message(name, cell_number, error):
    if error == "KeyboardInterrupt":
        why = "it was interrupted. Run it again"
    else:
        why = f"that cell stopped with {'an' if error[0] in 'AEIOU' else 'a'} {error}. Fix it and run it again"
    return f"This cell needs `{name}`, which cell [{cell_number}] did not define: {why}, then this cell."


def _undefined_name(error):
    name = getattr(error, "name", None)  # Python 3.10 and later
    if name:
        return name
    found = re.search(r"name '(\w+)' is not defined", str(error))
    return found.group(1) if found else None


def _code_ids(obj):
    """The ids of the code objects of a function, or of the methods of a class, with nested
    functions. Ids, because code objects compare equal when only their file differs: the
    stubs of two tasks (`super().__init__()`, `raise NotImplementedError()`) do."""
    if isinstance(obj, type):
        members = list(vars(obj).values())
        members += [m.fget for m in members if isinstance(m, property) and m.fget is not None]
        functions = [getattr(m, "__func__", m) for m in members]  # unwrap static/class methods
    else:
        functions = [obj]
    pending = [f.__code__ for f in functions if hasattr(f, "__code__")]
    found = set()
    while pending:
        code = pending.pop()
        found.add(id(code))
        pending += [c for c in code.co_consts if hasattr(c, "co_code")]
    return found


def _assigned_names(shell, cell):
    """Names a cell assigns at its top level (in loops and `with` blocks too), not inside
    functions or classes."""
    try:
        tree = ast.parse(shell.transform_cell(cell))
    except (SyntaxError, ValueError):
        return set()
    names = set()
    pending = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
            continue  # its body has a scope of its own
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        pending.extend(ast.iter_child_nodes(node))
    return names


def being_graded():
    """True while nbgrader autogrades or validates this notebook (it sets NBGRADER_EXECUTION).

    A demo that trains for minutes teaches nothing to a grader: gptcourse.pretrain.pick_run
    then picks a one-epoch run and the GPT-2 weights are not downloaded, which keeps a class's
    autograde run short and under nbgrader's per-cell time limit.
    """
    import os

    return os.environ.get("NBGRADER_EXECUTION") in ("autograde", "validate")
