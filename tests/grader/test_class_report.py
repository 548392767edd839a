"""The class report (grader/outputs/class_report.py): DIR/report.html after grading.

Synthetic records check what the page says (counts, order of mistakes, links, escaping, the
embedded plots); a small grade run checks that every run writes one; headless Chromium checks
that a browser really shows it, plots included.
"""
import base64
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from browsers import chromium
from factory import CORPUS, REPO, filled_notebook, run_grader, write_notebook
from gptcourse.checking import findings
from gptcourse.checking.findings import Finding
from grader.outputs import class_report, report
from grader.grading import gradefolder
from grader.outputs.class_report import mistake_of

HOSTILE = '<script>alert("x")</script>'
RUN = {"seed": 4242, "device": "cpu", "torch": "2.13.0", "cuda": None, "isolation": {"sandbox": "none"}}
CASE = "Failed on a batch of 2 sequences of 6 tokens, float32 [cpu]: "
KNOWN = CASE + "Attention weights: wrong — it looks like the scores are scaled: simple self-attention uses the raw dot products"
HINT = (CASE + "Context vectors: not the expected values, largest difference {diff} at index [0, 2, 1] (yours 0.1, "
        "expected 0.4000) — the context vectors are a weighted sum of the inputs: multiply the weights by the inputs")
RAISED = ("Failed on d_in=3, d_out=2 [cpu]: RuntimeError while creating SelfAttention_v1(d_in=3, d_out=2) at line 4: "
          "y = x @ self.W: mat1 and mat2 shapes cannot be multiplied (2x3 and 2x2) — a matrix product with "
          "mismatched shapes: check which dimensions you transpose")
TIMEOUT = "your code did not finish within 60 s and was stopped (an infinite loop, or far too much work?)"
REJECTED = "the notebook file is not valid notebook JSON (Expecting value at line 1, column 1) <img src=x onerror=alert(1)>"
NO_HINT = "Failed on 10 messages [cpu]: The returned value: expected 3, got 4"
PASSED = "All 4 hidden test cases passed."
ON_CASE = {"case": "a batch of 2 sequences of 6 tokens, float32", "device": "cpu"}
# What the verdict records next to each message above (grader/grading/verdict.py): the report groups on it.
FINDINGS = {
    KNOWN: Finding("known mistake", observed="Attention weights", **ON_CASE,
                   mistake="the scores are scaled: simple self-attention uses the raw dot products"),
    HINT: Finding("wrong result", observed="Context vectors", difference="not the expected values", **ON_CASE,
                  hint="the context vectors are a weighted sum of the inputs: multiply the weights by the inputs"),
    RAISED: Finding("error", case="d_in=3, d_out=2", device="cpu", error_type="RuntimeError",
                    step="creating SelfAttention_v1(d_in=3, d_out=2)",
                    hint="a matrix product with mismatched shapes: check which dimensions you transpose"),
    TIMEOUT: Finding("timeout", detail="did not finish in time"),
    REJECTED: Finding("rejected", detail=REJECTED),
    NO_HINT: Finding("wrong result", case="10 messages", device="cpu", observed="The returned value",
                     difference="a different value"),
}

# (submission, task, status, feedback, seconds)
ROWS = [
    ("alice", "2.1", "failed", KNOWN, 1.0), ("bob", "2.1", "failed", KNOWN, 1.1), ("carol", "2.1", "failed", KNOWN, 0.9),
    ("dave", "2.1", "failed", HINT.format(diff="0.31"), 1.0), ("erin", "2.1", "failed", HINT.format(diff="2.5"), 1.2),
    (HOSTILE, "2.1", "error", REJECTED, 0.0),
    ("alice", "2.2", "passed", PASSED, 2.0), ("bob", "2.2", "error", RAISED, 2.5), ("carol", "2.2", "timeout", TIMEOUT, 60.0),
    ("dave", "2.2", "passed", PASSED, 2.1), ("erin", "2.2", "passed", PASSED, 1.9), (HOSTILE, "2.2", "error", REJECTED, 0.0),
    ("alice", "7.1", "passed", PASSED, 6.4), ("bob", "7.1", "passed", PASSED, 6.0), ("carol", "7.1", "passed", PASSED, 6.1),
    ("dave", "7.1", "passed", PASSED, 7.5), ("erin", "7.1", "failed", NO_HINT, 6.6),
    ("alice", "1.1", "passed", PASSED, 0.5), ("bob", "1.1", "passed", PASSED, 0.4),
]
CHAPTER = {"1": "01_text_data", "2": "02_attention", "7": "07_classification"}
NAMES = {"1.1": ["SimpleTokenizerV2"], "2.1": ["simple_self_attention"], "2.2": ["SelfAttention_v1"],
         "7.1": ["create_balanced_dataset", "random_split"]}


