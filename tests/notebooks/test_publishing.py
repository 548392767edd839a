"""docs/publishing.md: every bash block runs, in order, against local stand-ins, and does what
the page says (the stand-ins are described in tests/published.py)."""
import csv
import http.server
import json
import re
import subprocess
import threading
import zipfile
from functools import partial

import pytest

from factory import REPO, grade_id
from gptcourse import data, links
from gptcourse.checking.tasks import CHAPTERS, tasks_of
from published import BLOCK_DONE, DOC, bash_blocks, code_blocks, doc_value, first_wrong_item

PLACEHOLDER_ADDRESS = links.REPOSITORY  # this checkout's address, which the instructor replaces


# -- the page itself (fast) ----------------------------------------------------------------------

def test_the_readme_links_the_page():
    assert "(docs/publishing.md)" in (REPO / "README.md").read_text()


def test_the_page_has_only_blocks_the_tests_know():
    """bash blocks are run; python blocks are the %env line the Colab test uses or configuration
    that must at least compile; text blocks are listings."""
    for language, code in code_blocks():
        assert language in ("bash", "python", "text"), language
        if language == "python" and not code.startswith("%env "):
            compile(code, "publishing.md", "exec")
    assert len(bash_blocks()) >= 6


def data_table():
    """{file in the mirror: (data set, bytes, address, sha256)} from the page's table."""
    rows = {}
    for line in DOC.read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and cells[0].startswith("`"):
            path, name, size, address, sha256 = cells
            url = re.fullmatch(r"\[[^]]+\]\(([^)]+)\)", address).group(1)
            rows[path.strip("`")] = (name.strip("`"), int(size.replace(",", "")), url, sha256.strip("`"))
    return rows


def test_the_mirror_table_is_the_course_data_list():
    expected = {d.filename: (d.name, d.size, d.url, d.sha256) for d in data.DATASETS.values()}
    assert data_table() == expected
    assert "gpt2/model.safetensors" in expected  # the one large file, named on the page


def test_a_cache_filled_by_fetch_is_a_mirror(tmp_path, monkeypatch, mirror_dir):
    """The page says: fetch every data set with GPTCOURSE_CACHE_DIR set, and that folder is a
    mirror. The internet is a local web server here, serving the project's mirror (GPT-2's
    weights are not in it: that one file is left out)."""
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(mirror_dir))
    handler.log_message = lambda *args: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    served = [d for d in data.DATASETS.values() if (mirror_dir / d.filename).is_file() and d.zip_member is None]
    try:
        monkeypatch.delenv(data.MIRROR_ENV_VAR, raising=False)
        monkeypatch.setenv(data.CACHE_ENV_VAR, str(tmp_path / "room-data"))
        for dataset in served:
            data.fetch(dataset.name, url=f"http://127.0.0.1:{server.server_port}/{dataset.filename}")
    finally:
        server.shutdown()
    monkeypatch.setenv(data.MIRROR_ENV_VAR, str(tmp_path / "room-data"))
    monkeypatch.setenv(data.CACHE_ENV_VAR, str(tmp_path / "empty-cache"))
    assert len(served) >= 5
    for dataset in served:
        assert data.fetch(dataset.name) == tmp_path / "room-data" / dataset.filename


# -- the page, run (tests/published.py; the slow part is shared with tests/notebooks/test_colab.py) ----------

@pytest.mark.slow
def test_every_bash_block_ran_to_its_end(published):
    assert published.returncode == 0, published.output[-6000:]
    for number in range(1, len(bash_blocks()) + 1):
        assert f"{BLOCK_DONE} {number} after " in published.output


