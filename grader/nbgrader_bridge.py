"""Where the hidden-test cells of nbgrader course directories made before grader/ had folders
import from (`from grader.nbgrader_bridge import run_hidden_tests`). Their notebooks live in the
instructor's source/ and gradebook, so autograde still runs them: this name keeps them working.
The bridge itself is grader/nbgrading/bridge.py; new course directories import it from there."""
from grader.nbgrading.bridge import run_hidden_tests  # noqa: F401
