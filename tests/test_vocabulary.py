"""One word per meaning: what docs/authoring.md's vocabulary says a thing is never called does
not come back; and no file cites this project's issue tracker, which a clone cannot read.

The table "Words, as the code uses them" is the one source: its last column lists, per word, the
words it replaced. A quoted one ("...") must not appear, as a word of its own or its plural, in
what people read about the course's machinery: its code, the tests, the benchmarks and the docs
(not the corpus of student code, and not the notebooks, whose teaching text is about language
models, not about this code). A name in backquotes must not come back as a name (a parameter or a
variable) in gptcourse.checking's code.

A note that says why the code is as it is says so in its own words: "issue 24" or "the issue's
target" points to a tracker that a clone of the repository does not have. Another project's issue
is cited by its address (github.com/OWNER/NAME/issues/N), which stays readable.
"""
import ast
import re

from factory import REPO

VOCABULARY_HEADING = "## Words, as the code uses them"
# What people read about the machinery, as (folder, suffixes), but LEFT_OUT.
READ = [("course/gptcourse", (".py",)), ("grader", (".py",)), ("benchmarks", (".py",)), ("tests", (".py", ".md")),
        ("docs", (".md",)), (".", ("README.md",)), ("course", ("README.md",))]
LEFT_OUT = ("tests/test_vocabulary.py",)  # this file names them to test the scan
STUDENT_CODE = ("tests/corpus/", ".py")  # the corpus's cells (its README is about the machinery)
# Other projects' words spelled like a retired one, allowed where they are, exactly as written.
FOREIGN = {"docs/grading.md": ("spec:",)}  # the field of a Kubernetes resource (the Dask operator's example)

# Citations of this project's tracker, and where they are looked for: what people read, the
# notebooks, and the build and CI files.
URL = re.compile(r"https?://\S+")
TRACKER_CITATION = re.compile(r"(?<![\w/])(?:issues?\s+#?\d+|the\s+issue\b)", re.IGNORECASE)
CITED_IN = READ + [("solutions", (".ipynb",)), ("course", (".ipynb",)), (".ci", ("",)),
                   ("grader/outputs/gradescope_scripts", ("",)), (".", ("Makefile", ".yml", ".toml")),
                   ("course", ("pyproject.toml",))]


def vocabulary_rows(text):
    """[(word, not called)] of the vocabulary table in docs/authoring.md's text."""
    section = text[text.index(VOCABULARY_HEADING):]
    section = section[:section.index("\n## ", 1)]
    rows = [line for line in section.splitlines() if line.startswith("| ") and not line.startswith("| word ")]
    return [(cells[0], cells[-1]) for cells in ([c.strip() for c in row.strip("|").split("|")] for row in rows)]


def retired_words(rows):
    return [word for _, cell in rows for word in re.findall(r'"([^"]+)"', cell)]


def retired_names(rows):
    return [name for _, cell in rows for name in re.findall(r"^`(\w+)`", cell)]


def files_people_read(root, places=READ):
    for folder, suffixes in places:
        base = root / folder
        paths = base.rglob("*") if folder != "." else base.glob("*")
        for path in sorted(paths):
            relative = path.relative_to(root).as_posix()
            student_code = relative.startswith(STUDENT_CODE[0]) and relative.endswith(STUDENT_CODE[1])
            if path.is_file() and relative.endswith(suffixes) and not relative.startswith(LEFT_OUT) and not student_code:
                yield relative, path


def without_vocabulary_table(text):
    """The vocabulary's own rows name the retired words: everything else must not."""
    if VOCABULARY_HEADING not in text:
        return text
    start = text.index(VOCABULARY_HEADING)
    end = text.index("\n## ", start + 1)
    return text[:start] + text[end:]


def retired_pattern(words):
    """Each word as a word of its own, or its plural (also before "'s"), its first letter in either
    case: "spec" finds "spec", "Specs" and "spec's", but not `SPECS` (a name in the code),
    "specific" or `TaskSpec`."""
    spellings = [f"[{re.escape(w[0].lower())}{re.escape(w[0].upper())}]{re.escape(w[1:])}" for w in words]
    return re.compile(r"(?<![\w])(?:" + "|".join(spellings) + r")s?(?![\w])")


