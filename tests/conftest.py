"""Shared fixtures of the project's tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def mirror_dir() -> Path:
    """The offline data mirror: $GPTCOURSE_DATA_MIRROR, else ../shared/data next to the repo."""
    folder = Path(os.environ.get("GPTCOURSE_DATA_MIRROR") or REPO_ROOT.parent / "shared" / "data")
    if not (folder / "the-verdict.txt").is_file():
        pytest.fail(
            f"No data mirror at {folder}. Set GPTCOURSE_DATA_MIRROR to a folder holding "
            "the course's data files (see course/gptcourse/data.py)."
        )
    return folder