def finding_for(feedback):
    """The finding recorded with one of the messages above (HINT's with any difference)."""
    return FINDINGS[HINT if feedback.startswith(HINT.split("{diff}")[0]) else feedback].to_json()


def synthetic_records():
    records = []
    for submission, task, status, feedback, seconds in ROWS:
        chapter = CHAPTER[task.split(".")[0]]
        records.append({"submission": submission, "notebook": f"{chapter}.ipynb", "chapter": chapter, "task": task,
                        "names": NAMES[task], "level": "B", "max_points": 2, "seed": 4242, "device": "cpu",
                        "notes": [], "status": status, "points": 2 if status == "passed" else 0,
                        "feedback": feedback, "duration_s": seconds,
                        "finding": None if status == "passed" else finding_for(feedback)})
    return records


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    """A gradebook folder written by report.write_all (grades, feedback files, report.html)."""
    out = tmp_path_factory.mktemp("synthetic")
    report.write_all(synthetic_records(), str(out), RUN)
    (out / "run.json").write_text(json.dumps(RUN))
    return out


def task_segment(page, task_id):
    """The page's part about one task in the mistakes section: its heading to the next one."""
    start = page.index(f'<h3 id="task-{task_id}">')
    end = min(i for i in (page.find("<h3", start + 1), page.find("<h2", start + 1), len(page)) if i > 0)
    return page[start:end]


def mistake_rows(segment):
    """[(count, count text, kind, label)] of a task's mistake table, in the page's order."""
    rows = re.findall(r'<tr class="mistake"><td class="count">((\d+) students? [^<]*?) \(\d+%\)</td>'
                      r'<td><span class="kind [^"]*">([^<]*)</span> <span class="label">([^<]*)</span>', segment)
    return [(int(count), html.unescape(text), kind, html.unescape(label)) for text, count, kind, label in rows]


# ------------------------------------------------------------------------------------------
# Mistake labels
# ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("finding, expected", [
    (FINDINGS[KNOWN], ("known mistake", "the scores are scaled: simple self-attention uses the raw dot products")),
    (FINDINGS[HINT], ("wrong result", "Context vectors: the context vectors are a weighted sum of the inputs")),
    (FINDINGS[NO_HINT], ("wrong result", "The returned value: a different value")),
    (Finding("wrong result", observed="Output of forward (eval mode)", difference="wrong shape"),
     ("wrong result", "Output of forward (eval mode): wrong shape")),
    (Finding("wrong result", observed="The targets", difference="wrong items",
             hint="row 1: the padding token at position 2 was kept: every padding token after the first becomes "
                  "ignore_index (-100)"),
     ("wrong result", "The targets: the padding token at position 2 was kept")),
    (Finding("wrong result", observed="The samples", difference="the samples follow another distribution — it "
                                                                "looks like top-k keeps k + 1 tokens"),
     ("wrong result", "The samples: the samples follow another distribution")),
    (FINDINGS[RAISED], ("error", "RuntimeError while creating SelfAttention_v1")),
    (Finding("error", step="calling format_input({'instruction': 'Classify: the followi...)",
             detail="format_input should return a str, got NoneType: return the string (print only shows it)"),
     ("error", "while calling format_input: format_input should return a str, got NoneType")),
    (Finding("error", error_type="NotImplementedError", step="calling forward(x) (step 2)"),
     ("error", "not implemented yet (NotImplementedError)")),
    (Finding("error", detail="your solution cell has a syntax error on line 7: invalid syntax"),
     ("error", "your solution cell has a syntax error on line N")),
    (FINDINGS[TIMEOUT], ("timeout", "did not finish in time")),
    (FINDINGS[REJECTED], ("rejected", "the notebook file is not valid notebook JSON <img src=x onerror=alert>")),
    (Finding("rejected", detail="the .zip file is damaged (File is not a zip file)"),
     ("rejected", "the .zip file is damaged")),
    (Finding("grader fault", detail="the grader could not prepare this task"),
     ("grader fault", "the grader could not prepare this task")),
])
def test_mistake_labels_leave_out_what_differs_between_students(finding, expected):
    assert mistake_of({"status": "failed", "feedback": "(not read)", "finding": finding.to_json()}) == expected


