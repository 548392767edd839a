"""environment.yml (conda) and the pip requirements say the same thing."""
import re
import tomllib

import yaml
from packaging.markers import Marker

from factory import REPO

# pip name -> conda package name (conda-forge packages Playwright's Python bindings as playwright-python)
CONDA_NAMES = {"torch": "pytorch", "playwright": "playwright-python"}
# environment.yml asks for python>=3.11: a requirement whose marker leaves that Python out is not listed there.
CONDA_PYTHON = "3.11"


def pip_requirements():
    requirements = {}
    for path in (REPO / "course" / "pyproject.toml", REPO / "pyproject.toml"):
        project = tomllib.loads(path.read_text())["project"]
        listed = project["dependencies"] + [r for extra in project.get("optional-dependencies", {}).values() for r in extra]
        for requirement in listed:
            requirement, _, marker = requirement.partition(";")
            if marker and not Marker(marker).evaluate({"python_version": CONDA_PYTHON}):
                continue  # a backport for older Pythons than environment.yml's (tomli)
            name, bound = re.match(r"([A-Za-z0-9_.-]+)\s*(.*)", requirement.strip()).groups()
            if name != "gptcourse":  # the course package itself: installed from ./course
                requirements[CONDA_NAMES.get(name.lower(), name.lower())] = bound.replace(" ", "")
    return requirements


def conda_requirements():
    """({name: bound} of environment.yml's packages, conda's and those its pip section installs
    from PyPI (what conda-forge does not package), [its editable installs])."""
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    listed, editable = [], []
    for entry in env["dependencies"]:
        if isinstance(entry, dict):
            editable += [line for line in entry["pip"] if line.startswith("-e ")]
            listed += [line for line in entry["pip"] if not line.startswith("-e ")]
        else:
            listed.append(entry)
    requirements = {}
    for entry in listed:
        name, bound = re.match(r"([A-Za-z0-9_.-]+)\s*(.*)", entry).groups()
        requirements[name.lower()] = bound.replace(" ", "")
    return requirements, editable


def test_every_pip_requirement_is_in_environment_yml_with_the_same_bound():
    conda, _ = conda_requirements()
    for name, bound in pip_requirements().items():
        assert name in conda, f"{name} is a pip requirement but missing from environment.yml"
        assert conda[name] == bound, f"{name}: pip says {bound!r}, environment.yml says {conda[name]!r}"


def test_the_python_that_markers_are_read_for_is_environment_ymls():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    assert f"python>={CONDA_PYTHON}" in env["dependencies"]


def test_environment_yml_lists_nothing_the_pip_requirements_do_not():
    conda, editable = conda_requirements()
    extra = set(conda) - set(pip_requirements()) - {"python", "pip"}
    assert not extra, f"only in environment.yml: {sorted(extra)}"
    assert editable == ["-e ./course", "-e ."], "environment.yml must install the course and the grader from the checkout"


def test_required_packages_are_declared():
    declared = set(pip_requirements())
    for name in ("jupyterlab", "pytorch", "tiktoken", "matplotlib", "seaborn", "nbgrader", "pytest", "nbval"):
        assert name in declared


def test_torch_requirement_stays_loose_for_colab():
    bound = pip_requirements()["pytorch"]
    assert bound.startswith(">=") and "==" not in bound and "<" not in bound
