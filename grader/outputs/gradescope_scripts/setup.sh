#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image: it installs what
# run_autograder needs into a virtual environment of its own, $AUTOGRADER_ROOT/venv.
#
#   torch            the CPU build, pinned to the version the zip was built with
#                    (GPTCOURSE_TORCH_SPEC and GPTCOURSE_TORCH_INDEX override both; an empty
#                    GPTCOURSE_TORCH_INDEX means pip's own index)
#   ./course         the course package gptcourse and its dependencies (what students have)
#   requirements.txt what the grader itself imports while it grades (not nbgrader, not JupyterLab)
#
# The grader (grader/, with the reference and the hidden cases) is not installed: run_autograder
# runs it from this folder. A separate environment leaves Gradescope's own python3 untouched.
set -euo pipefail

ROOT="${AUTOGRADER_ROOT:-/autograder}"
SOURCE="$ROOT/source"
VENV="$ROOT/venv"
PYTHON="${GPTCOURSE_PYTHON:-python3}"
TORCH_SPEC="${GPTCOURSE_TORCH_SPEC:-@TORCH_SPEC@}"
TORCH_INDEX="${GPTCOURSE_TORCH_INDEX-@TORCH_INDEX@}"

if ! "$PYTHON" -m venv "$VENV"; then
    # Ubuntu's python3 comes without venv; Gradescope runs this script as root.
    apt-get install -y python3-venv
    "$PYTHON" -m venv "$VENV"
fi
"$VENV/bin/python" -m pip install ${TORCH_INDEX:+--index-url "$TORCH_INDEX"} "$TORCH_SPEC"
"$VENV/bin/python" -m pip install "$SOURCE/course" -r "$SOURCE/requirements.txt"
echo "setup done: $VENV"