def test_the_same_mistake_with_other_numbers_has_one_label():
    """The judge records the sort of a difference, not its numbers; the report drops a step's."""
    from gptcourse.checking.judge import _difference

    want = np.zeros((2, 6, 2))
    messages, sorts = zip(*(_difference("Context vectors", want + d, want) for d in (0.31, 2.5, 1e-3)))
    assert len(set(messages)) == 3 and set(sorts) == {"not the expected values"}
    error = FINDINGS[RAISED].to_json()
    steps = {mistake_of({"finding": dict(error, step=f"calling forward(x) (step {n})")}) for n in (4, 12)}
    assert steps == {("error", "RuntimeError while calling forward")}


def test_the_judge_s_findings_keep_what_tells_mistakes_apart():
    """A kind's own sentence that starts with the observation's name does not repeat it; a key with
    no name for students is left out; a structure finding says which attribute differs."""
    from gptcourse.checking.judge import _attribute_differences, _owned_finding

    prompt = _owned_finding("9.1", "prompt", "The returned prompt: the right text with extra whitespace: strip it")
    assert mistake_of({"finding": prompt.to_json()}) == (
        "wrong result", "The returned prompt: the right text with extra whitespace")
    internal = _owned_finding("9.1", "train_0", "in train mode the output is the eval-mode output: drop weights")
    assert mistake_of({"finding": internal.to_json()}) == ("wrong result", "in train mode the output is the eval-mode output")
    differences = _attribute_differences({"W_query": "nn.Linear(bias=True)", "W_key": "nn.Linear(bias=False)"},
                                         {"W_query": "nn.Linear(bias=False)", "W_key": "nn.Linear(bias=False)"})
    assert differences == ["`W_query` should be nn.Linear(bias=False), yours is nn.Linear(bias=True)"]


def test_labels_come_from_the_finding_not_from_the_message():
    """Rewording a message must not regroup the class: the label never reads the feedback."""
    finding = FINDINGS[KNOWN].to_json()
    reworded = [{"status": "failed", "feedback": text, "finding": finding}
                for text in (KNOWN, KNOWN.replace("it looks like", "you probably"), "Something else entirely: x")]
    assert {mistake_of(record) for record in reworded} == {("known mistake", FINDINGS[KNOWN].mistake)}


@pytest.mark.parametrize("finding", [
    None, "known mistake", {"kind": "made up"}, {"kind": "error", "step": 3},
    {"kind": "error", "detail": "x", "script": "<b>"}, ["kind", "error"],
])
def test_a_record_without_a_well_formed_finding_is_grouped_by_its_status_and_message(finding):
    """grades.json of an older grader (no findings), or a damaged one: the status gives the kind,
    the message's first clause the label."""
    record = {"status": "failed", "feedback": "Failed on a case [cpu]: The returned value: expected 3, got 4",
              "finding": finding}
    assert mistake_of(record) == ("wrong result", "Failed on a case [cpu]")
    assert mistake_of(dict(record, status="timeout", feedback=TIMEOUT)) == (
        "timeout", "your code did not finish within 60 s and was stopped")
    assert mistake_of(dict(record, status="error", feedback=None)) == ("error", "(no feedback)")


def test_the_report_explains_every_kind_of_finding():
    assert tuple(class_report.KINDS) == findings.KINDS


# ------------------------------------------------------------------------------------------
# What the page says
# ------------------------------------------------------------------------------------------

