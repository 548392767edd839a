"""The Gradescope autograder (grader/outputs/gradescope.py): `python -m grader gradescope --out autograder.zip`.

There is no Gradescope here, so a temporary folder stands for its /autograder: the zip is
unpacked into ROOT/source as Gradescope does (permissions kept), setup.sh runs there and builds a
fresh virtual environment from nothing, run_autograder is copied to ROOT/run_autograder and runs
once per submission with the student's files in ROOT/submission, and ROOT/results/results.json is
checked against a JSON schema written from Gradescope's documented specification
(gradescope-autograders.readthedocs.io, "Autograder Specifications": the results.json fields
and their types, the visibility and output-format values). Its points must equal those of
`python -m grader grade` on the same notebooks with the same seed, and each test's output must
be that task's section of the grader's feedback file.

The fresh environment costs about a minute (torch from the local wheel, the rest from the
package index as configured here); one per module, shared by the tests that need it.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile

import jsonschema
import pytest
import torch

from factory import REPO, corpus_items, filled_notebook, records_by_submission, run_grader, write_notebook
from gptcourse import data
from gptcourse.checking.tasks import tasks_of
from grader.outputs import gradescope

SEED = 2025
CHAPTERS = ("01_text_data", "02_attention")
# A realistic wrong chapter-01 cell from the corpus: its task must lose its points, and only those.
WRONG = next(item for item in corpus_items() if item.chapter == "01_text_data" and item.expect == "wrong")

# Gradescope's results.json, as its specification documents it (every field is optional except
# that a score must be given on the top level or through the tests).
VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
NUMBER = {"type": "number"}
TEXT = {"type": "string"}
TEST_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "score": NUMBER, "max_score": NUMBER, "status": {"enum": ["passed", "failed"]},
        "name": TEXT, "name_format": FORMAT, "number": TEXT, "output": TEXT, "output_format": FORMAT,
        "tags": {"type": "array", "items": TEXT}, "visibility": VISIBILITY, "extra_data": {"type": "object"},
    },
}
RESULTS_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "score": NUMBER, "execution_time": NUMBER, "output": TEXT, "output_format": FORMAT,
        "test_output_format": FORMAT, "test_name_format": FORMAT, "visibility": VISIBILITY,
        "stdout_visibility": VISIBILITY, "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST_SCHEMA}, "leaderboard": {"type": "array"},
    },
    "anyOf": [{"required": ["score"]}, {"required": ["tests"]}],
}


def validated(results):
    jsonschema.validate(results, RESULTS_SCHEMA)
    return results


def unpack(zip_path, folder):
    """What Gradescope does with the zip: its files in `folder`, with the permissions they were zipped with."""
    with zipfile.ZipFile(zip_path) as archive:
        for info in archive.infolist():
            path = archive.extract(info, folder)
            mode = (info.external_attr >> 16) & 0o777
            if mode:
                os.chmod(path, mode)


def plain_env(root, **extra):
    """An environment without this checkout's own settings: nothing of the test's venv, data mirror or caches."""
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "GPTCOURSE_DATA_MIRROR", "GPTCOURSE_CACHE_DIR", "TIKTOKEN_CACHE_DIR")
    env = {key: value for key, value in os.environ.items() if key not in dropped}
    env.update(AUTOGRADER_ROOT=str(root), **extra)
    return env


@pytest.fixture(scope="module")
def autograder_zip(tmp_path_factory):
    out = tmp_path_factory.mktemp("gradescope") / "autograder.zip"
    command = [sys.executable, "-m", "grader", "gradescope", "--out", str(out), "--chapters", *CHAPTERS,
               "--seed", str(SEED)]
    result = subprocess.run(command, capture_output=True, text=True, cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return out


@pytest.fixture(scope="module")
def autograder_root(autograder_zip, tmp_path_factory):
    """ROOT as Gradescope leaves it after building the image: source/ unpacked, setup.sh run, run_autograder copied."""
    root = tmp_path_factory.mktemp("autograder")
    unpack(autograder_zip, root / "source")
    # The torch wheel on this machine's disk instead of PyTorch's CPU index (no internet here);
    # the Python that makes the environment is the one running the tests (the wheel's version).
    env = plain_env(root, GPTCOURSE_TORCH_SPEC=f"torch=={torch.__version__.split('+')[0]}",
                    GPTCOURSE_TORCH_INDEX="", GPTCOURSE_PYTHON=sys.executable)
    result = subprocess.run(["bash", str(root / "source" / "setup.sh")], capture_output=True, text=True,
                            cwd=root / "source", env=env, timeout=1200)
    assert result.returncode == 0, f"setup.sh failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    return root


def submit(root, notebooks):
    """One Gradescope submission: the files in ROOT/submission, run_autograder, results.json."""
    for folder in ("submission", "results"):
        shutil.rmtree(root / folder, ignore_errors=True)
    for name, notebook in notebooks.items():
        write_notebook(notebook, root / "submission" / name)
    (root / "results").mkdir()
    result = subprocess.run([str(root / "run_autograder")], capture_output=True, text=True, cwd=root,
                            env=plain_env(root), timeout=900)
    assert result.returncode == 0, f"run_autograder failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    return validated(json.loads((root / "results" / "results.json").read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def graded(autograder_root, tmp_path_factory):
    """Two submissions graded by the autograder and by `python -m grader grade` (same seed).

    correct: chapters 01 and 02 right, plus chapter 03's notebook, which this assignment does not grade;
    wrong: chapter 01 only, in a sub-folder, with one task's cell from the corpus's wrong answers."""
    wrong_01 = filled_notebook("01_text_data", {WRONG.task: WRONG.source})
    uploads = {
        "correct": {f"{c}.ipynb": filled_notebook(c) for c in (*CHAPTERS, "03_multihead_attention")},
        "wrong": {"my work/01_text_data.ipynb": wrong_01},
    }
    results = {name: submit(autograder_root, files) for name, files in uploads.items()}
    baseline = tmp_path_factory.mktemp("baseline")
    for name, files in uploads.items():
        for path, notebook in files.items():
            if notebook["metadata"]["gptcourse"]["chapter"] in CHAPTERS:
                write_notebook(notebook, baseline / "submissions" / name / path)
    records = run_grader([baseline / "submissions"], baseline / "out", "--seed", str(SEED))
    return results, records_by_submission(records), baseline / "out"


# ------------------------------------------------------------------------------------------
# The zip (no environment needed)
# ------------------------------------------------------------------------------------------

def test_zip_holds_the_scripts_grader_reference_and_data(autograder_zip):
    with zipfile.ZipFile(autograder_zip) as archive:
        names = set(archive.namelist())
        modes = {info.filename: (info.external_attr >> 16) & 0o777 for info in archive.infolist()}
        settings = json.loads(archive.read("gradescope.json"))
        data_files = {name[len("data/"):]: archive.read(name) for name in names if name.startswith("data/")}
    # Gradescope's two files, at the root, executable.
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert {"grader/grading/engine.py", "grader/reference/manifest.json", "grader/grading/expectations.py",
            "course/pyproject.toml", "course/gptcourse/checking/worker_host/__main__.py"} <= names
    assert any(n.startswith("course/gptcourse/checking/fixtures/") and n.endswith(".json") for n in names)
    assert settings["chapters"] == list(CHAPTERS) and settings["seed"] == SEED
    # Nothing the autograder does not need: no masters, no notebooks, no caches.
    assert not [n for n in names if n.startswith("solutions/") or n.endswith((".ipynb", ".pyc"))]
    # The data mirror the grader reads offline: the text and tiktoken's two GPT-2 files, checked by sha256.
    for dataset in (data.DATASETS["the-verdict"], data.DATASETS["gpt2-vocab"], data.DATASETS["gpt2-encoder"]):
        assert hashlib.sha256(data_files[dataset.filename]).hexdigest() == dataset.sha256


def test_zip_is_the_same_for_the_same_settings(autograder_zip, tmp_path):
    again = tmp_path / "again.zip"
    subprocess.run([sys.executable, "-m", "grader", "gradescope", "--out", str(again), "--chapters", *CHAPTERS,
                    "--seed", str(SEED)], check=True, capture_output=True, cwd=REPO, timeout=300)
    assert again.read_bytes() == autograder_zip.read_bytes()


# ------------------------------------------------------------------------------------------
# run_autograder without the fresh environment: submissions that never reach a worker
# ------------------------------------------------------------------------------------------

def source_root(autograder_zip, tmp_path, **changes):
    root = tmp_path / "autograder"
    unpack(autograder_zip, root / "source")
    settings_path = root / "source" / "gradescope.json"
    settings_path.write_text(json.dumps({**json.loads(settings_path.read_text()), **changes}))
    return root


def test_a_submission_without_notebooks_gets_zero_for_every_task_and_says_why(autograder_zip, tmp_path):
    root = source_root(autograder_zip, tmp_path)
    (root / "submission").mkdir()
    (root / "submission" / "notes.txt").write_text("I forgot the notebooks")
    assert gradescope.run(str(root)) == 0
    results = validated(json.loads((root / "results" / "results.json").read_text()))
    expected_tasks = [t.id for c in CHAPTERS for t in tasks_of(c)]
    assert [t["number"] for t in results["tests"]] == expected_tasks
    assert results["score"] == 0 and all(t["score"] == 0 and t["max_score"] > 0 for t in results["tests"])
    for test in results["tests"]:
        chapter = test["tags"][0]
        assert f"No notebook of chapter {chapter}" in test["output"] and f"{chapter}.ipynb" in test["output"]


def test_a_failed_grade_command_gives_no_score_and_blames_the_machine(autograder_zip, tmp_path):
    # An unusable setting makes `python -m grader grade` stop with an error, as a machine problem would.
    root = source_root(autograder_zip, tmp_path, timeout="not a number")
    write_notebook(filled_notebook("02_attention"), root / "submission" / "02_attention.ipynb")
    assert gradescope.run(str(root)) == 1
    results = validated(json.loads((root / "results" / "results.json").read_text()))
    assert "score" not in results and not any("score" in t for t in results["tests"])
    assert "problem on the grading machine" in results["output"]
    assert results["stdout_visibility"] == "hidden"


# ------------------------------------------------------------------------------------------
# The fresh environment: setup.sh, then run_autograder on a correct and a wrong submission
# ------------------------------------------------------------------------------------------

@pytest.mark.slow  # a fresh virtual environment, as Gradescope's image builds
def test_setup_installs_what_grading_needs_and_not_the_notebook_tools(autograder_root):
    python = autograder_root / "venv" / "bin" / "python"
    probe = ("import importlib.util, json; print(json.dumps({m: importlib.util.find_spec(m) is not None for m in "
             "['torch', 'gptcourse', 'nbformat', 'tiktoken', 'pandas', 'grader', 'nbgrader', 'jupyterlab', "
             "'nbclient', 'ipykernel']}))")
    # Run from elsewhere: the grader is found only in source/, where run_autograder starts it.
    found = json.loads(subprocess.run([str(python), "-c", probe], capture_output=True, text=True, check=True,
                                      cwd=autograder_root, env=plain_env(autograder_root)).stdout)
    assert found == {"torch": True, "gptcourse": True, "nbformat": True, "tiktoken": True, "pandas": True,
                     "grader": False, "nbgrader": False, "jupyterlab": False, "nbclient": False, "ipykernel": False}


@pytest.mark.slow  # a fresh virtual environment, as Gradescope's image builds
def test_points_equal_those_of_the_grade_command(graded):
    results, baseline, _ = graded
    for name, result in results.items():
        scores = {t["number"]: t["score"] for t in result["tests"]}
        maxima = {t["number"]: t["max_score"] for t in result["tests"]}
        assert list(scores) == [t.id for c in CHAPTERS for t in tasks_of(c)]
        for task, record in baseline[name].items():
            assert (scores[task], maxima[task]) == (record["points"], record["max_points"]), (name, task)
        assert result["score"] == sum(scores.values())
    correct, wrong = results["correct"], results["wrong"]
    assert correct["score"] == sum(t["max_score"] for t in correct["tests"]) > 0
    # The wrong cell costs its task's points; chapter 02 was not uploaded: 0 for each of its tasks.
    for test in wrong["tests"]:
        lost = test["number"] == WRONG.task or test["tags"] == ["02_attention"]
        assert test["score"] == (0 if lost else test["max_score"]), test["number"]
        assert test["status"] == ("failed" if lost else "passed")
    assert "No notebook of chapter 02_attention" in next(t for t in wrong["tests"] if t["number"] == "2.1")["output"]


@pytest.mark.slow  # a fresh virtual environment, as Gradescope's image builds
def test_each_test_shows_the_tasks_feedback_from_the_feedback_file(graded):
    results, baseline, out = graded
    for name, result in results.items():
        feedback_file = (out / "feedback" / f"{name}.md").read_text(encoding="utf-8")
        for test in result["tests"]:
            if test["number"] in baseline[name]:
                assert test["output"].strip() in feedback_file, (name, test["number"])
                assert test["output_format"] == "md" and test["visibility"] == "visible"


@pytest.mark.slow  # a fresh virtual environment, as Gradescope's image builds
def test_stdout_is_hidden_and_other_chapters_are_not_graded(graded):
    results, _, _ = graded
    correct = results["correct"]
    assert all(r["stdout_visibility"] == "hidden" for r in results.values())
    assert not any(t["number"].startswith("3.") for t in correct["tests"])
    assert "03_multihead_attention.ipynb" in correct["output"] and "not graded" in correct["output"]


def test_a_bundled_late_policy_uses_gradescopes_submission_time(tmp_path, capsys):
    """gradescope --policy: the policy goes into the zip's settings; each submission's time is
    Gradescope's created_at, its student the submitter's email (as the extensions CSV names them)."""
    from grader.__main__ import main

    (tmp_path / "policy.toml").write_text('timezone = "America/New_York"\n[penalty]\nper_day = 0.2\n'
                                          '[extensions]\nfile = "extensions.csv"\n'
                                          '[chapters.01_text_data]\ndue = 2026-09-20T23:59:00\n')
    (tmp_path / "extensions.csv").write_text("student,chapter,due\nlee@uni.edu,01,2026-09-22 23:59\n")
    assert main(["gradescope", "--out", str(tmp_path / "a.zip"), "--chapters", "01_text_data",
                 "--policy", str(tmp_path / "policy.toml")]) == 0
    with zipfile.ZipFile(tmp_path / "a.zip") as bundle:
        settings = json.loads(bundle.read(gradescope.CONFIG))
    records = [{"submission": "submission", "chapter": "01_text_data", "task": t.id, "names": list(t.names),
                "level": t.level, "notebook": "01_text_data.ipynb", "max_points": 2, "points": 2,
                "status": "passed", "feedback": "", "notes": []} for t in tasks_of("01_text_data")]
    metadata = {"created_at": "2026-09-21T10:00:00.000000-04:00", "users": [{"email": "kim@uni.edu"}]}
    late = gradescope.late_records(records, settings["policy"], metadata)
    results = gradescope.results_json(late, settings, None, [])
    assert results["score"] == round(len(records) * 2 * 0.8, 2)
    assert "01_text_data: Submitted 2026-09-21 10:00 EDT, 1 day late: -20% of the points" in results["output"]
    # lee has an extension to the 22nd: the same time is on time for her.
    metadata["users"] = [{"email": "lee@uni.edu"}]
    assert gradescope.results_json(gradescope.late_records(records, settings["policy"], metadata),
                                   settings, None, [])["score"] == len(records) * 2
