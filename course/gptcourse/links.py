"""Where the course lives on the web: the one place that names its repository.

The first code cell of every notebook installs this package on Colab, before the package can
be imported, so that cell cannot read this module at run time: it carries the install
address as text. That text is written from here (`colab_cell_source`), and so is the
"Open in Colab" badge of each notebook (`colab_badge`). tests/test_notebook_links.py checks
that every master and every released notebook agrees with the values below.

To move the course: change REPOSITORY (and BRANCH), then

    python -m gptcourse.links solutions/*.ipynb   # rewrites the Colab cell and the badge
    make release                                  # regenerates course/*.ipynb from the masters
"""
import json
import re
import sys

# Still a placeholder address: the course has not been published yet.
REPOSITORY = "https://github.com/gpt-from-scratch/course"
BRANCH = "main"
# The package sits in this folder of the repository; the chapter notebooks too.
PACKAGE_FOLDER = "course"

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
_BADGE_PATTERN = re.compile(r"\[!\[Open In Colab\]\([^)]*\)\]\([^)]*\)")


def _github_path():
    """'gpt-from-scratch/course' from the repository address."""
    return REPOSITORY.removeprefix("https://github.com/").rstrip("/")


def pip_requirement():
    """What pip installs on Colab: the package folder of the repository, from git."""
    return f"gptcourse @ git+{REPOSITORY}.git@{BRANCH}#subdirectory={PACKAGE_FOLDER}"


def issues_url():
    return f"{REPOSITORY}/issues"


def colab_url(chapter):
    """The address that opens the released notebook of `chapter` in Colab."""
    return (f"https://colab.research.google.com/github/{_github_path()}/blob/{BRANCH}/"
            f"{PACKAGE_FOLDER}/{chapter}.ipynb")


def colab_badge(chapter):
    """Markdown of the "Open in Colab" badge of a chapter's notebook."""
    return f"[![Open In Colab]({BADGE_IMAGE})]({colab_url(chapter)})"


_COLAB_CELL = '''\
# Colab or a fresh environment: install the course package when it is missing.
# In a local checkout of the course this cell does nothing.
import importlib
import importlib.util
import subprocess
import sys

GPTCOURSE = "{requirement}"

if importlib.util.find_spec("gptcourse") is not None:
    print("gptcourse is already installed: nothing to do.")
else:
    print("gptcourse not found: installing it (this takes a minute) ...")
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", GPTCOURSE])
    if pip.returncode != 0:
        print(
            "Installing gptcourse failed (see pip's message above). What to do:\\n"
            "  1. Check the internet connection. On Colab: Runtime > Disconnect and delete\\n"
            "     runtime, then run this cell again.\\n"
            "  2. Or install it by hand in a new cell:\\n"
            f"     !pip install \\"{{GPTCOURSE}}\\"\\n"
            "  3. Still failing? Report it, with pip's message, at {issues}"
        )
        raise RuntimeError("gptcourse is not installed: follow the steps printed above.")
    importlib.invalidate_caches()
    print("gptcourse installed.")'''


def colab_cell_source():
    """The source of every notebook's first code cell (grade_id "colab")."""
    return _COLAB_CELL.format(requirement=pip_requirement(), issues=issues_url())


# -- keeping notebooks in line with the values above -----------------------------------------

def update_notebook(path):
    """Rewrite the Colab cell and the badge of the notebook at `path`; True if it changed.

    The badge gets a line of its own under the title, in the first markdown cell.
    """
    with open(path, encoding="utf-8") as f:
        text = f.read()
    nb = json.loads(text)
    chapter = nb["metadata"]["gptcourse"]["chapter"]
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade_id") == "colab":
            cell["source"] = _as_lines(colab_cell_source())
            break
    title_cell = next(cell for cell in nb["cells"] if cell["cell_type"] == "markdown")
    title, *rest = "".join(title_cell["source"]).split("\n")
    while rest and (not rest[0].strip() or _BADGE_PATTERN.fullmatch(rest[0].strip())):
        rest.pop(0)  # the blank lines and the old badge under the title
    title_cell["source"] = _as_lines("\n".join([title, "", colab_badge(chapter), "", *rest]))
    # The layout nbformat writes, so that `make release` leaves the file as it is.
    new_text = json.dumps(nb, sort_keys=True, indent=1, ensure_ascii=False)
    if new_text == text:
        return False
    with open(path, "w", encoding="utf-8") as f:
        f.write(new_text)
    return True


def _as_lines(source):
    """Notebook JSON stores a cell's source as a list of lines that keep their newlines."""
    return source.splitlines(keepends=True)


if __name__ == "__main__":
    for notebook_path in sys.argv[1:]:
        print(("updated " if update_notebook(notebook_path) else "unchanged ") + notebook_path)
