"""The toy models the probes run live in one module, gptcourse.checking.chapters.toys, and no chapter
module imports another chapter's module (what chapters share lives in a shared module:
chapters/attention.py, chapters/toys.py, grader/chapters/casekit.py and attention.py). Costs well under a second: it reads source files
and imports modules the other tests import anyway."""
import ast
import inspect

import pytest
import torch.nn as nn

from factory import REPO
from gptcourse.checking.tasks import CHAPTERS, chapter_module

CHAPTER_FILES = sorted((REPO / "course/gptcourse/checking/chapters").glob("ch*.py")) + sorted(
    (REPO / "grader/chapters").glob("ch*.py"))


def _chapter_of(module_name):
    """'gptcourse.checking.chapters.ch05_pretraining' -> '05_pretraining'; None for any other module."""
    package, _, leaf = module_name.rpartition(".")
    if package in ("gptcourse.checking.chapters", "grader.chapters") and leaf.startswith("ch"):
        return leaf[2:]
    return None


def _imported_modules(path):
    """Every module a file imports from, by its dotted name (`from X import y` and `import X`)."""
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            for alias in node.names:  # from gptcourse.checking.chapters import ch03_multihead_attention
                yield f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)


def test_the_rule_finds_a_cross_chapter_import(tmp_path):
    """The check below can fail: a file that imports chapter 03's module is caught."""
    path = tmp_path / "ch06_sampling.py"
    path.write_text("from gptcourse.checking.chapters.ch03_multihead_attention import multi_head_arguments\n")
    assert {_chapter_of(m) for m in _imported_modules(path)} - {None} == {"03_multihead_attention"}


@pytest.mark.parametrize("path", CHAPTER_FILES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_chapter_module_imports_another_chapter_s_module(path):
    own = path.stem[2:]
    others = sorted({m for m in _imported_modules(path) if _chapter_of(m) not in (None, own)})
    assert not others, (f"{path.relative_to(REPO)} imports {others}: move what chapters share to "
                        f"gptcourse/checking/chapters/toys.py (models), chapters/attention.py (attention probes) or "
                        f"grader/chapters/casekit.py or attention.py (the grader's cases and known mistakes)")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_public_chapter_modules_define_no_model(chapter):
    """The models a chapter's probes build are the toys of gptcourse.checking.chapters.toys."""
    module = chapter_module(chapter)
    models = [name for name, value in vars(module).items()
              if inspect.isclass(value) and issubclass(value, nn.Module) and value.__module__ == module.__name__]
    assert not models, f"{module.__name__} defines {models}: toy models belong in gptcourse/checking/chapters/toys.py"
