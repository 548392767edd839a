"""Due dates, extensions, late tokens and late penalties: the policy file and what it decides.

An instructor writes one `policy.toml` (docs/grading.md, "Due dates and late penalties"):

    timezone = "Europe/Berlin"        # dates written without an offset are in this zone

    [penalty]
    per_day = 0.10                    # the share of the chapter's points lost per started day late
    max_share = 0.5                   # optional: never more than this share, up to the last date
    grace_minutes = 5                 # optional: a submission this close after a date counts as before it

    [tokens]
    per_student = 2                   # late tokens for the term; one token waives one day

    [extensions]
    file = "extensions.csv"           # student,chapter,due (beside the policy file)

    [chapters.02_attention]
    due = 2026-10-05T23:59:00
    last = 2026-10-12T23:59:00        # after it: no points; without it the share grows to 1
    # per_day = 0.2                   # a chapter may have its own penalty

Everything here is plain computation on that file and on submission times; both graders call it:
the course grader (grader/outputs/late.py, when it writes grades.json) and nbgrader's autograde
(grader/nbgrading/late.py, its late-penalty plugin), so that both give the same final points.

Decisions, each a choice the policy file cannot change:
- **Days are counted on the wall clock of the policy's time zone.** One day late means up to the
  same clock time on the next calendar day, also across a daylight-saving change (a 25-hour day).
- **An extension moves the last date with it**: the student keeps the same late window after
  their new due date. A token does the same, one day per token.
- **Tokens go to the chapters in the order of their due dates**, as many as make a difference to
  that chapter and no more (none on a submission so far past its last date that the tokens left
  cannot bring it back). A chapter's tokens then depend only on the times of the chapters due
  before it, so a grade already published never changes when a later chapter comes in, and
  nbgrader, which grades one notebook at a time, decides exactly as the course grader does.
- **The penalty is rounded to hundredths of a point** (round half to even, Python's round), once,
  on the chapter's total: the same number in both graders.
"""
import csv
import datetime
import math
import os
import sys
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.9 and 3.10 (pyproject.toml installs tomli there)
    import tomli as tomllib

from gptcourse.checking.tasks import chapter_names

UTC = datetime.timezone.utc
DAY = datetime.timedelta(days=1)
# nbgrader's timestamp.txt (collect copies it from the submission): "2026-10-05 21:59:00.123456 UTC".
TIMESTAMP_FILE = "timestamp.txt"


class PolicyError(Exception):
    """The policy file, the extensions or a times file cannot be used; the message says where and why."""


@dataclass(frozen=True)
class Chapter:
    due: datetime.datetime  # aware
    last: datetime.datetime = None  # aware; None: no last date
    per_day: float = 0.0
    max_share: float = 1.0


@dataclass
class Policy:
    zone: datetime.tzinfo
    chapters: dict  # chapter name -> Chapter
    tokens: int = 0
    grace: datetime.timedelta = datetime.timedelta(0)
    extensions: dict = field(default_factory=dict)  # (student, chapter) -> aware due date
    source: str = ""  # the file it was read from, for messages

    def order(self):
        """The chapters in the order tokens are spent: by due date, then course order."""
        course = {name: i for i, name in enumerate(chapter_names())}
        return sorted(self.chapters, key=lambda name: (self.chapters[name].due, course.get(name, 0)))


@dataclass(frozen=True)
class Lateness:
    """What the policy decided for one student's chapter."""
    submitted_at: datetime.datetime  # aware, or None when the time is unknown
    due: datetime.datetime = None  # the due date that applied (extension and tokens included)
    days_late: int = 0
    share: float = 0.0  # of the chapter's points
    tokens: int = 0  # tokens spent on this chapter
    extension: datetime.datetime = None  # the extended due date, when the student has one
    after_last: bool = False


# ------------------------------------------------------------------------------------------
# Reading the policy
# ------------------------------------------------------------------------------------------

def read_policy(path):
    """The Policy of a policy.toml (and of the extensions CSV it names); PolicyError otherwise."""
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise PolicyError(f"{path}: no such policy file") from None
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PolicyError(f"{path}: not a readable TOML file ({exc})") from None
    return policy_from(data, os.path.dirname(os.path.abspath(path)), path)


