"""Keep the grader's secrets out of feedback.

A worker holds the reference code of the earlier tasks (the task being graded may use them),
and without a sandbox student code can read the grader's files. Whatever it puts into an
exception message, a warning or an attribute's description ends up in text the verdict may
quote, so every string of a worker message is cleaned here before the verdict sees it: a line
that contains a line of the reference solutions or of the hidden tests is withheld.

A secret line is a line of those sources that is not also public (the student release and
the public package show the setup code, the stubs and the signatures), and a secret line that
the student's own cell contains is allowed in that student's feedback (a correct student
writes some of the reference's lines too, and quoting their own line reveals nothing). Lines are
compared without whitespace, so re-indenting or joining lines does not get one through.
Deliberate encodings (base64, reversed text) are not detected: docs/grading.md says so.
"""
import glob
import json
import os
import re

import numpy as np

from grader.paths import ROOT

MIN_LENGTH = 20  # characters without whitespace: shorter lines are too common to be secrets
PROBE = 12  # length of the prefix used to find candidate secrets quickly
WITHHELD = "[withheld: this text contained the grader's reference or hidden-test code]"
_SPACE = re.compile(r"\s+")


def _squeeze(text):
    return _SPACE.sub("", text)


def _lines(text):
    return {_squeeze(line) for line in text.splitlines()}


def secret_sources(manifest):
    """Texts that must never reach feedback: reference solutions and the hidden grading modules."""
    texts = [task["source"] for chapter in manifest.values() for task in chapter["tasks"].values()]
    secret_files = [os.path.join(ROOT, "grader", "grading", "expectations.py")]
    for folder in ("chapters", "reference"):
        secret_files += sorted(glob.glob(os.path.join(ROOT, "grader", folder, "**", "*.py"), recursive=True))
    for path in secret_files:
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    return texts


def public_sources():
    """Texts students already have: the release notebooks' code and the public package."""
    texts = []
    for path in sorted(glob.glob(os.path.join(ROOT, "course", "*.ipynb"))):
        with open(path, encoding="utf-8") as f:
            notebook = json.load(f)
        texts += ["".join(cell.get("source", "")) for cell in notebook.get("cells", [])]
    for path in sorted(glob.glob(os.path.join(ROOT, "course", "gptcourse", "**", "*.py"), recursive=True)):
        with open(path, encoding="utf-8") as f:
            texts.append(f.read())
    return texts


class Scrubber:
    def __init__(self, secret_texts, public_texts=()):
        public = set()
        for text in public_texts:
            public |= _lines(text)
        self.secrets = {line for text in secret_texts for line in _lines(text)
                        if len(line) >= MIN_LENGTH and line not in public}
        self.by_prefix = {}
        for line in self.secrets:
            self.by_prefix.setdefault(line[:PROBE], []).append(line)

    @classmethod
    def for_manifest(cls, manifest):
        return cls(secret_sources(manifest), public_sources())

    def found_in(self, text, allowed=frozenset()):
        """The secret lines found in `text` (whitespace ignored), except those in `allowed`."""
        squeezed = _squeeze(text)
        found = set()
        for start in range(max(0, len(squeezed) - PROBE + 1)):
            for line in self.by_prefix.get(squeezed[start:start + PROBE], ()):
                if line not in allowed and squeezed.startswith(line, start):
                    found.add(line)
        return found

    def clean(self, text, allowed=frozenset()):
        if not self.found_in(text, allowed):
            return text
        lines = [WITHHELD if self.found_in(line, allowed) else line for line in text.splitlines()]
        cleaned = "\n".join(lines)
        return WITHHELD if self.found_in(cleaned, allowed) else cleaned  # a secret split over lines

    def message(self, message, job):
        """A worker message with every string cleaned; the student's own lines are allowed."""
        own = job.get("student_source", "") if isinstance(job, dict) else ""
        # What the student wrote is no secret to them, even where it matches the reference.
        allowed = frozenset(self.found_in(own)) if isinstance(own, str) else frozenset()
        return self._walk(message, allowed)

    def _walk(self, value, allowed):
        if isinstance(value, str):
            return self.clean(value, allowed)
        if isinstance(value, list):
            return [self._walk(item, allowed) for item in value]
        if isinstance(value, dict):
            return {key: self._walk(item, allowed) for key, item in value.items()}
        if isinstance(value, np.ndarray):
            return value
        return value