@pytest.mark.slow
def test_the_pushed_fork_carries_its_own_address_everywhere(published):
    assert published.pushed_commit() != ""  # git push reached the stand-in for GitHub
    assert f'REPOSITORY = "{published.fork}"' in published.pushed("course/gptcourse/links.py")
    requirement = f"gptcourse @ git+{published.fork}.git@main#subdirectory=course"
    for folder in ("solutions", "course"):
        for chapter in CHAPTERS:
            cells = json.loads(published.pushed(f"{folder}/{chapter}.ipynb"))["cells"]
            colab = next(c for c in cells if grade_id(c) == "colab")
            assert requirement in "".join(colab["source"]), f"{folder}/{chapter}"
            assert f"{published.fork}/blob/main/course/{chapter}.ipynb" in "".join(cells[0]["source"])
    files = subprocess.run(["git", "ls-tree", "-r", "--name-only", "main"], cwd=published.fork_git,
                           capture_output=True, text=True, check=True).stdout.split()
    assert not [f for f in files if f.startswith(("dist/", ".venv"))]
    old_host = PLACEHOLDER_ADDRESS.removeprefix("https://")
    left = subprocess.run(["git", "grep", "-l", old_host, "main"], cwd=published.fork_git,
                          capture_output=True, text=True).stdout
    # Only the project's own tests may name the old address; no notebook, no package file.
    assert not [f for f in left.split() if not f.startswith("main:tests/")], left
    # The commands changed the clone, never this checkout (the clone ran with this one's .venv).
    assert published.fork not in (REPO / "course" / "gptcourse" / "links.py").read_text()


@pytest.mark.slow
def test_make_dist_builds_the_student_package_and_nothing_else(published):
    tracked = subprocess.run(["git", "ls-files", "course/gptcourse"], cwd=published.clone, capture_output=True,
                             text=True, check=True).stdout.split()
    package = {path.removeprefix("course/") for path in tracked if path.endswith((".py", ".json"))}
    with zipfile.ZipFile(published.wheel()) as wheel:
        names = set(wheel.namelist())
        metadata = wheel.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert {n for n in names if ".dist-info/" not in n} == package
    assert "gptcourse/checking/fixtures/01_text_data.json" in names  # the self-checks' data are package data
    assert "Requires-Dist: torch>=2.1" in metadata


@pytest.mark.slow
def test_the_mirror_check_reads_the_mirror_offline(published, mirror_dir):
    assert f"{mirror_dir}/the-verdict.txt\n50257\n" in published.output


@pytest.mark.slow
def test_the_workshop_edition_has_an_answer_after_every_task(published):
    for chapter in CHAPTERS:
        nb = json.loads((published.clone / "workshop" / f"{chapter}.ipynb").read_text())
        answers = [c for c in nb["cells"] if "answer" in c["metadata"].get("tags", [])]
        assert len(answers) >= len(tasks_of(chapter)), chapter


@pytest.mark.slow
def test_the_nbgrader_course_directory_has_the_layout_of_the_page(published):
    chapter = doc_value("CHAPTER")
    root = published.course_dir
    for path in ("nbgrader_config.py", f"source/{chapter}/{chapter}.ipynb", f"release/{chapter}/{chapter}.ipynb",
                 "gradebook.db", f"submitted/alice/{chapter}/{chapter}.ipynb",
                 f"autograded/alice/{chapter}/{chapter}.ipynb", "grades.csv"):
        assert (root / path).is_file(), path
    released = json.loads((root / "release" / chapter / f"{chapter}.ipynb").read_text())
    ours = json.loads((published.clone / "course" / f"{chapter}.ipynb").read_text())
    assert [c["source"] for c in released["cells"]] == [c["source"] for c in ours["cells"]]


@pytest.mark.slow
def test_nbgrader_grades_the_student_and_exports_the_gradebook(published):
    """One student with one mistake, in the chapter's first task: that task loses its points,
    every other task gets all of them, in the gradebook and in grades.csv."""
    from grader.nbgrading import course as nbgrader_course

    chapter = doc_value("CHAPTER")
    wrong_task = first_wrong_item(chapter).task
    scores = {task: score for (student, task), score in nbgrader_course.scores(published.course_dir).items()
              if student == "alice"}
    assert set(scores) == {task.id for task in tasks_of(chapter)}
    for task, (score, maximum) in scores.items():
        assert maximum > 0 and score == (0 if task == wrong_task else maximum), (task, score, maximum)
    with open(published.course_dir / "grades.csv", newline="") as f:
        rows = [row for row in csv.DictReader(f) if row["assignment"] == chapter]
    assert [row["student_id"] for row in rows] == ["alice"]
    total = sum(maximum for _, maximum in scores.values())
    assert float(rows[0]["max_score"]) == total
    assert float(rows[0]["score"]) == total - scores[wrong_task][1]
