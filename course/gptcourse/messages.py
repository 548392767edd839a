"""What the course prints, as a notebook shows it: long lines broken between words.

JupyterLab shows printed text and errors in boxes that break a line too long for them
anywhere, even inside a word or a path ("... the mirror has no file 'gpt2/mod" /
"el.safetensors'"). So every message of the course longer than a line is broken at its spaces
before it is shown: `say(text)` prints it so, and `wrap_at_words(text)` gives the broken text
for what is shown another way (a check's error, a run's description). `show_text(text)` prints
a text a model wrote as it reads, its line breaks as line breaks (a repr shows them as `\n`).
Tables and numbers the notebooks print themselves are laid out by hand, in short lines.
"""
import textwrap

# The widest line the course shows. The narrowest box is an error's: in a browser window
# about 1000 pixels wide, JupyterLab's file browser open, a line this short fits it whole.
SHOWN_WIDTH = 72


def wrap_at_words(text, width=SHOWN_WIDTH, break_long_words=False):
    """`text` with each line longer than `width` broken at spaces into lines of at most `width`.

    A word longer than `width` (a long expression, a path) stays whole on a line of its own, and
    a hyphenated word stays whole too: only the spaces between words become line breaks. With
    break_long_words, a word longer than a line is cut into pieces of `width` instead.
    """
    lines = []
    for line in text.split("\n"):
        if len(line) <= width:
            lines.append(line)  # short lines keep their spacing as it is
        else:
            lines += textwrap.wrap(line, width, break_long_words=break_long_words, break_on_hyphens=False)
    return "\n".join(lines)


def say(text):
    """Print one of the course's messages, its long lines broken between words."""
    print(wrap_at_words(text))


def show_text(text, indent="    "):
    """Print a text as it reads, indented: its own line breaks kept (an empty line stays
    empty), each line broken between words to fit beside the indent. A model can write a
    "word" longer than a line (a run of commas, say): that one is cut at the line's end, where
    the page would otherwise cut it wherever its box ends."""
    for line in text.split("\n"):
        wrapped = wrap_at_words(line, SHOWN_WIDTH - len(indent), break_long_words=True) if line.strip() else ""
        print(textwrap.indent(wrapped, indent))
