"""The class challenge (gptcourse/challenge.py) and its leaderboard (grader/outputs/leaderboard.py).

A small class is built from the release notebook of chapter 05, whose challenge cell is the
baseline entry: the baseline, the same entry again, one with a better learning rate, and one
entry for every kind the grader must refuse. The leaderboard runs them all, each in its sandbox,
on a small budget (the rules are the same at any budget; the real one takes a minute per entry).
"""
import copy
import functools
import json
import os
import shutil
import subprocess
import sys

import pytest
import torch

from factory import REPO, release_notebook, write_notebook
from gptcourse import challenge, data
from grader.outputs import leaderboard

CHAPTER = "05_pretraining"
BUDGET = 4096  # tokens: 16 batches of the small entries below
TIME_LIMIT = 20
SMALL = {"emb_dim": 16, "n_heads": 2, "context_length": 32}


def release_entry_cell():
    return "".join(next(c for c in release_notebook(CHAPTER)["cells"] if c.get("id") == "challenge-entry")["source"])


def entry_source(**changes):
    """The release's challenge cell, made small, with `changes` to its settings."""
    entry = copy.deepcopy(challenge.BASELINE)
    entry["model"].update(SMALL)
    entry.update(changes)
    return f"from gptcourse import challenge\n\nchallenge_entry = {entry!r}\n"


# Every kind of entry the challenge refuses, each as a student might write it.
REFUSED = {
    "over_the_cap": (entry_source() + "challenge_entry['model']['emb_dim'] = 128\n", "invalid", "over the cap"),
    "asks_for_more": (entry_source() + "def train_model(model, train_loader, *args, **kwargs):\n"
                                       "    for i in range(len(train_loader) + 1):\n"
                                       "        train_loader._fetch(i)\n", "over_budget", "asked for batch 16"),
    "reads_the_text": (f"text = open({os.path.join(os.environ.get('GPTCOURSE_DATA_MIRROR', '/data'), 'tinyshakespeare.txt')!r}).read()\n"
                       + entry_source(), "read_data", "tinyshakespeare.txt"),
    "runs_a_program": ("import subprocess\nsubprocess.run(['cat', '/etc/hostname'])\n" + entry_source(),
                       "read_data", "start a program"),
    "carries_text": ("SONNET = " + repr("Shall I compare thee to a summer's day? " * 40) + "\n" + entry_source(),
                     "carries_data", "line 1 holds a text of"),
    "carries_weights": ("START = " + repr([0.01] * 1000) + "\n" + entry_source(), "carries_data", "1,000 values"),
    "too_long": ("# notes\n" * 3000 + entry_source(), "too_large", "at most 20,000"),
    # A model of its own whose weights are not the course's GPTModel's: the grader cannot score them.
    "own_model": (entry_source() + "import torch.nn as nn\n\n_Course = GPTModel\n\n\nclass GPTModel(_Course):\n"
                                   "    def __init__(self, cfg):\n        super().__init__(cfg)\n"
                                   "        self.extra_norm = nn.LayerNorm(cfg['emb_dim'])\n",
                  "bad_weights", "do not fit the course's GPTModel"),
    "vocab_in_the_entry": (entry_source() + "challenge_entry['model']['vocab_size'] = 1000\n", "invalid",
                           "should give exactly"),
    "never_ends": (entry_source() + "def train_model(*args, **kwargs):\n    while True:\n        pass\n",
                   "time_limit", "time limit"),
    "raises": (entry_source() + "raise ValueError('not ready yet')\n", "raised",
               "ValueError: not ready yet (line 4 of your challenge cell)"),
}
SCORED = {
    "baseline": entry_source(),
    "baseline_again": entry_source(),
    "tuned": entry_source(peak_lr=1e-2, warmup_steps=2),
    # Patching the challenge's loss code in its own process changes nothing: the grader scores.
    "patches_the_scoring": entry_source() + "challenge.mean_loss = lambda *args, **kwargs: 0.0\n",
}


# The tests that use it are marked slow: fifteen entries, each trained in a sandbox of its own.
@pytest.fixture(scope="module")
def board(tmp_path_factory):
    folder = tmp_path_factory.mktemp("challenge")
    for student, source in {**SCORED, **{name: cell for name, (cell, _, _) in REFUSED.items()}, "no_entry": None}.items():
        notebook = copy.deepcopy(release_notebook(CHAPTER))
        cell = next(c for c in notebook["cells"] if c.get("id") == "challenge-entry")
        if source is None:
            notebook["cells"].remove(cell)
        else:
            cell["source"] = source
        write_notebook(notebook, folder / "class" / student / f"{CHAPTER}.ipynb")
    rows = leaderboard.leaderboard([str(folder / "class")], str(folder / "out"), jobs=2, budget=BUDGET,
                                   time_limit=TIME_LIMIT, say=lambda line: None)
    return {row["student"]: row for row in rows}, folder / "out"


