"""The class report: DIR/report.html, one page an instructor opens after grading.

One self-contained file (CSS inline, plots as base64 PNG, no JavaScript, nothing fetched),
so it opens offline and can be mailed or archived. It shows:
- the run (submissions, tasks, device, seed, dates) and the distribution of overall scores;
- scores per chapter (a histogram each) and, per task, the share of students by status;
- per task, the most frequent mistakes and how many students made each;
- the tasks and submissions that took longest;
- the submissions that errored, timed out, ran out of memory or could not be read, linked to their feedback;
- similar work, when `python -m grader similarity DIR` has compared the class (DIR/similarity.json,
  grader/outputs/similarity.py): per task, the pairs of students whose cells are alike, and apart
  from them the cells that match a reference folder, each linked to its side-by-side page.

Mistakes are grouped by a label made from each record's finding (the verdict as fields,
gptcourse/checking/findings.py; see `mistake_of`): the known mistake the grader recognised, else the
observation and the first clause of the hint, else the sort of difference; for errors, the
exception and the step that raised it. Rewording a message does not regroup the class.
Names and feedback come from students: everything is HTML-escaped.

Written by `grader.outputs.report.write_all` after every grade run, and by `python -m grader report DIR`.
"""
import base64
import datetime
import html
import io
import json
import os
import re
import statistics
import urllib.parse

from gptcourse.checking import findings
from grader.outputs import challenge_report, late
from grader.grading import gradefolder
from grader.grading.gradefolder import safe_name, write_atomically

REPORT_NAME = gradefolder.REPORT
TOP_MISTAKES = 5  # per task
TOP_SLOW = 10  # tasks and submissions in the timing tables
MAX_LABEL = 180  # characters of a mistake's label
MAX_NAMES = 10  # students named under a mistake
STATUS_ORDER = ("passed", "failed", "error", "timeout", "memory")
# seaborn's "colorblind" palette: green, vermillion, orange, purple, sky blue.
STATUS_COLOURS = {"passed": "#029e73", "failed": "#d55e00", "error": "#de8f05", "timeout": "#cc78bc",
                  "memory": "#56b4e9"}
DPI = 100

# The kinds of mistake, in the order the report explains them, with how a count reads.
KINDS = {
    "known mistake": "made this mistake",
    "wrong result": "made this mistake",
    "error": "got this error",
    "timeout": "timed out",
    "memory": "ran out of memory",
    "rejected": "had this notebook rejected",
    "grader fault": "hit this grader fault",
}

_ROW_PREFIX = re.compile(r"^(?:rows?|columns?|entry|item|position|index|batch|call|step|line|case) [\w\[\](), -]{1,20}?: ")


# ------------------------------------------------------------------------------------------
# Mistakes: a label per failed record
# ------------------------------------------------------------------------------------------

def mistake_of(record):
    """(kind, label) of a record that did not pass; records with the same pair are one mistake.

    kind is one of KINDS. The label is made from the record's finding (the verdict as fields,
    gptcourse/checking/findings.py), never read back from the message, and leaves out what differs from
    one student to the next (the numbers of a difference, the student's line, the arguments of
    the call that raised), so that the same mistake groups together.
    """
    finding = findings.from_json(record.get("finding"))
    if finding is None:  # a grade folder written before findings were recorded
        return _unstructured(record)
    if finding.kind == "known mistake":
        label = finding.mistake
    elif finding.kind == "wrong result":
        what = _first_clause(finding.hint or finding.difference)
        label = f"{finding.observed}: {what}" if finding.observed else what
    elif finding.kind == "error" and (finding.step or finding.error_type):
        label = _error_label(finding)
    else:
        label = _general(finding.detail)
    return finding.kind, _label(label)


def _unstructured(record):
    """(kind, label) of a record without a finding: its status and its message's first clause."""
    feedback = re.sub(r"\s*\n\s*", " ", str(record.get("feedback") or "")).strip()
    status = record.get("status")
    kind = {"timeout": "timeout", "memory": "memory", "failed": "wrong result"}.get(status, "error")
    return kind, _label(_general(feedback) or "(no feedback)")


def _error_label(finding):
    """An exception's type and the step that raised it; for the grader's own checks on what the
    code did (no exception type), the step and the first clause of what was wrong."""
    if finding.error_type == "NotImplementedError":
        return "not implemented yet (NotImplementedError)"
    if finding.error_type:
        return f"{finding.error_type} while {_step(finding.step)}"
    detail = _first_clause(finding.detail)
    return f"while {_step(finding.step)}: {detail}" if detail else f"while {_step(finding.step)}"


def _step(step):
    """The step without its arguments: "calling forward(x, ...) (step 9)" -> "calling forward"."""
    step = step.split("(", 1)[0]
    return re.sub(r"\b(step|line|cell|item|batch|call|pass) \d+", r"\1 N", step).strip(" ,.")


