"""The environment: environment.yml (conda) and the pip requirements say the same thing; the test
processes of make test share the cores without oversubscribing them."""
import os
import re
import tomllib

import yaml

from factory import REPO

# pip name -> conda package name (conda-forge packages Playwright's Python bindings as playwright-python)
CONDA_NAMES = {"torch": "pytorch", "playwright": "playwright-python"}


def pip_requirements():
    requirements = {}
    for path in (REPO / "course" / "pyproject.toml", REPO / "pyproject.toml"):
        project = tomllib.loads(path.read_text())["project"]
        listed = project["dependencies"] + [r for extra in project.get("optional-dependencies", {}).values() for r in extra]
        for requirement in listed:
            name, bound = re.match(r"([A-Za-z0-9_.-]+)\s*(.*)", requirement).groups()
            if name != "gptcourse":  # the course package itself: installed from ./course
                requirements[CONDA_NAMES.get(name.lower(), name.lower())] = bound.replace(" ", "")
    return requirements


def conda_requirements():
    env = yaml.safe_load((REPO / "environment.yml").read_text())
    conda, pip = {}, []
    for entry in env["dependencies"]:
        if isinstance(entry, dict):
            pip += entry["pip"]
            continue
        name, bound = re.match(r"([A-Za-z0-9_.-]+)\s*(.*)", entry).groups()
        conda[name.lower()] = bound.replace(" ", "")
    return conda, pip


def test_every_pip_requirement_is_in_environment_yml_with_the_same_bound():
    conda, _ = conda_requirements()
    for name, bound in pip_requirements().items():
        assert name in conda, f"{name} is a pip requirement but missing from environment.yml"
        assert conda[name] == bound, f"{name}: pip says {bound!r}, environment.yml says {conda[name]!r}"


def test_environment_yml_lists_nothing_the_pip_requirements_do_not():
    conda, pip = conda_requirements()
    extra = set(conda) - set(pip_requirements()) - {"python", "pip"}
    assert not extra, f"only in environment.yml: {sorted(extra)}"
    assert pip == ["-e ./course", "-e ."], "environment.yml must install the course and the grader from the checkout"


def test_required_packages_are_declared():
    declared = set(pip_requirements())
    for name in ("jupyterlab", "pytorch", "tiktoken", "matplotlib", "seaborn", "nbgrader", "pytest", "nbval"):
        assert name in declared


def test_torch_requirement_stays_loose_for_colab():
    bound = pip_requirements()["pytorch"]
    assert bound.startswith(">=") and "==" not in bound and "<" not in bound


def _configured_environment(monkeypatch, **variables):
    import conftest

    for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    conftest.pytest_configure(None)
    return {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}


def test_parallel_test_processes_give_torch_one_thread_each(monkeypatch):
    """make test runs two pytest processes on two cores: with torch's default thread per core in
    each, a master notebook took three times as long (the threads wait on each other)."""
    two = _configured_environment(monkeypatch, PYTEST_XDIST_WORKER="gw0", PYTEST_XDIST_WORKER_COUNT="2")
    assert two == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    assert _configured_environment(monkeypatch) == {"OMP_NUM_THREADS": None, "MKL_NUM_THREADS": None}
    kept = _configured_environment(monkeypatch, PYTEST_XDIST_WORKER="gw1", PYTEST_XDIST_WORKER_COUNT="2",
                                   OMP_NUM_THREADS="4")
    assert kept["OMP_NUM_THREADS"] == "4"


class _Item:
    def __init__(self, nodeid, slow=False):
        self.nodeid, self.slow = nodeid, slow

    def get_closest_marker(self, name):
        return name == "slow" and self.slow or None


def test_the_longest_tests_come_first_and_a_file_stays_together():
    """xdist ordered the files by their number of tests: the masters, all in one process, came last
    and ran alone for the last 20 minutes of make test."""
    import conftest

    masters = "tests/notebooks/test_masters_run.py::test_master_runs_top_to_bottom"
    items = [_Item("tests/chapters/test_ch01.py::test_a"), _Item("tests/chapters/test_ch01.py::test_b"),
             _Item("tests/grader/test_cluster.py::test_x", slow=True),
             _Item(f"{masters}[01_text_data]", slow=True), _Item(f"{masters}[09_instruction]", slow=True),
             _Item("tests/notebooks/test_nbgrader_agreement.py::test_one", slow=True),
             _Item("tests/notebooks/test_nbgrader_agreement.py::test_two", slow=True)]
    conftest.pytest_collection_modifyitems(None, items)
    assert [i.nodeid.split("/")[-1] for i in items] == [
        "test_nbgrader_agreement.py::test_one", "test_nbgrader_agreement.py::test_two",
        "test_masters_run.py::test_master_runs_top_to_bottom[09_instruction]",
        "test_masters_run.py::test_master_runs_top_to_bottom[01_text_data]",
        "test_cluster.py::test_x", "test_ch01.py::test_a", "test_ch01.py::test_b"]


def test_each_master_is_a_unit_of_work_of_its_own_and_other_files_stay_whole():
    import conftest

    scheduler = object.__new__(conftest.longest_first_scheduling())  # _split_scope reads no state
    master = "tests/notebooks/test_masters_run.py::test_master_runs_top_to_bottom[08_lora]"
    assert scheduler._split_scope(master) == master
    assert scheduler._split_scope("tests/grader/test_cluster.py::test_x") == "tests/grader/test_cluster.py"