def test_the_release_notebook_starts_from_the_baseline():
    namespace = {}
    exec(release_entry_cell(), namespace)
    assert namespace["challenge_entry"] == challenge.BASELINE


@pytest.mark.slow
@pytest.mark.parametrize("student", sorted(REFUSED))
def test_each_refused_kind_gets_its_status_a_message_and_no_rank(board, student):
    rows, _ = board
    _, status, said = REFUSED[student]
    row = rows[student]
    assert (row["status"], row["rank"], row["private_loss"]) == (status, None, None), row
    assert said in row["detail"], row["detail"]


@pytest.mark.slow
def test_scored_entries_are_ranked_by_private_loss_with_ties_within_the_noise(board):
    rows, _ = board
    assert all(rows[s]["status"] == "ok" for s in SCORED), {s: rows[s]["detail"] for s in SCORED}
    assert rows["tuned"]["rank"] == 1
    assert rows["tuned"]["private_loss"] < rows["baseline"]["private_loss"] - leaderboard.TIE_WITHIN
    # The same entry twice: the same score, well within the noise, and the same rank.
    assert abs(rows["baseline"]["private_loss"] - rows["baseline_again"]["private_loss"]) < leaderboard.TIE_WITHIN
    assert rows["baseline"]["rank"] == rows["baseline_again"]["rank"] == 2
    # The patched loss code in the entry's own process changed nothing.
    assert rows["patches_the_scoring"]["private_loss"] == rows["baseline"]["private_loss"]
    assert rows["no_entry"]["status"] == "no_entry"


@pytest.mark.slow
def test_tokens_parameters_and_the_curve_are_the_graders_own_count(board):
    rows, out = board
    baseline = rows["baseline"]
    assert baseline["tokens"] == BUDGET
    torch.manual_seed(0)
    from grader.reference.ch04_gpt_model import GPTModel

    cfg = challenge.model_config(json.loads(json.dumps({"model": {**challenge.BASELINE["model"], **SMALL}})))
    assert baseline["parameters"] == sum(p.numel() for p in GPTModel(cfg).parameters())
    tokens = [point[0] for point in baseline["curve"]]
    assert tokens == sorted(tokens) and tokens[-1] == BUDGET and len(tokens) == leaderboard.CHECKPOINTS
    saved = json.loads((out / leaderboard.LEADERBOARD_JSON).read_text())
    assert saved["challenge"]["budget_tokens"] == BUDGET and len(saved["entries"]) == len(rows)
    assert (out / leaderboard.LEADERBOARD_CSV).read_text().splitlines()[1].startswith("1,tuned,")


@pytest.mark.slow
def test_the_dry_run_gives_the_graders_public_loss(board, monkeypatch):
    """The notebook's dry run trains the same batches as the grader: the same model, the same public loss."""
    import grader.reference.ch04_gpt_model as ch04
    import grader.reference.ch05_pretraining as ch05

    rows, _ = board
    namespace = {}
    exec(SCORED["baseline"], namespace)
    monkeypatch.setattr(challenge, "batch_starts", functools.partial(_starts, budget=BUDGET))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as the runner trains
    try:
        loss = challenge.dry_run(namespace["challenge_entry"], {"GPTModel": ch04.GPTModel, "train_model": ch05.train_model})
    finally:
        torch.set_num_threads(threads)
    assert abs(loss - rows["baseline"]["public_loss"]) < 1e-3


_starts = challenge.batch_starts


# ------------------------------------------------------------------------------------------
# The rules' pieces
# ------------------------------------------------------------------------------------------

def test_parameter_count_is_the_course_models():
    from grader.reference.ch04_gpt_model import GPTModel

    for model in ({"emb_dim": 32, "n_layers": 2, "n_heads": 2, "context_length": 64, "drop_rate": 0.0, "qkv_bias": False},
                  {"emb_dim": 24, "n_layers": 3, "n_heads": 4, "context_length": 128, "drop_rate": 0.1, "qkv_bias": True}):
        cfg = challenge.model_config({"model": model})
        with torch.device("meta"):
            assert challenge.parameter_count(cfg) == sum(p.numel() for p in GPTModel(cfg).parameters())