def policy_from(data, folder, source="the policy"):
    """The Policy of a policy file's parsed TOML; relative file names are relative to `folder`."""
    _only_keys(data, {"timezone", "penalty", "tokens", "extensions", "chapters"}, source)
    zone = _zone(data.get("timezone", "UTC"), source)
    penalty = _table(data, "penalty", source)
    _only_keys(penalty, {"per_day", "max_share", "grace_minutes"}, f"{source} [penalty]")
    tokens = _table(data, "tokens", source)
    _only_keys(tokens, {"per_student"}, f"{source} [tokens]")
    chapters_table = _table(data, "chapters", source)
    if not chapters_table:
        raise PolicyError(f"{source}: no [chapters.NAME] table: give each chapter's due date")
    known = chapter_names()
    chapters = {}
    for name, table in chapters_table.items():
        if name not in known:
            raise PolicyError(f"{source}: [chapters.{name}] is not a chapter of the course; the chapters are "
                              f"{', '.join(known)}")
        chapters[name] = _chapter(table, penalty, zone, f"{source} [chapters.{name}]")
    policy = Policy(zone=zone, chapters=chapters,
                    tokens=_count(tokens.get("per_student", 0), f"{source} [tokens] per_student"),
                    grace=datetime.timedelta(minutes=_number(penalty.get("grace_minutes", 0), 0, None,
                                                             f"{source} [penalty] grace_minutes")),
                    source=str(source))
    extensions = _table(data, "extensions", source)
    _only_keys(extensions, {"file"}, f"{source} [extensions]")
    if "file" in extensions:
        policy.extensions = read_extensions(os.path.join(folder, str(extensions["file"])), policy)
    return policy


def _chapter(table, penalty, zone, where):
    if not isinstance(table, dict):
        raise PolicyError(f"{where}: a table with due = ... expected")
    _only_keys(table, {"due", "last", "per_day", "max_share"}, where)
    if "due" not in table:
        raise PolicyError(f"{where}: no due date (due = 2026-10-05T23:59:00)")
    due = _moment(table["due"], zone, f"{where} due")
    last = _moment(table["last"], zone, f"{where} last") if "last" in table else None
    if last is not None and last < due:
        raise PolicyError(f"{where}: the last date {last.isoformat()} is before the due date {due.isoformat()}")
    per_day = _number(table.get("per_day", penalty.get("per_day", 0)), 0, 1, f"{where} per_day")
    max_share = _number(table.get("max_share", penalty.get("max_share", 1)), 0, 1, f"{where} max_share")
    return Chapter(due=due, last=last, per_day=per_day, max_share=max_share)


def read_extensions(path, policy):
    """{(student, chapter): aware new due date} of an extensions CSV (columns student, chapter, due)."""
    extensions = {}
    for line, row in _csv_rows(path, ("student", "chapter", "due")):
        where = f"{path} line {line}"
        chapter = _chapter_name(row["chapter"], where)
        if chapter not in policy.chapters:
            raise PolicyError(f"{where}: an extension of {chapter}, which has no due date in {policy.source}")
        key = (row["student"], chapter)
        if key in extensions:
            raise PolicyError(f"{where}: a second extension for {key[0]} in {chapter}: keep one line per student "
                              f"and chapter")
        extensions[key] = parse_moment(row["due"], policy.zone, where)
    return extensions


def read_times(path, zone):
    """{(student, chapter): aware time} of a submission-times CSV (columns student, chapter,
    submitted_at): what Gradescope or an LMS exports. A time without an offset is in `zone`."""
    times = {}
    for line, row in _csv_rows(path, ("student", "chapter", "submitted_at")):
        where = f"{path} line {line}"
        key = (row["student"], _chapter_name(row["chapter"], where))
        if key in times:
            raise PolicyError(f"{where}: a second submission time for {key[0]} in {key[1]}")
        times[key] = parse_moment(row["submitted_at"], zone, where)
    return times