def _first_clause(text):
    """Up to the first colon, semicolon, dash or sentence end; a leading "row 1: " is dropped."""
    text = _ROW_PREFIX.sub("", text.strip())
    return re.split(r": |; | — |\. (?=[A-Z'\"(`])", text, maxsplit=1)[0].strip(" .,")


def _general(text):
    """A message that is not a verdict on a case: its first clause, without asides or line numbers."""
    previous = None
    while previous != text:
        previous, text = text, re.sub(r" ?\([^()]*\)", "", text)
    text = re.sub(r"\b(line|cell|step|byte|offset|column) \d+", r"\1 N", text)
    return _first_clause(text)


def _label(text):
    return _short(text.strip() or "(no feedback)", MAX_LABEL)


# ------------------------------------------------------------------------------------------
# Numbers
# ------------------------------------------------------------------------------------------

def _task_order(task_id):
    parts = str(task_id).split(".")
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in parts)


def _duration(record):
    value = record.get("duration_s")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _points(record):
    def number(key):
        value = record.get(key)
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0
    return number("points"), number("max_points")


def _percent(got, possible):
    return 100.0 * got / possible if possible else 0.0


def _summary(records):
    """Everything the page shows, computed once from the records."""
    submissions, tasks, chapters = {}, {}, {}
    for r in records:
        sub, task = str(r.get("submission", "?")), str(r.get("task", "?"))
        points, possible = _points(r)
        s = submissions.setdefault(sub, {"points": 0.0, "possible": 0.0, "duration": 0.0, "records": []})
        s["points"] += points
        s["possible"] += possible
        s["duration"] += _duration(r)
        s["records"].append(r)
        t = tasks.setdefault(task, {"chapter": str(r.get("chapter", "")), "names": r.get("names") or [],
                                    "level": r.get("level", ""), "records": [], "max_points": possible})
        t["records"].append(r)
        c = chapters.setdefault(str(r.get("chapter", "?")), {})
        got = c.setdefault(sub, [0.0, 0.0])
        got[0] += points
        got[1] += possible
    return submissions, tasks, chapters


def _mistakes(task_records):
    """[(kind, label, students, example record)] of one task, most students first."""
    groups = {}
    for r in task_records:
        if r.get("status") == "passed":
            continue
        key = mistake_of(r)
        group = groups.setdefault(key, {"students": [], "seen": set(), "example": r})
        student = str(r.get("submission", "?"))
        if student not in group["seen"]:
            group["seen"].add(student)
            group["students"].append(student)
    ordered = sorted(groups.items(), key=lambda item: (-len(item[1]["students"]), item[0][1], item[0][0]))
    return [(kind, label, g["students"], g["example"]) for (kind, label), g in ordered]


# ------------------------------------------------------------------------------------------
# Plots: matplotlib Figures drawn with Agg (never pyplot's global state), embedded as PNG
# ------------------------------------------------------------------------------------------

def _plot_style():
    import matplotlib
    import seaborn as sns

    style = dict(sns.axes_style("whitegrid"))
    style.update(sns.plotting_context("notebook", font_scale=0.9))
    style.update({"figure.dpi": DPI, "savefig.dpi": DPI, "axes.titleweight": "bold"})
    return matplotlib.rc_context(style)