def test_the_loader_replays_what_it_handed_out_and_the_budget_fixes_its_length():
    fetched = []
    loader = challenge.BudgetLoader(3, lambda i: fetched.append(i) or i)
    assert list(loader) == [0, 1, 2] and list(loader) == [0, 1, 2] and fetched == [0, 1, 2]
    starts = challenge.batch_starts(300_000, batch_size=8, context_length=64)
    assert len(starts) == challenge.BUDGET_TOKENS // (8 * 64)
    assert len({s for batch in starts for s in batch}) == len(starts) * 8  # distinct windows


def test_ranks_share_a_place_within_the_noise():
    tie = leaderboard.TIE_WITHIN
    rows = [{"student": s, "status": "ok", "private_loss": loss, "rank": None}
            for s, loss in (("a", 5.0), ("b", 5.0 + 0.75 * tie), ("c", 5.0 + 1.25 * tie), ("d", 5.0 + 2 * tie))]
    ranked = leaderboard.ranked(rows + [{"student": "e", "status": "raised", "private_loss": None, "rank": None}])
    assert [(r["student"], r["rank"]) for r in ranked] == [("a", 1), ("b", 1), ("c", 3), ("d", 3), ("e", None)]


@pytest.mark.parametrize("entry, complaint", [
    ({**challenge.BASELINE, "model": {**challenge.BASELINE["model"], "emb_dim": 33}}, "multiple of n_heads"),
    ({**challenge.BASELINE, "peak_lr": "fast"}, "peak_lr should be a number"),
    ({**challenge.BASELINE, "epochs": 2}, "does not know: epochs"),
    ({k: v for k, v in challenge.BASELINE.items() if k != "seed"}, "lacks seed"),
])
def test_check_entry_says_what_is_wrong(entry, complaint):
    with pytest.raises(challenge.EntryProblem, match=complaint):
        challenge.check_entry(entry)


# ------------------------------------------------------------------------------------------
# Where people look: the grade folder's feedback and class report, Gradescope
# ------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_grade_folder_shows_each_students_line_and_the_report_its_section(board, tmp_path):
    from grader.outputs import challenge_report, gradescope, report

    rows, out = board
    records = [{"submission": s, "notebook": f"{CHAPTER}.ipynb", "notebook_sha": "0" * 64, "chapter": CHAPTER,
                "task": "5.1", "names": ["text_to_token_ids"], "level": "B", "max_points": 2, "seed": 1,
                "device": "cpu", "notes": [], "status": "passed", "points": 2, "feedback": "", "duration_s": 0.1}
               for s in ("baseline", "raises")]
    (tmp_path / "leaderboard.json").write_text((out / leaderboard.LEADERBOARD_JSON).read_text())
    (tmp_path / "run.json").write_text(json.dumps({"seed": 1, "device": "cpu"}))
    report.write_all(records, str(tmp_path), {"seed": 1, "device": "cpu"})
    scored = sum(r["status"] == "ok" for r in rows.values())
    assert (f"**Class challenge:** rank 2 of {scored}, private validation loss {rows['baseline']['private_loss']:.4f}"
            in (tmp_path / "feedback" / "baseline.md").read_text())
    assert "your entry was not ranked: ValueError: not ready yet" in (tmp_path / "feedback" / "raises.md").read_text()
    page = (tmp_path / "report.html").read_text()
    section = page[page.index('<h2 id="challenge">'):]
    assert "<img" in section and section.count("<tr>") == len(rows) + 1
    # Gradescope: the entry's values for its leaderboard, lower is better.
    results = {"output": "the feedback\n"}
    gradescope.add_challenge(results, rows["tuned"])
    assert results["leaderboard"][0] == {"name": "private loss", "value": rows["tuned"]["private_loss"], "order": "asc"}
    assert results["output"].startswith("**Class challenge:** private validation loss")
    assert challenge_report.gradescope_leaderboard(rows["raises"]) is None