def _csv_rows(path, columns):
    try:
        with open(path, encoding="utf-8-sig", newline="") as f:
            reader = csv.DictReader(f)
            header = [name.strip().lower() for name in reader.fieldnames or []]
            missing = [name for name in columns if name not in header]
            if missing:
                raise PolicyError(f"{path}: the columns {', '.join(columns)} are needed; missing: {', '.join(missing)}")
            reader.fieldnames = header
            rows = [(number, {k: (row.get(k) or "").strip() for k in columns}) for number, row in enumerate(reader, 2)]
    except FileNotFoundError:
        raise PolicyError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise PolicyError(f"{path}: not a readable CSV file ({exc})") from None
    for number, row in rows:
        empty = [k for k in columns if not row[k]]
        if empty:
            raise PolicyError(f"{path} line {number}: {', '.join(empty)} is empty")
    return rows


def _chapter_name(text, where):
    """A chapter's name from its full name ("02_attention") or its number ("02", "2")."""
    names = chapter_names()
    if text in names:
        return text
    for name in names:
        if text.isdigit() and int(text) == int(name[:2]):
            return name
    raise PolicyError(f"{where}: {text!r} is not a chapter of the course ({', '.join(names)})")


def _zone(name, source):
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        raise PolicyError(f"{source}: timezone {name!r} is not a time zone name such as 'Europe/Berlin' or "
                          f"'America/New_York'") from None


def _table(data, name, source):
    table = data.get(name, {})
    if not isinstance(table, dict):
        raise PolicyError(f"{source}: {name} should be a table ([{name}])")
    return table


def _only_keys(table, allowed, where):
    unknown = sorted(set(table) - set(allowed))
    if unknown:
        raise PolicyError(f"{where}: unknown setting {', '.join(unknown)}; the settings are {', '.join(sorted(allowed))}")


def _number(value, low, high, where):
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise PolicyError(f"{where}: a number expected, not {value!r}")
    if value < low or (high is not None and value > high):
        raise PolicyError(f"{where}: {value} is outside {low} to {high if high is not None else 'any'}")
    return float(value)


def _count(value, where):
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PolicyError(f"{where}: a whole number of at least 0 expected, not {value!r}")
    return value


def _moment(value, zone, where):
    """A TOML date-time (or a string) as an aware datetime; without an offset it is in `zone`."""
    if isinstance(value, datetime.datetime):
        return value if value.tzinfo else _localized(value, zone)
    if isinstance(value, str):
        return parse_moment(value, zone, where)
    raise PolicyError(f"{where}: a date and time expected (2026-10-05T23:59:00), not {value!r}")


def parse_moment(text, zone, where="a time"):
    """An ISO date and time ("2026-10-05 23:59", "2026-10-05T21:59:00Z", "... +02:00", or
    nbgrader's "2026-10-05 21:59:00.123456 UTC") as an aware datetime; without an offset, in `zone`."""
    cleaned = text.strip()
    if cleaned.endswith(" UTC"):
        cleaned, zone = cleaned[:-4], UTC
    if cleaned.endswith("Z"):
        cleaned = cleaned[:-1] + "+00:00"
    try:
        moment = datetime.datetime.fromisoformat(cleaned)
    except ValueError:
        raise PolicyError(f"{where}: {text!r} is not a date and time such as 2026-10-05 23:59 or "
                          f"2026-10-05T21:59:00+00:00") from None
    return moment if moment.tzinfo else _localized(moment, zone)


def _localized(naive, zone):
    """A wall-clock time in `zone`. A time that a daylight-saving change skips or repeats takes
    its first meaning (fold=0), as zoneinfo does."""
    return naive.replace(tzinfo=zone)


def read_timestamp_file(path):
    """The time in an nbgrader timestamp.txt (UTC when it names no zone, as nbgrader reads it);
    None when there is no such file. PolicyError when it holds something else."""
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read(200).strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise PolicyError(f"{path} could not be read ({exc})") from None
    return parse_moment(text, UTC, path)


# ------------------------------------------------------------------------------------------
# Deciding: lateness, tokens, penalty
# ------------------------------------------------------------------------------------------

def shifted(moment, zone, days=0, by=None):
    """`moment` moved on the wall clock of `zone` by whole days and/or by the wall-clock
    difference `by` (a timedelta), as an aware datetime."""
    local = moment.astimezone(zone).replace(tzinfo=None)
    local += days * DAY + (by or datetime.timedelta(0))
    return _localized(local, zone)


