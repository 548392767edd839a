"""What the judge found, as data: the fields behind a feedback message.

The student reads a sentence ("Failed on <case> [cpu]: Attention weights: wrong — it looks like
..."). The class report needs to know which students made the same mistake, and must not have to
read that sentence back: rewording a message would silently regroup the class. So every verdict
that is not a pass carries a `Finding` next to its message, and the report groups on its fields.

kind        what sort of problem: one of KINDS
case        the hidden case it failed on (its label) and the device, when a case ran
observed    the observation that differs, in words ("Output of forward (eval mode)")
mistake     the known mistake the observations match ("the scores are scaled: ...")
difference  how the observation differs when no known mistake matches: a short sort of
            difference ("wrong shape", "wrong values", ...) or a probe's own sentence
hint        the property hint that explains the symptom, when one does
error_type  the exception the student's code raised ("" for the grader's own checks)
step        what the probe was doing when it was raised ("calling forward(x) (step 2)")
detail      for anything else, the message's own words (a timeout, a rejected notebook, ...)

No torch, no numpy: the grader's report reads findings from grades.json in a process that
never imports either. A grade folder is written by whoever ran the grader, but results.jsonl
may be written by student code too: `from_json` accepts only well-formed findings.
"""
from dataclasses import asdict, dataclass, fields

# The kinds of problem, in the order the class report explains them.
KINDS = ("known mistake", "wrong result", "error", "timeout", "memory", "rejected", "grader fault")


@dataclass(frozen=True)
class Finding:
    kind: str
    case: str = ""
    device: str = ""
    observed: str = ""
    mistake: str = ""
    difference: str = ""
    hint: str = ""
    error_type: str = ""
    step: str = ""
    detail: str = ""

    def to_json(self):
        """The non-empty fields, for a grade record."""
        return {key: value for key, value in asdict(self).items() if value}


FIELDS = tuple(field.name for field in fields(Finding))


def from_json(value):
    """The Finding a record holds, or None when it holds none or a malformed one."""
    if not isinstance(value, dict) or value.get("kind") not in KINDS:
        return None
    if set(value) - set(FIELDS) or not all(isinstance(item, str) for item in value.values()):
        return None
    return Finding(**value)
