"""Where the course lives on the web: the one place that names its repository.

The first code cell of every notebook installs this package on Colab, before the package can
be imported, so that cell cannot read this module at run time: it carries the install
address as text. That text is written from here (`colab_cell_source`), and so is the
"Open in Colab" badge of each notebook (`colab_badge`). tests/notebooks/test_notebook_links.py checks
that every master and every released notebook agrees with the values below.

To move the course (an instructor's fork, say; docs/publishing.md):

    python -m gptcourse.links --repository https://github.com/YOU/FORK solutions/*.ipynb
    make release                                  # regenerates course/*.ipynb from the masters

The first command writes the address into this file (REPOSITORY, and BRANCH with --branch),
then rewrites the Colab cell and the badge of the notebooks it is given.

The install cell takes its address from the environment variable GPTCOURSE_INSTALL_FROM when
that is set: anything pip installs (a wheel from `make dist`, a file:// or git+ address). An
instructor tries a wheel on Colab that way before pushing it, a JupyterHub sets it for every
server, and the tests point it at local stand-ins for GitHub.
"""
import json
import re

from gptcourse.checking import conventions

# The course's repository on GitHub (without .git); `--repository` rewrites this line.
REPOSITORY = "https://github.com/gpt-from-scratch/course"
BRANCH = "main"
# The package sits in this folder of the repository; the chapter notebooks too.
PACKAGE_FOLDER = "course"

# Read by the install cell: another source for pip than the repository (see above).
INSTALL_ENV_VAR = "GPTCOURSE_INSTALL_FROM"

BADGE_IMAGE = "https://colab.research.google.com/assets/colab-badge.svg"
# The badge's words are what a page shows where the image cannot load (offline, on a hub without
# internet): a sentence, not the image's label. The pattern also finds the badges written before.
BADGE_TEXT = "Open this chapter in Google Colab"
_BADGE_PATTERN = re.compile(r"\[!\[(?:Open In Colab|Open this chapter in Google Colab)\]\([^)]*\)\]\([^)]*\)")


def _github_path():
    """'gpt-from-scratch/course' from the repository address."""
    return REPOSITORY.removeprefix("https://github.com/").rstrip("/")


def pip_requirement():
    """What pip installs on Colab: the package folder of the repository, from git."""
    return f"gptcourse @ git+{REPOSITORY}.git@{BRANCH}#subdirectory={PACKAGE_FOLDER}"


def issues_url():
    return f"{REPOSITORY}/issues"


def docs_url(page):
    """The address of a page of the course's documentation (docs/<page> of the repository): what a
    notebook links to, since a student on Colab or a hub has no checkout to open it in."""
    return f"{REPOSITORY}/blob/{BRANCH}/docs/{page}"


# A link to a documentation page in a notebook, at whatever address it was written: rewritten
# with the current one by update_notebook.
_DOCS_LINK = re.compile(r"https://github\.com/[\w.-]+/[\w.-]+/blob/[\w./-]+?/docs/([\w-]+\.md)")


def colab_url(chapter):
    """The address that opens the released notebook of `chapter` in Colab."""
    return (f"https://colab.research.google.com/github/{_github_path()}/blob/{BRANCH}/"
            f"{PACKAGE_FOLDER}/{chapter}.ipynb")


def colab_badge(chapter):
    """Markdown of the "Open in Colab" badge of a chapter's notebook."""
    return f"[![{BADGE_TEXT}]({BADGE_IMAGE})]({colab_url(chapter)})"


_COLAB_CELL = '''\
# Colab or a fresh environment: install the course package when it is missing.
# In a local checkout of the course this cell does nothing.
import importlib
import importlib.util
import os
import subprocess
import sys

# pip installs it from the course's repository, or from {env_var} when that is set
# (a wheel, a file:// or a git+ address: see {publishing}).
GPTCOURSE = os.environ.get("{env_var}") or "{requirement}"

if importlib.util.find_spec("gptcourse") is not None:
    print("gptcourse is already installed: nothing to do.")
else:
    print(f"gptcourse not found: installing it from {{GPTCOURSE}} (this takes a minute) ...")
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
    return _COLAB_CELL.format(requirement=pip_requirement(), issues=issues_url(), env_var=INSTALL_ENV_VAR,
                              publishing=docs_url("publishing.md"))


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
        if conventions.grade_id(cell) == "colab":
            cell["source"] = _as_lines(colab_cell_source())
            break
    title_cell = next(cell for cell in nb["cells"] if cell["cell_type"] == "markdown")
    title, *rest = "".join(title_cell["source"]).split("\n")
    while rest and (not rest[0].strip() or _BADGE_PATTERN.fullmatch(rest[0].strip())):
        rest.pop(0)  # the blank lines and the old badge under the title
    title_cell["source"] = _as_lines("\n".join([title, "", colab_badge(chapter), "", *rest]))
    for cell in nb["cells"]:
        if cell["cell_type"] == "markdown":
            source = "".join(cell["source"])
            moved = _DOCS_LINK.sub(lambda found: docs_url(found.group(1)), source)
            if moved != source:
                cell["source"] = _as_lines(moved)
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


# -- moving the course: the address is written into this file -------------------------------

def set_address(repository, branch=None):
    """Make `repository` (and `branch`) the course's address, here and in this file's source.

    The badges open notebooks through Colab's GitHub loader, so any other host gets a warning.
    """
    repository = repository.rstrip("/").removesuffix(".git")
    if not repository.startswith("https://github.com/"):
        print(f"warning: {repository} is not on github.com: the Colab badges will not open it.")
    _set_constant("REPOSITORY", repository)
    if branch:
        _set_constant("BRANCH", branch)


def _set_constant(name, value):
    """Rewrite the line `NAME = "..."` of this file and the value in this module."""
    with open(__file__, encoding="utf-8") as f:
        source = f.read()
    line = re.compile(rf'^{name} = ".*"$', re.MULTILINE)
    if len(line.findall(source)) != 1:
        raise RuntimeError(f"{__file__} has no single line {name} = \"...\" to rewrite")
    with open(__file__, "w", encoding="utf-8") as f:
        f.write(line.sub(lambda _: f"{name} = {json.dumps(value)}", source))
    globals()[name] = value
    print(f"{name} = {value!r} in {__file__}")


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m gptcourse.links",
        description="Rewrite the Colab cell and the badge of notebooks from this module's address.")
    parser.add_argument("notebooks", nargs="*", help="notebooks to rewrite (the masters: solutions/*.ipynb)")
    parser.add_argument("--repository", help="first make this the address, e.g. https://github.com/YOU/FORK")
    parser.add_argument("--branch", help="with --repository: the branch the notebooks and the package come from")
    args = parser.parse_args(argv)
    if args.branch and not args.repository:
        parser.error("--branch goes with --repository")
    if args.repository:
        set_address(args.repository, args.branch)
    for notebook_path in args.notebooks:
        print(("updated " if update_notebook(notebook_path) else "unchanged ") + notebook_path)


if __name__ == "__main__":
    main()
