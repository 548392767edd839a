"""The course's messages as a page shows them (gptcourse.messages): long lines broken between
words, every message, not only the checks'. tests/notebooks/test_jupyterlab.py measures the page."""
import ast

from factory import REPO, one_line
from gptcourse import gpt2_weights
from gptcourse.messages import SHOWN_WIDTH, say, show_text

PACKAGE = REPO / "course" / "gptcourse"
# The modules that may print without `say`: what they print is never a notebook's message.
PRINTS_ON_ITS_OWN = {
    "links.py": "a command line tool, and the code of the Colab cell it writes",
    "ddp_pretrain.py": "a program that torchrun starts in a terminal",
    "messages.py": "say and show_text themselves",
    "chat.py": "the candidates' table of 'why this token', laid out by hand in short lines, in a widget's output",
    "validate_in_background.py": "the validating process's answer, JSON read by the server extension",
}


def fits(text):
    """Every line fits the shown width, or is a single word too long for any line."""
    return all(len(line) <= SHOWN_WIDTH or " " not in line.strip() for line in text.splitlines())


def test_every_message_of_the_course_is_printed_through_say():
    printing = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name in PRINTS_ON_ITS_OWN:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                printing.append(f"{path.relative_to(PACKAGE)}:{node.lineno}")
    assert printing == [], f"print a course message with gptcourse.messages.say: {printing}"


def test_the_missing_gpt2_weights_sentence_breaks_between_words(tmp_path, monkeypatch, capsys):
    """The sentence a notebook shows offline names the mirror's path: once one line of 200
    characters, broken by JupyterLab inside words and inside the path."""
    mirror = tmp_path / "a-workshop-room" / "with-the-course-data-mirror"
    mirror.mkdir(parents=True)
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror))
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)

    assert gpt2_weights.try_load_gpt2_state_dict() is None

    said = capsys.readouterr().out
    assert one_line(said).startswith("The GPT-2 weights are not available here, so the cells below go on without them")
    assert str(mirror) in one_line(said) and len(one_line(said)) > 2 * SHOWN_WIDTH
    assert fits(said) and said.count("\n") >= 3, said


def test_say_keeps_the_words_and_their_order(capsys):
    message = "word " * 40 + "/a/path/longer/than/any/line/" + "x" * SHOWN_WIDTH + " end"
    say(message)
    said = capsys.readouterr().out
    assert said.split() == message.split() and fits(said)


def test_a_generated_text_is_shown_as_it_reads(capsys):
    """Its line breaks as line breaks, where a repr showed a literal \\n\\n; long lines broken
    between words, beside the indent."""
    text = 'Every effort moves you?"\n\n"Yes--quite insensible to the irony. ' + "She wanted him vindicated. " * 5
    show_text(text)
    lines = capsys.readouterr().out.splitlines()
    assert lines[:2] == ['    Every effort moves you?"', ""] and lines[2].startswith('    "Yes--quite insensible')
    assert len(lines) > 4  # the long line, broken
    assert all(line.startswith("    ") for line in lines if line) and fits("\n".join(lines))
    assert " ".join(lines).split() == text.split() and "\\n" not in "".join(lines)


def test_a_generated_word_longer_than_a_line_is_cut_at_the_lines_end(capsys):
    """A small model's run of commas has no space to break at: the page would cut it wherever
    its box ends; show_text cuts it at the line's end, and nothing of it is lost."""
    text = "It was" + "," * 150 + " and so"
    show_text(text)
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) >= 3 and fits("\n".join(lines)), lines
    assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace(" ", "")