@pytest.mark.slow
def test_the_gradescope_autograder_trains_the_submission_and_fills_its_leaderboard(board, tmp_path):
    """The zip of `gradescope --challenge`, unpacked: its own grader, run from its source folder
    on its bundled data (as run_autograder runs it, less the fresh environment that
    tests/grader/test_gradescope.py builds), trains the one submission's entry and gives the
    local leaderboard's score; the results carry it for Gradescope's leaderboard."""
    import zipfile

    from grader.__main__ import main
    from grader.outputs import gradescope

    rows, _ = board
    assert main(["gradescope", "--out", str(tmp_path / "autograder.zip"), "--chapters", CHAPTER, "--challenge"]) == 0
    with zipfile.ZipFile(tmp_path / "autograder.zip") as bundle:
        bundle.extractall(tmp_path / "source")
        settings = json.loads(bundle.read(gradescope.CONFIG))
    assert settings["challenge"] == {"budget_tokens": challenge.BUDGET_TOKENS, "time_limit": challenge.TIME_LIMIT_S}
    assert (tmp_path / "source" / "data" / data.DATASETS[challenge.DATA].filename).is_file()
    notebook = copy.deepcopy(release_notebook(CHAPTER))
    next(c for c in notebook["cells"] if c.get("id") == "challenge-entry")["source"] = SCORED["baseline"]
    write_notebook(notebook, tmp_path / "submission" / f"{CHAPTER}.ipynb")
    work = tmp_path / "work"
    staged, _ = gradescope.stage_submission(str(tmp_path / "submission"), str(work / "staged"), [CHAPTER])
    assert staged
    small = dict(settings["challenge"], budget_tokens=BUDGET, time_limit=TIME_LIMIT)  # the test's budget
    row = gradescope.challenge_row(str(work / "staged"), str(work / "challenge"), small, str(tmp_path / "source"),
                                   str(work))
    assert row["status"] == "ok" and row["private_loss"] == rows["baseline"]["private_loss"]
    results = {"output": ""}
    gradescope.add_challenge(results, row)
    assert results["leaderboard"][0]["value"] == rows["baseline"]["private_loss"]


def worker_with_other_code(tmp_path):
    """A Dask worker's environment in which the course package is a copy whose challenge runner
    fails at once: an entry trained there would come back "raised"."""
    other = tmp_path / "other_course"
    shutil.copytree(REPO / "course" / "gptcourse", other / "gptcourse")
    with open(other / "gptcourse" / "checking" / "challenge_runner.py", "a") as f:
        f.write("\nraise RuntimeError('a worker with other code trained this entry')\n")
    return {"PYTHONPATH": os.pathsep.join([str(other), str(REPO)])}


@pytest.mark.slow
def test_on_a_dask_cluster_the_same_entry_gets_the_same_score(board, tmp_path, capsys):
    """--cluster: the worker holds the training text and the budget, the grader scores; the
    baseline's loss is the one the local run gave, and the budget is still enforced there. A
    second worker with other course code is named and never gets an entry."""
    from grader.cluster.local import LocalCluster

    rows, _ = board
    for student in ("baseline", "asks_for_more"):
        notebook = copy.deepcopy(release_notebook(CHAPTER))
        cell = next(c for c in notebook["cells"] if c.get("id") == "challenge-entry")
        cell["source"] = SCORED.get(student) or REFUSED[student][0]
        write_notebook(notebook, tmp_path / "class" / student / f"{CHAPTER}.ipynb")
    with LocalCluster(workers=2, worker_env={"worker-2": worker_with_other_code(tmp_path)}) as cluster:
        remote = {row["student"]: row for row in leaderboard.leaderboard(
            [str(tmp_path / "class")], str(tmp_path / "out"), jobs=2, budget=BUDGET, time_limit=TIME_LIMIT,
            say=lambda line: None, cluster=cluster.address)}
    assert remote["baseline"]["private_loss"] == rows["baseline"]["private_loss"]
    assert remote["baseline"]["tokens"] == BUDGET
    assert remote["asks_for_more"]["status"] == "over_budget"
    warnings = [line for line in capsys.readouterr().err.splitlines() if "is not used" in line]
    assert len(warnings) == 1 and "course package (gptcourse) or grader differs" in warnings[0], warnings


@pytest.mark.slow
def test_a_cluster_without_a_usable_worker_trains_nothing_and_exits_2(tmp_path):
    notebook = release_notebook(CHAPTER)
    write_notebook(notebook, tmp_path / "class" / "baseline" / f"{CHAPTER}.ipynb")
    from grader.cluster.local import LocalCluster

    with LocalCluster(workers=1, worker_env={"worker-1": worker_with_other_code(tmp_path)}) as cluster:
        result = subprocess.run([sys.executable, "-m", "grader", "leaderboard", str(tmp_path / "class"), "--out",
                                 str(tmp_path / "out"), "--cluster", cluster.address], cwd=REPO,
                                capture_output=True, text=True, timeout=300)
    assert result.returncode == 2, result.stderr
    assert "no worker of the Dask cluster at" in result.stderr and "course package (gptcourse)" in result.stderr
    assert not (tmp_path / "out" / leaderboard.LEADERBOARD_JSON).exists()