def wall_difference(later, earlier, zone):
    """later - earlier measured on the wall clock of `zone` (a timedelta)."""
    return later.astimezone(zone).replace(tzinfo=None) - earlier.astimezone(zone).replace(tzinfo=None)


def days_late(submitted, due, zone):
    """Started days after `due`, counted on the wall clock of `zone`: 0 when on time."""
    if instant(submitted) <= instant(due):
        return 0
    days = max(1, math.floor(wall_difference(submitted, due, zone) / DAY))
    while instant(shifted(due, zone, days)) < instant(submitted):
        days += 1
    while days > 1 and instant(shifted(due, zone, days - 1)) >= instant(submitted):
        days -= 1
    return days


def instant(moment):
    """An aware datetime in UTC. Python compares two datetimes of the same zone by their wall
    clocks, which a daylight-saving change makes ambiguous; in UTC every comparison is exact."""
    return moment.astimezone(UTC)


def outcome(chapter, submitted, zone, grace, extension=None, tokens=0):
    """The Lateness of a submission at `submitted` (aware) to `chapter`, with an extended due date
    (or None) and a number of tokens spent on it."""
    due, last = chapter.due, chapter.last
    if extension is not None:
        move = wall_difference(extension, chapter.due, zone)
        due = extension
        last = shifted(last, zone, by=move) if last is not None else None
    if tokens:
        due = shifted(due, zone, tokens)
        last = shifted(last, zone, tokens) if last is not None else None
    counted = instant(submitted) - grace  # within the grace after a date counts as before it
    days = days_late(counted, due, zone)
    after_last = last is not None and counted > instant(last)
    # Rounded: 0.1 * 7 is 0.7000000000000001 in floating point.
    share = 1.0 if after_last else round(min(chapter.per_day * days, chapter.max_share, 1.0), 9)
    return Lateness(submitted_at=submitted, due=due, days_late=days, share=share, tokens=tokens,
                    extension=extension, after_last=after_last)


def decide(policy, student, times):
    """{chapter: Lateness} for one student, every chapter of the policy with a known time.

    times: {chapter: aware submission time} (chapters without a time are on time and spend no
    token). Tokens go to the chapters by due date, each taking as few as give its best outcome."""
    left = policy.tokens
    decided = {}
    for name in policy.order():
        submitted = times.get(name)
        if submitted is None:
            continue
        chapter, extension = policy.chapters[name], policy.extensions.get((student, name))
        best = outcome(chapter, submitted, policy.zone, policy.grace, extension)
        for spent in range(1, left + 1):
            candidate = outcome(chapter, submitted, policy.zone, policy.grace, extension, spent)
            if candidate.share < best.share:
                best = candidate
        left -= best.tokens
        decided[name] = best
    return decided


def penalty_points(raw, share):
    """The points a chapter loses: its raw points times the share, to hundredths; all of them
    when the share is 1 (after the last date)."""
    if share >= 1:
        return raw
    return round(raw * share, 2)


def summary(lateness, penalty):
    """One line for the student's feedback: how late, what it cost, which extension or tokens applied."""
    if lateness.submitted_at is None:
        return "Submission time unknown: no late penalty was applied."
    zone = lateness.due.tzinfo
    when = lateness.submitted_at.astimezone(zone).strftime("%Y-%m-%d %H:%M %Z")
    extended = (f" (extension to {lateness.extension.astimezone(zone).strftime('%Y-%m-%d %H:%M %Z')})"
                if lateness.extension is not None else "")
    if lateness.after_last:
        return f"Submitted {when}, after the last date{extended}: no points (-{_points(penalty)})."
    days = lateness.days_late + lateness.tokens  # a token moved the due date by one day
    if days == 0:
        return f"Submitted {when}, on time{extended}."
    said = f"Submitted {when}, {_count_of(days, 'day')} late{extended}"
    if lateness.tokens:
        said += f", {_count_of(lateness.tokens, 'day')} waived by {_count_of(lateness.tokens, 'late token')}"
    if lateness.days_late == 0:
        return said + ": no penalty."
    return said + f": -{lateness.share:.0%} of the points (-{_points(penalty)})."


def _count_of(number, thing):
    return f"{number} {thing}{'s' if number != 1 else ''}"


def _points(value):
    return "1 point" if value == 1 else f"{value:g} points"
