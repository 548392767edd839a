"""The GPT-2 tokenizer (tiktoken's "gpt2" encoding), working offline too.

``tiktoken.get_encoding("gpt2")`` downloads two files (``vocab.bpe`` and ``encoder.json``)
the first time it runs, which fails on a machine without internet. tiktoken first looks
in the folder named by the environment variable ``TIKTOKEN_CACHE_DIR`` for a file called
``sha1(url)`` (the hex SHA-1 of the address it would download from). So we fetch both
files with the course's own loader (mirror, cache or download, always checksummed), put
copies under those names into that folder, and then let tiktoken do the rest.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
from pathlib import Path

import tiktoken

from gptcourse import data

TIKTOKEN_ENV_VAR = "TIKTOKEN_CACHE_DIR"

# The course's data sets that tiktoken's "gpt2" encoding reads. Their addresses are the
# ones in tiktoken's source (tiktoken_ext/openai_public.py, function gpt2), which is
# what makes tiktoken's cache names match.
GPT2_FILES = ("gpt2-vocab", "gpt2-encoder")


@functools.lru_cache(maxsize=None)
def get_encoding() -> tiktoken.Encoding:
    """Return tiktoken's GPT-2 encoding (50,257 tokens, ``<|endoftext|>`` is 50256)."""
    folder = tiktoken_cache_dir()
    for name in GPT2_FILES:
        _place_in_tiktoken_cache(name, folder)
    return tiktoken.get_encoding("gpt2")


def load_if_available() -> Exception | None:
    """Load the encoding now, for the processes that prepare it ahead of student code (the
    grader, its worker hosts); None when it loaded, else the error. A task that needs the
    tokenizer reports a missing file itself, with its own message."""
    try:
        get_encoding()
    except Exception as exc:  # no mirror and no internet: reported where the tokenizer is used
        return exc
    return None


def tiktoken_cache_dir() -> Path:
    """The folder tiktoken reads its files from; set ``TIKTOKEN_CACHE_DIR`` if unset."""
    existing = os.environ.get(TIKTOKEN_ENV_VAR)
    # An empty TIKTOKEN_CACHE_DIR tells tiktoken not to cache at all (it would then
    # always download), so we treat it like an unset one.
    if existing:
        return Path(existing).expanduser()
    folder = data.cache_dir() / "tiktoken"
    os.environ[TIKTOKEN_ENV_VAR] = str(folder)
    return folder


def tiktoken_cache_name(url: str) -> str:
    """The file name tiktoken uses for ``url`` in its cache (see tiktoken/load.py)."""
    return hashlib.sha1(url.encode()).hexdigest()


def _place_in_tiktoken_cache(name: str, folder: Path) -> None:
    """Copy the verified data set ``name`` into tiktoken's cache folder."""
    dataset = data.DATASETS[name]
    target = folder / tiktoken_cache_name(dataset.url)
    if target.exists() and data.sha256_of(target) == dataset.sha256:
        return  # already there from an earlier session
    source = data.fetch(name)
    folder.mkdir(parents=True, exist_ok=True)
    # Copy to a temporary name of this process's own, then rename: tiktoken never sees a
    # half-copied file, and two processes placing it at once (two kernels, two test workers)
    # each rename their own copy.
    partial = data._temporary_path(folder)
    try:
        shutil.copyfile(source, partial)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