def places_using(words, root):
    """['path:line: word'] for every retired word found (see retired_pattern)."""
    pattern = retired_pattern(words)
    found = []
    for relative, path in files_people_read(root):
        text = without_vocabulary_table(path.read_text(encoding="utf-8"))
        for foreign in FOREIGN.get(relative, ()):
            text = text.replace(foreign, "")
        for number, line in enumerate(text.splitlines(), 1):
            line = URL.sub("", line)  # another site's address is its own: purl.imsglobal.org/spec/...
            found += [f"{relative}:{number}: {m.group(0)}" for m in pattern.finditer(line)]
    return found


def tracker_citations(root):
    """['path:line: citation'] for every citation of this project's issue tracker (one may run
    over a line break)."""
    found = []
    for relative, path in files_people_read(root, CITED_IN):
        text = path.read_text(encoding="utf-8")
        for m in TRACKER_CITATION.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            found.append(f"{relative}:{line}: {' '.join(m.group(0).split())}")
    return found


def names_bound(source, names):
    """[(line, name)] where the code binds one of `names`: a parameter, or an assignment."""
    bound = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.arg) and node.arg in names:
            bound.append((node.lineno, node.arg))
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id in names:
            bound.append((node.lineno, node.id))
    return bound


def rows():
    return vocabulary_rows((REPO / "docs" / "authoring.md").read_text(encoding="utf-8"))


def test_the_vocabulary_says_what_the_words_replaced():
    found = dict(rows())
    assert "variant" in retired_words(rows()) and "hidden chapter module" in retired_words(rows())
    assert found["contract"].startswith('"spec"'), found["contract"]
    assert retired_names(rows()) == ["p"], found["probe"]


def test_no_retired_word_comes_back():
    found = places_using(retired_words(rows()), REPO)
    assert not found, "words the vocabulary (docs/authoring.md) retired:\n" + "\n".join(found[:40])


def test_no_file_cites_the_issue_tracker():
    found = tracker_citations(REPO)
    assert not found, "say what is meant instead of citing an issue:\n" + "\n".join(found[:40])


def test_the_probe_is_never_bound_to_a_retired_name_in_the_checking_code():
    names = set(retired_names(rows()))
    found = [f"{path.relative_to(REPO)}:{line}: {name}"
             for path in sorted((REPO / "course" / "gptcourse" / "checking").rglob("*.py"))
             for line, name in names_bound(path.read_text(encoding="utf-8"), names)]
    assert not found, "names the vocabulary (docs/authoring.md) retired:\n" + "\n".join(found)


def test_the_scans_find_what_they_look_for(tmp_path):
    """The two checks above can fail: a retired word in a doc, a parameter in code."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text("A known\nVariants of the reference.\n")
    (tmp_path / "tests" / "corpus").mkdir(parents=True)
    (tmp_path / "tests" / "corpus" / "student.py").write_text("# a variant\n")  # the corpus is left out
    assert places_using(["variant"], tmp_path) == ["docs/notes.md:2: Variants"]
    assert names_bound("def f(p):\n    q = p\n    p = 2\n", {"p"}) == [(1, "p"), (3, "p")]


def test_a_retired_word_is_found_as_a_word_of_its_own(tmp_path):
    """A short word such as "spec" is found alone, never inside a longer word or a name in capitals."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text(
        "The spec's order; specs. Spec\nSPECS, TaskSpec, specific, special, module_spec, grader_spec()\n"
        "SCOPE = 'https://purl.imsglobal.org/spec/lti-ags/scope/score'\n")
    (tmp_path / "docs" / "grading.md").write_text("kind: DaskCluster\nspec:\n  worker:\n    spec: {}\n# a spec\n")
    assert places_using(["spec"], tmp_path) == [
        "docs/grading.md:5: spec", "docs/notes.md:1: spec", "docs/notes.md:1: specs", "docs/notes.md:1: Spec"]


def test_the_citation_scan_finds_what_it_looks_for(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "notes.md").write_text(
        "As issue 24 asks.\nSee issues 26 and 35, Issue #7.\nThe issue's target.\n"
        "github.com/jupyter/nbgrader/issues/530 is another project's.\nA tissue 3 cm wide.\nRuns all issue\n"
        "24 measures.\n")
    (tmp_path / "Makefile").write_text("# the issue says so\n")
    assert tracker_citations(tmp_path) == [
        "docs/notes.md:1: issue 24", "docs/notes.md:2: issues 26", "docs/notes.md:2: Issue #7",
        "docs/notes.md:3: The issue", "docs/notes.md:6: issue 24", "Makefile:1: the issue"]