def test_header_counts_the_class(synthetic):
    page = (synthetic / "report.html").read_text(encoding="utf-8")
    assert "<dt>submissions</dt><dd>6</dd>" in page
    assert "<dt>tasks graded</dt><dd>4 tasks of 3 chapters (19 task records)</dd>" in page
    assert "<dt>status</dt><dd>9 passed, 6 failed, 3 error, 1 timeout</dd>" in page
    assert "<dt>hidden test seed</dt><dd>4242</dd>" in page and "<dt>device</dt><dd>cpu</dd>" in page


def test_mistakes_per_task_are_counted_and_ordered(synthetic):
    page = (synthetic / "report.html").read_text(encoding="utf-8")
    rows = mistake_rows(task_segment(page, "2.1"))
    assert rows == [
        (3, "3 students made this mistake", "known mistake",
         "the scores are scaled: simple self-attention uses the raw dot products"),
        (2, "2 students made this mistake", "wrong result",
         "Context vectors: the context vectors are a weighted sum of the inputs"),
        (1, "1 student had this notebook rejected", "rejected", "the notebook file is not valid notebook JSON "
                                                                "<img src=x onerror=alert>"),
    ]
    assert "0 of 6 passed" in task_segment(page, "2.1")
    rows_22 = mistake_rows(task_segment(page, "2.2"))
    assert [r[0] for r in rows_22] == [1, 1, 1]
    assert {r[2] for r in rows_22} == {"error", "timeout", "rejected"}
    assert ("1 student got this error", "RuntimeError while creating SelfAttention_v1") in [(r[1], r[3]) for r in rows_22]
    assert mistake_rows(task_segment(page, "7.1")) == [
        (1, "1 student made this mistake", "wrong result", "The returned value: a different value")]
    assert "Every student passed." in task_segment(page, "1.1")


def test_only_the_top_mistakes_are_listed(tmp_path):
    """Seven mistakes on one task: five rows, and a line for the other two."""
    records = []
    for i in range(7):
        for j in range(7 - i):  # mistake i is made by 7 - i students
            records.append({"submission": f"s{i}-{j}", "chapter": "02_attention", "task": "2.1", "names": ["f"],
                            "status": "failed", "points": 0, "max_points": 1, "duration_s": 1.0,
                            "feedback": f"{CASE}Attention weights: wrong — it looks like mistake number {i}",
                            "finding": {"kind": "known mistake", "mistake": f"mistake number {i}"}})
    page = Path(class_report.write_report(records, str(tmp_path), RUN)).read_text(encoding="utf-8")
    rows = mistake_rows(task_segment(page, "2.1"))
    assert [(r[0], r[3]) for r in rows] == [(7 - i, f"mistake number {i}") for i in range(5)]
    assert "2 other mistakes, by 3 students" in page


def test_problem_submissions_link_to_feedback_files_that_exist(synthetic, tmp_path):
    page = (synthetic / "report.html").read_text(encoding="utf-8")
    section = page[page.index('<h2 id="problems">'):]
    problems = [html.unescape(name) for name in re.findall(r'<tr class="problem"><td>([^<]*)</td>', section)]
    assert problems == sorted(["bob", "carol", HOSTILE])  # error, timeout, rejected; not the failed ones
    links = re.findall(r'href="([^"]*)"', section)
    assert len(links) == 3
    for link in links:
        target = synthetic / urllib.parse.unquote(html.unescape(link))
        assert target.is_file(), link
    assert f'href="feedback/{gradefolder.safe_name(HOSTILE)}.md"' in section
    # A feedback file that is missing is not linked.
    shutil.copytree(synthetic, tmp_path / "copy")
    os.unlink(tmp_path / "copy" / "feedback" / "carol.md")
    again = Path(class_report.write_report(synthetic_records(), str(tmp_path / "copy"), RUN)).read_text(encoding="utf-8")
    carol = re.search(r'<tr class="problem"><td>carol</td>.*?</tr>', again).group()
    assert "href" not in carol and "no feedback file" in carol