def _figure(width, height, left=0.8, right=0.3, bottom=0.65, top=0.45):
    """A Figure with fixed margins in inches (a layout engine would draw every figure twice)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    FigureCanvasAgg(figure)
    figure.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height, top=1 - top / height)
    return figure


def _label_inches(labels):
    """About the width of the longest tick label, in inches (9-point text)."""
    return 0.075 * max((len(str(label)) for label in labels), default=0)


def _png(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    figure.clear()
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _histogram(ax, percentages, colour):
    import numpy as np
    import seaborn as sns
    from matplotlib.ticker import MaxNLocator

    sns.histplot(x=np.asarray(percentages, dtype=float), bins=np.linspace(0, 100, 11), ax=ax, color=colour,
                 edgecolor="white", alpha=1.0)
    ax.set_xlim(0, 100)
    ax.set_xlabel("score (% of the points)")
    ax.set_ylabel("students")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))


def _overall_plot(percentages):
    figure = _figure(8, 3.4)
    ax = figure.add_subplot()
    _histogram(ax, percentages, "#0173b2")
    mean = statistics.fmean(percentages)
    ax.axvline(mean, color="#333333", linestyle="--", linewidth=1.2, label=f"mean {mean:.0f}%")
    ax.legend(loc="upper left")
    ax.set_title(f"Overall score of {len(percentages)} submission{'s' if len(percentages) != 1 else ''}")
    return _png(figure)


def _chapter_plot(chapters):
    """One row per chapter: how many students scored in each tenth of its points (a heat map
    of the chapters' histograms, so that 9 chapters stay one readable picture)."""
    import numpy as np
    import seaborn as sns

    names = sorted(chapters)
    bins = np.linspace(0, 100, 11)
    counts = np.array([np.histogram([_percent(got, possible) for got, possible in chapters[c].values()],
                                    bins=bins)[0] for c in names])
    labels = [f"{c} ({len(chapters[c])})" for c in names]
    figure = _figure(10, 1.3 + 0.42 * len(names), left=0.7 + _label_inches(labels), right=0.2, top=0.4)
    ax = figure.add_subplot()
    shown = np.where(counts > 0, counts.astype(str), "")  # empty cells stay empty: the pattern shows
    sns.heatmap(counts, ax=ax, cmap="Blues", annot=shown, fmt="", linewidths=0.5, linecolor="#eeeeee",
                cbar_kws={"label": "students"}, vmin=0,
                xticklabels=[f"{lo:.0f}–{hi:.0f}%" for lo, hi in zip(bins[:-1], bins[1:])],
                yticklabels=labels)
    ax.set_xlabel("score in the chapter (share of its points)")
    ax.set_ylabel("chapter (students)")
    ax.tick_params(axis="y", rotation=0)
    ax.tick_params(axis="x", rotation=0, labelsize=8)
    ax.set_title("Students per score range, chapter by chapter")
    return _png(figure)


def _task_plot(task_ids, tasks):
    import numpy as np

    labels = [_short(f"{t}  {', '.join(map(str, tasks[t]['names']))}", 40) for t in task_ids]
    figure = _figure(9, 1.4 + 0.3 * len(task_ids), left=0.7 + _label_inches(labels), top=0.7)
    ax = figure.add_subplot()
    positions = np.arange(len(task_ids))
    left = np.zeros(len(task_ids))
    for status in STATUS_ORDER:
        share = np.array([_share(tasks[t]["records"], status) for t in task_ids])
        if share.any():
            ax.barh(positions, share, left=left, color=STATUS_COLOURS[status], label=status, height=0.75)
        left += share
    ax.set_yticks(positions, labels)
    ax.set_ylim(len(task_ids) - 0.5, -0.5)  # the first task on top, no empty rows
    ax.set_xlim(0, 100)
    ax.set_xlabel("students (%)")
    ax.set_ylabel("task")
    ax.grid(axis="y", visible=False)
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=4, frameon=False)
    return _png(figure)


def _short(text, limit):
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _share(records, status):
    return _percent(sum(r.get("status") == status for r in records), len(records))


# ------------------------------------------------------------------------------------------
# The page
# ------------------------------------------------------------------------------------------

def _e(value):
    return html.escape(str(value), quote=True)


CSS = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #222;
       background: #fafafa; line-height: 1.4; }
