"""Tests of gptcourse.tokenizer: tiktoken's GPT-2 encoding without internet."""

from __future__ import annotations

import hashlib
import inspect
import os

import pytest
import tiktoken
import tiktoken.load
import tiktoken.registry
import tiktoken_ext.openai_public

from gptcourse import data, tokenizer

HELLO = "Hello, do you like tea? <|endoftext|> In the sunlit terraces"
HELLO_IDS = [15496, 11, 466, 345, 588, 8887, 30, 220, 50256, 554, 262, 4252, 18250, 8812, 2114]
VERDICT_FIRST_IDS = [40, 367, 2885, 1464, 1807, 3619, 402, 271, 10899, 2138]

# tiktoken's cache names: the hex SHA-1 of each public address (tiktoken/load.py).
VOCAB_CACHE_NAME = "6d1cbeee0f20b3d9449abfede4726ed8212e3aee"
ENCODER_CACHE_NAME = "6c7ea1a7e38e3a7f062df639a5b80947f075ffe6"


def forget_built_encodings() -> None:
    """Make the next get_encoding() build the encoding from files again.

    Two caches hold a built encoding: our lru_cache and tiktoken's own registry.
    """
    tokenizer.get_encoding.cache_clear()
    tiktoken.registry.ENCODINGS.pop("gpt2", None)


@pytest.fixture
def offline_tokenizer(monkeypatch, tmp_path, mirror_dir):
    """Mirror on, empty caches, and tiktoken forbidden to download anything."""
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror_dir))
    monkeypatch.setenv("GPTCOURSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))

    def no_download(blobpath):
        raise AssertionError(f"tiktoken tried to download {blobpath}")

    # tiktoken reads a file through tiktoken.load.read_file when it is not in its cache.
    monkeypatch.setattr(tiktoken.load, "read_file", no_download)
    forget_built_encodings()
    return tmp_path


def test_encodes_the_reference_sentence(offline_tokenizer):
    encoding = tokenizer.get_encoding()
    ids = encoding.encode(HELLO, allowed_special={"<|endoftext|>"})
    assert ids == HELLO_IDS
    assert encoding.decode(ids) == HELLO
    assert encoding.n_vocab == 50257


def test_the_verdict_has_5145_tokens(offline_tokenizer):
    ids = tokenizer.get_encoding().encode(data.read_text("the-verdict"))
    assert len(ids) == 5145
    assert ids[:10] == VERDICT_FIRST_IDS


def test_files_are_placed_under_tiktokens_cache_names(offline_tokenizer):
    tokenizer.get_encoding()
    folder = offline_tokenizer / "tiktoken"
    names = sorted(path.name for path in folder.iterdir())
    assert names == sorted([VOCAB_CACHE_NAME, ENCODER_CACHE_NAME])
    vocab = (folder / VOCAB_CACHE_NAME).read_bytes()
    assert hashlib.sha256(vocab).hexdigest() == data.DATASETS["gpt2-vocab"].sha256


def test_a_damaged_file_in_tiktokens_cache_is_replaced(offline_tokenizer):
    folder = offline_tokenizer / "tiktoken"
    folder.mkdir()
    (folder / VOCAB_CACHE_NAME).write_text("damaged")
    # tiktoken would delete the damaged file and download it (forbidden here).
    assert tokenizer.get_encoding().encode("Hello") == [15496]


def test_two_processes_placing_the_files_at_once_both_succeed(offline_tokenizer, monkeypatch):
    """Another process (a second kernel, a second test worker) places the same file between this
    one's copy and its rename: both renames must succeed, and no temporary file stays behind."""
    folder = offline_tokenizer / "tiktoken"
    copy = tokenizer.shutil.copyfile
    interleaved = []

    def copy_then_let_another_process_place_it(source, destination):
        copy(source, destination)
        if not interleaved:
            interleaved.append(destination)
            tokenizer._place_in_tiktoken_cache("gpt2-vocab", folder)  # the other process, in between
        return destination

    (folder / VOCAB_CACHE_NAME).parent.mkdir(parents=True)
    monkeypatch.setattr(tokenizer.shutil, "copyfile", copy_then_let_another_process_place_it)
    tokenizer._place_in_tiktoken_cache("gpt2-vocab", folder)
    assert interleaved
    assert [path.name for path in folder.iterdir()] == [VOCAB_CACHE_NAME]
    assert hashlib.sha256((folder / VOCAB_CACHE_NAME).read_bytes()).hexdigest() == data.DATASETS["gpt2-vocab"].sha256


def test_cache_names_are_the_sha1_of_the_addresses():
    assert tokenizer.tiktoken_cache_name(data.DATASETS["gpt2-vocab"].url) == VOCAB_CACHE_NAME
    assert tokenizer.tiktoken_cache_name(data.DATASETS["gpt2-encoder"].url) == ENCODER_CACHE_NAME


def test_addresses_are_the_ones_tiktoken_downloads_from():
    # If a tiktoken release changes its addresses, the cache names change with them.
    source = inspect.getsource(tiktoken_ext.openai_public.gpt2)
    for name in tokenizer.GPT2_FILES:
        quoted_url = '"' + data.DATASETS[name].url + '"'
        assert quoted_url in source


def test_without_tiktoken_cache_dir_the_course_cache_is_used(offline_tokenizer, monkeypatch):
    # setenv first so that monkeypatch restores the variable after our code sets it.
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "unused")
    monkeypatch.delenv("TIKTOKEN_CACHE_DIR")
    expected_folder = offline_tokenizer / "cache" / "tiktoken"

    tokenizer.get_encoding()

    assert os.environ["TIKTOKEN_CACHE_DIR"] == str(expected_folder)
    assert (expected_folder / ENCODER_CACHE_NAME).is_file()


def test_the_encoding_is_built_once(offline_tokenizer):
    first = tokenizer.get_encoding()
    assert isinstance(first, tiktoken.Encoding)
    assert tokenizer.get_encoding() is first
