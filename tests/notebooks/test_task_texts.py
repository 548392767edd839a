"""What the task texts promise is what the checks check: statements that were true of no
check are gone, and the four tasks that run a model say, the same way, who switches its mode."""
import json
import re

import pytest

from factory import REPO

CALLER = "**Who switches the mode:** the caller."
FUNCTION = "**Who switches the mode:** this function."


def markdown(chapter, grade_id=None):
    nb = json.loads((REPO / "solutions" / f"{chapter}.ipynb").read_text())
    cells = [c for c in nb["cells"] if c["cell_type"] == "markdown"
             and (grade_id is None or c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id)]
    return "\n".join("".join(c["source"]) for c in cells)


def task_text(chapter, task):
    """The task's text without its hints."""
    return markdown(chapter, f"md_task_{task.replace('.', '_')}").split("<details")[0]


@pytest.mark.parametrize("chapter, task, who", [("04_gpt_model", "4.6", CALLER), ("05_pretraining", "5.3", CALLER),
                                                ("07_classification", "7.4", FUNCTION),
                                                ("07_classification", "7.5", FUNCTION)])
def test_the_tasks_that_run_a_model_say_who_switches_its_mode(chapter, task, who):
    text = re.sub(r"\s+", " ", task_text(chapter, task))
    assert who in text
    assert "Don't switch the model's mode" not in text


def test_texts_do_not_require_what_no_check_checks():
    five_three = re.sub(r"\s+", " ", task_text("05_pretraining", "5.3"))
    assert "as a Python float" not in five_three and "a 0-d tensor passes the checks too" in five_three
    five_five = re.sub(r"\s+", " ", task_text("05_pretraining", "5.5"))
    assert "the names are yours" in five_five
    seven_one = re.sub(r"\s+", " ", task_text("07_classification", "7.1"))
    assert "is tidy but not checked" in seven_one and "accepted too" in seven_one


def test_chapter_09_states_its_split_as_it_is():
    text = re.sub(r"\s+", " ", markdown("09_instruction"))
    assert "entry for entry)." not in text
    assert "we test on 55 and validate on 110" in text
    assert "see the note at the end" not in text


def test_generated_words_are_not_quoted_as_what_every_run_prints():
    """The words an untrained or small model writes depend on the last bits of the arithmetic: the
    text says so, and quotes no run's words as if the student's run printed them (the cell above
    shows the student's own)."""
    for chapter in ("04_gpt_model", "05_pretraining", "06_sampling"):
        text = re.sub(r"\s+", " ", markdown(chapter))
        assert "(on a CPU: *" not in text and "(on a CPU, *" not in text
        assert "the course's CPU run printed" not in text
        assert "last bits of the" in text