main { max-width: 1100px; margin: 0 auto; padding: 1.5em 2em 4em; background: #fff; }
h1 { margin-bottom: 0.2em; } h2 { border-bottom: 2px solid #2b5d8a; padding-bottom: 0.2em; margin-top: 2em; }
h3 { margin: 1.4em 0 0.4em; font-size: 1.05em; }
nav a { margin-right: 1em; } .muted { color: #666; } .small { font-size: 0.85em; }
table { border-collapse: collapse; margin: 0.6em 0 1em; font-size: 0.92em; }
th, td { border: 1px solid #ddd; padding: 0.3em 0.6em; text-align: left; vertical-align: top; }
th { background: #eef4f9; } td.num, th.num { text-align: right; white-space: nowrap; } td.count { white-space: nowrap; }
dl.facts { display: grid; grid-template-columns: max-content auto; gap: 0.2em 1.2em; }
dl.facts dt { font-weight: 600; } dl.facts dd { margin: 0; }
img.plot { max-width: 100%; height: auto; display: block; margin: 0.5em 0; }
.kind { display: inline-block; padding: 0 0.4em; border-radius: 3px; font-size: 0.8em; color: #fff;
        white-space: nowrap; }
.kind-known-mistake { background: #d55e00; } .kind-wrong-result { background: #a0522d; }
.kind-error { background: #de8f05; } .kind-timeout { background: #cc78bc; } .kind-memory { background: #2f7fb0; }
.kind-rejected { background: #555; } .kind-grader-fault { background: #000; }
.status-passed { color: #027a59; } .status-failed { color: #b34700; } .status-error { color: #a86a00; }
.status-timeout { color: #9b4f92; } .status-memory { color: #2f7fb0; }
details summary { cursor: pointer; color: #2b5d8a; } pre { white-space: pre-wrap; word-break: break-word;
  background: #f4f4f4; padding: 0.5em; margin: 0.3em 0; font-size: 0.9em; }
"""


def render(records, out_dir, run, now=None):
    """The report's HTML text."""
    run = run if isinstance(run, dict) else {}
    records = [r for r in records if isinstance(r, dict)]
    now = now or datetime.datetime.now().astimezone()
    submissions, tasks, chapters = _summary(records)
    task_ids = sorted(tasks, key=_task_order)
    parts = [_head(), _header(records, submissions, tasks, out_dir, run, now)]
    if records:
        with _plot_style():
            parts.append(_overall_section(submissions))
            parts.append(_chapter_section(chapters))
            parts.append(_task_section(task_ids, tasks))
        parts.append(_late_section(records))
        parts.append(_mistake_section(task_ids, tasks))
        parts.append(_timing_section(task_ids, tasks, submissions))
        parts.append(_problem_section(submissions, out_dir))
        parts.append(_similarity_section(records, out_dir))
        with _plot_style():
            parts.append(challenge_report.section(out_dir, _figure, _png, _img))
    else:
        parts.append("<p>No task records: nothing was graded.</p>")
    parts.append("</main></body></html>\n")
    return "\n".join(parts)


def write_report(records, out_dir, run):
    """Write DIR/report.html (atomically) and return its path."""
    path = os.path.join(out_dir, REPORT_NAME)
    write_atomically(path, render(records, out_dir, run))
    return path


def _head():
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; "
            "style-src 'unsafe-inline'\">"
            f"<title>Class report</title><style>{CSS}</style></head><body><main>")


def _header(records, submissions, tasks, out_dir, run, now):
    statuses = {s: sum(r.get("status") == s for r in records) for s in STATUS_ORDER}
    devices = sorted({str(r.get("device")) for r in records if r.get("device")})
    seeds = sorted({str(r.get("seed")) for r in records if r.get("seed") is not None})
    graded = os.path.join(out_dir, gradefolder.GRADES_JSON)
    graded_at = (datetime.datetime.fromtimestamp(os.path.getmtime(graded)).astimezone().strftime("%Y-%m-%d %H:%M %Z")
                 if os.path.exists(graded) else "—")
    isolation = run.get("isolation") if isinstance(run.get("isolation"), dict) else {}
    facts = [
        ("submissions", len(submissions)),
        ("tasks graded", f"{len(tasks)} tasks of {len({r.get('chapter') for r in records})} chapters "
                         f"({len(records)} task records)"),
        ("status", ", ".join(f"{statuses[s]} {s}" for s in STATUS_ORDER if statuses[s] or s == "passed")),
        ("device", run.get("device") or ", ".join(devices) or "—"),
        ("hidden test seed", run.get("seed") if run.get("seed") is not None else ", ".join(seeds) or "—"),
        ("torch", run.get("torch") or "—"),
        ("GPU", run.get("cuda") or "none"),
        ("isolation", isolation.get("sandbox") or "—"),
        ("graded", graded_at),
        ("report written", now.strftime("%Y-%m-%d %H:%M %Z")),
    ]
    rows = "".join(f"<dt>{_e(k)}</dt><dd>{_e(v)}</dd>" for k, v in facts)
    late_link = "<a href=\"#late\">Late</a>" if any(isinstance(r.get("late"), dict) for r in records) else ""
    nav = ("<nav class=\"small\"><a href=\"#scores\">Scores</a><a href=\"#chapters\">Chapters</a>"
           f"{late_link}<a href=\"#tasks\">Tasks</a><a href=\"#mistakes\">Mistakes</a><a href=\"#timing\">Timing</a>"
           "<a href=\"#problems\">Errors and rejections</a><a href=\"#similarity\">Similar work</a></nav>")
    return f"<h1>Class report</h1>{nav}<dl class=\"facts\">{rows}</dl>"


def _img(data, alt):
    return f"<img class=\"plot\" alt=\"{_e(alt)}\" src=\"data:image/png;base64,{data}\">"


def _overall_section(submissions):
    percentages = [_percent(s["points"], s["possible"]) for s in submissions.values()]
    ordered = sorted(percentages)
    quartiles = statistics.quantiles(ordered, n=4, method="inclusive") if len(ordered) > 1 else ordered * 3
    full = sum(s["possible"] and s["points"] >= s["possible"] for s in submissions.values())
    facts = (f"mean {statistics.fmean(ordered):.1f}%, median {statistics.median(ordered):.1f}% "
             f"(quartiles {quartiles[0]:.1f}% and {quartiles[2]:.1f}%), lowest {ordered[0]:.1f}%, "
             f"highest {ordered[-1]:.1f}%; {full} of {len(ordered)} with full points")
    return (f"<h2 id=\"scores\">Overall scores</h2><p>{_e(facts)}</p>"
            + _img(_overall_plot(percentages), "histogram of the overall scores"))


def _chapter_section(chapters):
    rows = []
    for chapter in sorted(chapters):
        scores = [_percent(got, possible) for got, possible in chapters[chapter].values()]
        full = sum(possible and got >= possible for got, possible in chapters[chapter].values())
        rows.append(f"<tr><td>{_e(chapter)}</td><td class=\"num\">{len(scores)}</td>"
                    f"<td class=\"num\">{statistics.fmean(scores):.1f}%</td>"
                    f"<td class=\"num\">{statistics.median(scores):.1f}%</td><td class=\"num\">{full}</td></tr>")
    table = ("<table><tr><th>chapter</th><th class=\"num\">students</th><th class=\"num\">mean</th>"
             "<th class=\"num\">median</th><th class=\"num\">full points</th></tr>" + "".join(rows) + "</table>")
    return (f"<h2 id=\"chapters\">Scores per chapter</h2>{table}"
            + _img(_chapter_plot(chapters), "students per score range in each chapter"))


def _late_section(records):
    """Under a late policy (grader/outputs/late.py): per chapter, how many submissions came late,
    after the last date, with an extension, with tokens, or at an unknown time; the points lost."""
    decisions = {}
    for (submission, chapter), decision in late.chapter_decisions(records).items():
        decisions.setdefault(chapter, {})[submission] = decision
    if not decisions:
        return ""
    rows = []
    for chapter in sorted(decisions):
        found = list(decisions[chapter].values())
        counts = [sum(1 for d in found if d.get("submitted_at") and (d.get("days_late") or d.get("after_last"))),
                  sum(1 for d in found if d.get("after_last")), sum(1 for d in found if d.get("extension")),
                  sum(1 for d in found if d.get("tokens")), sum(d.get("tokens") or 0 for d in found),
                  sum(1 for d in found if not d.get("submitted_at"))]
        lost = round(sum(d.get("penalty") or 0 for d in found), 2)
        rows.append(f"<tr><td>{_e(chapter)}</td><td class=\"num\">{len(found)}</td>"
                    + "".join(f"<td class=\"num\">{count}</td>" for count in counts)
                    + f"<td class=\"num\">{lost:g}</td></tr>")
    head = "".join(f"<th class=\"num\">{name}</th>" for name in (
        "submissions", "late", "after the last date", "extended", "used tokens", "tokens spent", "time unknown",
        "points lost"))
    return ("<h2 id=\"late\">Late submissions</h2><p>Under the policy applied to this folder "
            "(<code>policy.json</code>; <code>python -m grader apply-policy</code> changes it). Late counts "
            "the submissions still late after extensions and tokens.</p>"
            f"<table><tr><th>chapter</th>{head}</tr>" + "".join(rows) + "</table>")


def _task_section(task_ids, tasks):
    rows = []
    for t in task_ids:
        records = tasks[t]["records"]
        cells = "".join(f"<td class=\"num status-{s}\">{_share(records, s):.0f}%</td>" for s in STATUS_ORDER)
        rows.append(f"<tr><td>{_e(t)}</td><td>{_e(', '.join(map(str, tasks[t]['names'])))}</td>"
                    f"<td>{_e(tasks[t]['level'])}</td><td class=\"num\">{len(records)}</td>{cells}</tr>")
    head = "".join(f"<th class=\"num\">{s}</th>" for s in STATUS_ORDER)
    table = ("<table><tr><th>task</th><th>graded names</th><th>level</th><th class=\"num\">students</th>"
             f"{head}</tr>" + "".join(rows) + "</table>")
    return ("<h2 id=\"tasks\">Tasks</h2><p>The share of students by status, task by task.</p>"
            + _img(_task_plot(task_ids, tasks), "share of students passing each task") + table)


def _count_text(kind, count):
    return f"{count} student{'s' if count != 1 else ''} {KINDS.get(kind, 'made this mistake')}"


def _mistake_section(task_ids, tasks):
    parts = [
        "<h2 id=\"mistakes\">Most frequent mistakes</h2>",
        "<p class=\"small muted\">Per task, the failed records grouped by what the feedback says: the known "
        "mistake the grader recognised (<span class=\"kind kind-known-mistake\">known mistake</span>), else "
        "the observation that differed and the first clause of its hint (<span class=\"kind "
        "kind-wrong-result\">wrong result</span>), for errors the exception and the step that raised it; "
        f"notebooks that could not be read are <span class=\"kind kind-rejected\">rejected</span>. Top "
        f"{TOP_MISTAKES} per task.</p>",
    ]
    for t in task_ids:
        records = tasks[t]["records"]
        students = len({r.get("submission") for r in records})
        passed = len({r.get("submission") for r in records if r.get("status") == "passed"})
        title = f"Task {t}: {', '.join(map(str, tasks[t]['names']))}"
        parts.append(f"<h3 id=\"task-{_e(t)}\">{_e(title)} <span class=\"muted small\">{passed} of {students} "
                     f"passed</span></h3>")
        mistakes = _mistakes(records)
        if not mistakes:
            parts.append("<p class=\"small\">Every student passed.</p>")
            continue
        rows = []
        for kind, label, names, example in mistakes[:TOP_MISTAKES]:
            shown = ", ".join(names[:MAX_NAMES]) + (f" and {len(names) - MAX_NAMES} more" if len(names) > MAX_NAMES else "")
            rows.append(
                f"<tr class=\"mistake\"><td class=\"count\">{_e(_count_text(kind, len(names)))}"
                f" ({_percent(len(names), students):.0f}%)</td>"
                f"<td><span class=\"kind kind-{kind.replace(' ', '-')}\">{_e(kind)}</span> "
                f"<span class=\"label\">{_e(label)}</span>"
                f"<details><summary class=\"small\">students and an example</summary>"
                f"<div class=\"small\">{_e(shown)}</div><pre>{_e(str(example.get('feedback') or '')[:1500])}"
                f"</pre></details></td></tr>")
        more = mistakes[TOP_MISTAKES:]
        if more:
            others = len({n for _, _, names, _ in more for n in names})
            rows.append(f"<tr><td colspan=\"2\" class=\"small muted\">{len(more)} other mistake"
                        f"{'s' if len(more) != 1 else ''}, by {others} student{'s' if others != 1 else ''}</td></tr>")
        parts.append("<table class=\"mistakes\"><tr><th>students</th><th>mistake</th></tr>"
                     + "".join(rows) + "</table>")
    return "\n".join(parts)


def _timing_section(task_ids, tasks, submissions):
    by_task = []
    for t in task_ids:
        durations = [_duration(r) for r in tasks[t]["records"]]
        by_task.append((statistics.fmean(durations), max(durations), t, len(durations)))
    by_task.sort(key=lambda row: (-row[0], _task_order(row[2])))
    task_rows = "".join(
        f"<tr><td>{_e(t)}</td><td>{_e(', '.join(map(str, tasks[t]['names'])))}</td><td class=\"num\">{n}</td>"
        f"<td class=\"num\">{mean:.2f} s</td><td class=\"num\">{most:.2f} s</td></tr>"
        for mean, most, t, n in by_task[:TOP_SLOW])
    slow = sorted(submissions.items(), key=lambda item: (-item[1]["duration"], item[0]))[:TOP_SLOW]
    sub_rows = []
    for name, s in slow:
        slowest = max(s["records"], key=_duration)
        sub_rows.append(f"<tr><td>{_e(name)}</td><td class=\"num\">{s['duration']:.2f} s</td>"
                        f"<td>{_e(slowest.get('task', '?'))} ({_duration(slowest):.2f} s, "
                        f"<span class=\"status-{_e(slowest.get('status'))}\">{_e(slowest.get('status'))}</span>)"
                        f"</td></tr>")
    return ("<h2 id=\"timing\">Timing</h2><h3>The tasks that took longest</h3><table><tr><th>task</th>"
            "<th>graded names</th><th class=\"num\">records</th><th class=\"num\">mean</th><th class=\"num\">max</th>"
            f"</tr>{task_rows}</table><h3>The slowest submissions</h3><table><tr><th>submission</th>"
            f"<th class=\"num\">total</th><th>slowest task</th></tr>{''.join(sub_rows)}</table>")


def feedback_link(submission, out_dir):
    """(relative href, whether the file exists) of a submission's feedback file."""
    file_name = f"{safe_name(submission)}.md"
    exists = os.path.isfile(os.path.join(out_dir, gradefolder.FEEDBACK, file_name))
    return "feedback/" + urllib.parse.quote(file_name), exists


def _problem_section(submissions, out_dir):
    rows = []
    for name in sorted(submissions):
        problems = [(mistake_of(r), r) for r in submissions[name]["records"]
                    if r.get("status") in ("error", "timeout", "memory")]
        if not problems:
            continue
        kinds = {}
        for (kind, label), r in problems:
            kinds.setdefault(kind, []).append(r)
        what = "; ".join(f"{kind}: task{'s' if len(rs) > 1 else ''} {', '.join(str(r.get('task')) for r in rs)}"
                         for kind, rs in sorted(kinds.items()))
        first = problems[0][0][1]
        href, exists = feedback_link(name, out_dir)
        link = (f"<a href=\"{_e(href)}\">{_e(href)}</a>" if exists
                else "<span class=\"muted\">no feedback file</span>")
        rows.append(f"<tr class=\"problem\"><td>{_e(name)}</td><td>{_e(what)}</td><td class=\"small\">{_e(first)}"
                    f"</td><td>{link}</td></tr>")
    if not rows:
        return "<h2 id=\"problems\">Errors, timeouts and rejections</h2><p>None: every task ran to a verdict.</p>"
    return ("<h2 id=\"problems\">Errors, timeouts and rejections</h2>"
            f"<p>{len(rows)} submission{'s' if len(rows) != 1 else ''} with a task that raised, timed out, ran out of memory "
            "or could not be read. The links open their feedback files (relative to this report).</p>"
            "<table><tr><th>submission</th><th>what</th><th>first problem</th><th>feedback</th></tr>"
            + "".join(rows) + "</table>")


# ------------------------------------------------------------------------------------------
# Similar work: DIR/similarity.json, written by `python -m grader similarity DIR`
# ------------------------------------------------------------------------------------------

def read_similarity(out_dir):
    """DIR/similarity.json as a dict; None when it is missing; a str saying why when it cannot be
    used. Anyone could have written the file (student code, where there was no sandbox): its
    fields are checked where they are used, and every text is escaped."""
    path = os.path.join(out_dir, gradefolder.SIMILARITY)
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        return f"{path} could not be read ({type(exc).__name__})"
    if not isinstance(data, dict) or not isinstance(data.get("tasks"), list):
        return f"{path} is not what `python -m grader similarity` writes"
    return data


def _matches(entry, key):
    """The well-formed matches of a task entry of similarity.json."""
    found = []
    for match in entry.get(key) if isinstance(entry.get(key), list) else []:
        if not isinstance(match, dict):
            continue
        shares = match.get("shares")
        if (isinstance(match.get("first"), str) and isinstance(match.get("second"), str)
                and isinstance(shares, list) and len(shares) == 2
                and all(s is None or (isinstance(s, (int, float)) and not isinstance(s, bool)) for s in shares)
                and isinstance(shares[0], (int, float)) and isinstance(match.get("shared_tokens"), int)):
            found.append(match)
    return found


def _page_link(match, text):
    """A link to a match's side-by-side page; only a page inside DIR/similarity/ is linked."""
    page = match.get("page")
    prefix = gradefolder.SIMILARITY_PAGES + "/"
    if not isinstance(page, str) or not page.startswith(prefix) or ".." in page.split("/"):
        return _e(text)
    return f"<a href=\"{_e(urllib.parse.quote(page))}\">{_e(text)}</a>"


def _percentage(value):
    """A share (0 to 1) as a percentage; "—" for None (no share), "?" for what is not a number."""
    if value is None:
        return "—"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f"{100 * value:.0f}%"
    return "?"


def _stale_note(data, records):
    """A warning when the comparison was made for other grades than these (a grade or regrade since),
    and the notebooks that had changed on disk since grading when it was made."""
    compared = data.get("notebooks") if isinstance(data.get("notebooks"), dict) else {}
    differ = sorted({str(r.get("submission")) for r in records
                     if (compared.get(r.get("submission")) or {}).get(r.get("chapter")) != r.get("notebook_sha")})
    notes = []
    if differ:
        more = f" and {len(differ) - MAX_NAMES} more" if len(differ) > MAX_NAMES else ""
        shown = ", ".join(differ[:MAX_NAMES]) + more
        notes.append(f"The comparison below was made before the last grade run: the notebooks of {shown} are not "
                     f"those compared. Run python -m grader similarity again.")
    changed = data.get("changed_since_grading")
    if isinstance(changed, list) and changed:
        notes.append(f"{len(changed)} notebook(s) had changed on disk since they were graded; the comparison read "
                     f"them as they were when it ran, not as graded: {', '.join(map(str, changed[:MAX_NAMES]))}.")
    return "".join(f"<p class=\"small\"><strong>Note:</strong> {_e(n)}</p>" for n in notes)


def _similarity_section(records, out_dir):
    head = "<h2 id=\"similarity\">Similar work</h2>"
    data = read_similarity(out_dir)
    if data is None:
        return (f"{head}<p>Not computed. <code>python -m grader similarity DIR</code> (DIR: the folder of this "
                f"report) compares the students' task cells, task by task, and lists here the pairs whose cells "
                f"are alike.</p>")
    if isinstance(data, str):
        return f"{head}<p>{_e(data)}</p>"
    tasks = [t for t in data["tasks"] if isinstance(t, dict) and isinstance(t.get("task"), str)]
    rules = data.get("rules") if isinstance(data.get("rules"), dict) else {}
    folders = data.get("references") if isinstance(data.get("references"), list) else []
    return "\n".join([head, _stale_note(data, records), _similarity_rules(data.get("library"), rules),
                      _student_groups(tasks, rules), _student_pairs(tasks), _reference_matches(tasks, folders)])


def _groups(entry):
    """The well-formed groups of a task entry of similarity.json."""
    found = entry.get("groups") if isinstance(entry.get("groups"), list) else []
    return [g for g in found if isinstance(g, dict) and isinstance(g.get("members"), list)
            and all(isinstance(m, str) for m in g["members"]) and isinstance(g.get("shared_tokens"), int)]


def _student_groups(tasks, rules):
    """The groups: three or more students whose cells are alike pair by pair (a ring of copies
    that the common-passage rule would hide)."""
    rows = [f"<tr class=\"group\"><td>{_e(t['task'])}</td><td>{_e(', '.join(g['members']))}</td>"
            f"<td class=\"num\">{len(g['members'])}</td><td class=\"num\">{g['shared_tokens']}</td>"
            f"<td>{_e(', '.join(map(str, g.get('references') or [])) or '—')}</td></tr>"
            for t in tasks for g in _groups(t)]
    if not rows:
        return ""
    return (f"<h3>Groups of students</h3><p>Three or more students whose cells of a task are alike pair by pair, "
            f"at most {_e(_percentage(rules.get('group_share', '?')))} of the class (more is the class's usual "
            f"way of writing the answer). The passages a group shares may be what five or more students wrote "
            f"alike, which the pairs below leave out; a group whose members all match a reference file names it.</p>"
            "<table class=\"similar-groups\"><tr><th>task</th><th>students</th><th class=\"num\">how many</th>"
            "<th class=\"num\">shared tokens (fewest)</th><th>reference file they all match</th></tr>"
            + "".join(rows) + "</table>")


def _similarity_rules(library, rules):
    """How cells were compared and when a pair is listed, with the run's numbers."""
    return (f"<p class=\"small muted\">Each student's task cell was compared with every other student's cell of the "
            f"same task ({_e(library or 'copydetect')}: names, strings, comments and layout do not matter). Never "
            f"counted: the release notebook's own code (stubs, signatures, imports), and passages that at least "
            f"{_e(rules.get('common_cells', '?'))} students and {_e(_percentage(rules.get('common_share', '?')))} of "
            f"the class wrote alike (the usual way of writing them). A pair is listed when what its cells still "
            f"share is at least {_e(rules.get('min_shared_tokens', '?'))} tokens and at least "
            f"{_e(_percentage(rules.get('threshold', '?')))} of one cell's own code: a short answer that many "
            f"write alike is never listed. Alike is a reason to look and to talk with the students, not proof of "
            f"copying.</p>")


def _student_pairs(tasks):
    rows = [f"<tr class=\"pair\"><td>{_e(t['task'])}</td><td>{_e(m['first'])}</td><td>{_e(m['second'])}</td>"
            f"<td class=\"num\">{_percentage(m['shares'][0])}</td><td class=\"num\">{_percentage(m['shares'][1])}</td>"
            f"<td class=\"num\">{m['shared_tokens']}</td><td>{_page_link(m, 'side by side')}</td></tr>"
            for t in tasks for m in _matches(t, "pairs")]
    compared = sum(1 for t in tasks if isinstance(t.get("cells"), int) and t["cells"] > 1)
    if not rows:
        return (f"<h3>Pairs of students</h3><p>None: no two students' cells of the {compared} tasks compared are "
                f"alike beyond what the class writes alike.</p>")
    flagged = sum(1 for t in tasks if _matches(t, "pairs"))
    return (f"<h3>Pairs of students</h3><p>{len(rows)} pair{'s' if len(rows) != 1 else ''} in {flagged} of the "
            f"{compared} tasks compared; the shares are how much of each cell's own code is in the other.</p>"
            "<table class=\"similar\"><tr><th>task</th><th>student</th><th>student</th><th class=\"num\">first's "
            "share</th><th class=\"num\">second's share</th><th class=\"num\">shared tokens</th><th>page</th></tr>"
            + "".join(rows) + "</table>")


def _reference_matches(tasks, folders):
    """The cells that match a reference folder's code: apart from the pairs, and said to be information."""
    rows = [f"<tr class=\"reference\"><td>{_e(t['task'])}</td><td>{_e(m['first'])}</td><td>{_e(m['second'])}</td>"
            f"<td class=\"num\">{_percentage(m['shares'][0])}</td><td class=\"num\">{m['shared_tokens']}</td>"
            f"<td>{_page_link(m, 'side by side')}</td></tr>"
            for t in tasks for m in _matches(t, "references")]
    if not folders and not rows:
        return ""
    intro = (f"<h3>Matches with reference code</h3><p>Cells that share code with the reference folders "
             f"({_e(', '.join(map(str, folders)))}). A match with the book's code or last year's work is "
             f"information, not an accusation: it says where a cell's code comes from, and students may read the "
             f"book.</p>")
    if not rows:
        return intro + "<p>None: no cell shares enough with them.</p>"
    return (intro + "<table class=\"similar-references\"><tr><th>task</th><th>student</th><th>reference file</th>"
            "<th class=\"num\">student's share</th><th class=\"num\">shared tokens</th><th>page</th></tr>"
            + "".join(rows) + "</table>")