def test_untrusted_text_is_escaped(synthetic):
    page = (synthetic / "report.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower()  # the page has no script of its own: any would be a student's
    assert "<img src=x" not in page
    assert html.escape(HOSTILE) in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page  # the feedback, shown as text


def test_plots_are_embedded_pngs_and_nothing_is_fetched(synthetic):
    page = (synthetic / "report.html").read_text(encoding="utf-8")
    sources = re.findall(r'<img [^>]*src="([^"]*)"', page)
    assert len(sources) == 3  # overall, chapters, tasks
    for source in sources:
        assert source.startswith("data:image/png;base64,")
        data = base64.b64decode(source.split(",", 1)[1], validate=True)
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
        image = Image.open(io.BytesIO(data))
        image.load()
        assert image.width >= 600 and image.height >= 200
    assert not re.search(r'(src|href)="(https?:)?//', page)
    assert "<link" not in page and "@import" not in page


def test_timing_tables_put_the_slowest_first(synthetic):
    page = (synthetic / "report.html").read_text(encoding="utf-8")
    timing = page[page.index('<h2 id="timing">'):page.index('<h2 id="problems">')]
    tasks = re.findall(r"<tr><td>([\d.]+)</td><td>[^<]*</td><td class=\"num\">\d+</td>"
                       r"<td class=\"num\">([\d.]+) s</td><td class=\"num\">([\d.]+) s</td>", timing)
    assert [t[0] for t in tasks] == ["2.2", "7.1", "2.1", "1.1"]  # means 11.42, 6.52, 0.87, 0.45 s
    assert tasks[0][1:] == ("11.42", "60.00")
    slowest = re.findall(r"<tr><td>([^<]*)</td><td class=\"num\">([\d.]+) s</td>", timing)
    assert slowest[0] == ("carol", "67.00")


def test_report_command_rebuilds_the_file(synthetic, tmp_path):
    out = tmp_path / "out"
    shutil.copytree(synthetic, out)
    before = (out / "report.html").read_text(encoding="utf-8")
    os.unlink(out / "report.html")
    result = subprocess.run([sys.executable, "-m", "grader", "report", str(out)], capture_output=True, text=True,
                            cwd=REPO, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(out / "report.html")
    after = (out / "report.html").read_text(encoding="utf-8")

    def without_dates(page):
        return re.sub(r"<dt>(graded|report written)</dt><dd>[^<]*</dd>", "", page)

    # The same page, plots too (matplotlib draws the same pixels from the same numbers).
    assert without_dates(after) == without_dates(before)
    missing = subprocess.run([sys.executable, "-m", "grader", "report", str(tmp_path / "nowhere")],
                             capture_output=True, text=True, cwd=REPO, timeout=300)
    assert missing.returncode == 1 and "grades.json" in missing.stderr


def test_a_large_class_is_reported_quickly(tmp_path):
    """500 students x 40 tasks: a few seconds (about 1.2 s on two CPU cores); the bound only
    catches a report that grows much faster than the class."""
    rng = np.random.default_rng(0)
    kinds = [KNOWN, HINT.format(diff="0.5"), RAISED, NO_HINT, TIMEOUT, REJECTED]
    records = []
    for s in range(500):
        for t in range(40):
            passed = rng.random() < 0.7
            records.append({"submission": f"student{s:03d}", "chapter": f"0{t // 5 + 1}_chapter",
                            "task": f"{t // 5 + 1}.{t % 5 + 1}", "names": [f"name{t}"], "level": "B",
                            "max_points": 2, "points": 2 if passed else 0, "duration_s": float(rng.exponential(3)),
                            "status": "passed" if passed else "failed",
                            "feedback": PASSED if passed else kinds[int(rng.integers(len(kinds)))]})
            records[-1]["finding"] = None if passed else finding_for(records[-1]["feedback"])
    class_report.render(records[:10], str(tmp_path), RUN)  # imports seaborn and friends
    start = time.perf_counter()
    path = class_report.write_report(records, str(tmp_path), RUN)
    seconds = time.perf_counter() - start
    assert seconds < 15, f"the report of 500 x 40 records took {seconds:.1f} s"
    assert os.path.getsize(path) < 5 * 2**20


# ------------------------------------------------------------------------------------------
# A real grade run writes the report
# ------------------------------------------------------------------------------------------

def test_every_grade_run_writes_the_report(tmp_path):
    subs = tmp_path / "subs"
    write_notebook(filled_notebook("02_attention"), subs / "ana" / "02_attention.ipynb")
    wrong = (CORPUS / "2.4" / "wrong_no_scaling.py").read_text()
    write_notebook(filled_notebook("02_attention", {"2.4": wrong}), subs / "ben" / "02_attention.ipynb")
    (subs / "cleo").mkdir()
    (subs / "cleo" / "02_attention.ipynb").write_text("{ not json")
    out = tmp_path / "out"
    records = run_grader([subs], out, "--jobs", "2", "--device", "cpu", "--seed", "7")

    page = (out / "report.html").read_text(encoding="utf-8")
    assert "<dt>submissions</dt><dd>3</dd>" in page
    ben = next(r for r in records if r["submission"] == "ben" and r["task"] == "2.4")
    assert ben["status"] == "failed"
    kind, label = mistake_of(ben)
    assert kind in ("known mistake", "wrong result")
    assert sorted(mistake_rows(task_segment(page, "2.4"))) == sorted([
        (1, "1 student made this mistake", kind, label),
        (1, "1 student had this notebook rejected", "rejected", "the notebook file is not valid notebook JSON")])
    assert "1 of 3 passed" in task_segment(page, "2.4") and "2 of 3 passed" in task_segment(page, "2.1")
    section = page[page.index('<h2 id="problems">'):]
    assert re.findall(r'<tr class="problem"><td>([^<]*)</td>', section) == ["cleo"]
    assert 'href="feedback/cleo.md"' in section and (out / "feedback" / "cleo.md").is_file()


# ------------------------------------------------------------------------------------------
# In a browser
# ------------------------------------------------------------------------------------------

def screenshot(page, png, profile):
    command = [chromium("the class report's browser test"), "--headless", "--disable-gpu", "--no-sandbox", "--hide-scrollbars",
               "--force-device-scale-factor=1", f"--user-data-dir={profile}", f"--screenshot={png}",
               "--window-size=1280,2000", page.as_uri()]
    result = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert result.returncode == 0 and png.is_file(), f"chromium failed:\n{result.stdout}\n{result.stderr[-3000:]}"
    return np.asarray(Image.open(png).convert("RGB")).astype(int)


def near(pixels, colour, tolerance=8):
    return (np.abs(pixels - np.array(colour)).max(axis=-1) <= tolerance).sum()


def test_a_browser_shows_the_report_with_its_plots(synthetic, tmp_path):
    pixels = screenshot(synthetic / "report.html", tmp_path / "report.png", tmp_path / "profile")
    assert pixels.shape == (2000, 1280, 3)
    not_white = (pixels < 245).any(axis=-1).mean()
    colours = len(np.unique(pixels.reshape(-1, 3) // 4, axis=0))
    assert not_white > 0.08, f"only {not_white:.1%} of the page is not white"
    assert colours > 300, f"only {colours} distinct colours: text and plots missing?"
    # The plots themselves: the overall histogram's bars and the task chart's "passed" bars.
    assert near(pixels, (0x01, 0x73, 0xb2)) > 3000, "no histogram bars: the embedded images did not render"
    assert near(pixels, (0x02, 0x9e, 0x73)) > 3000, "no task chart bars: the embedded images did not render"


def test_the_browser_check_fails_on_a_page_without_plots(synthetic, tmp_path):
    """The check above can fail: the same page with its images removed has none of their colours."""
    page = (synthetic / "report.html").read_text(encoding="utf-8")
    stripped = tmp_path / "report.html"
    stripped.write_text(re.sub(r'src="data:image/png;base64,[^"]*"', 'src="data:image/png;base64,AAAA"', page),
                        encoding="utf-8")
    pixels = screenshot(stripped, tmp_path / "stripped.png", tmp_path / "profile")
    assert near(pixels, (0x01, 0x73, 0xb2)) < 500 and near(pixels, (0x02, 0x9e, 0x73)) < 500


@pytest.mark.parametrize("count", [0, 1])
def test_an_empty_or_one_record_gradebook_still_gives_a_page(tmp_path, count):
    page = Path(class_report.write_report(synthetic_records()[:count], str(tmp_path), {})).read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert f"<dt>submissions</dt><dd>{count}</dd>" in page
    assert ("No task records" in page) == (count == 0)
    assert len(re.findall(r'<img [^>]*src="data:image/png', page)) == (3 if count else 0)
