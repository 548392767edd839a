"""Tests of gptcourse.data: mirror, cache, download (from a local web server), checksums."""

from __future__ import annotations

import hashlib
import shutil
import socket
import zipfile
from pathlib import Path

import pytest

from gptcourse import data
from local_web_server import LocalWebServer

# The table of the mirror's README, copied by hand on purpose: the registry in
# gptcourse/data.py must agree with it (a typo in either makes a test fail).
README_TABLE = {
    "the-verdict": (
        "the-verdict.txt",
        "https://raw.githubusercontent.com/rasbt/LLMs-from-scratch/main/ch02/01_main-chapter-code/the-verdict.txt",
        20_479,
        "b41e41a68f0398a3154ae69e2e4c0e2694e17fe0d66730536837f1b01935b31f",
    ),
    "gpt2-encoder": (
        "gpt2/encoder.json",
        "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
        1_042_301,
        "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
    ),
    "gpt2-vocab": (
        "gpt2/vocab.bpe",
        "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
        456_318,
        "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
    ),
    "sms-spam": (
        "SMSSpamCollection",
        "https://archive.ics.uci.edu/static/public/228/sms+spam+collection.zip",
        477_907,
        "7d039a24a6083ed9ef0f806ebad56bbb976e3aeb8de05669173bfdc4996c239d",
    ),
    "instruction-data": (
        "instruction-data.json",
        "https://raw.githubusercontent.com/rasbt/LLMs-from-scratch/main/ch07/01_main-chapter-code/instruction-data.json",
        203_524,
        "7e09a9af353722ca15c18bc580f093f9c39d3178335a75177319cb1e1d163944",
    ),
    "tinyshakespeare": (
        "tinyshakespeare.txt",
        "https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",
        1_115_394,
        "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
    ),
}


# Data the course fetches that the offline mirror does not hold (too big): (file name, address,
# size, sha256) as published, the sha256 being the file's Git LFS object id on Hugging Face.
NOT_MIRRORED = {
    "gpt2-124m": (
        "gpt2/model.safetensors",
        "https://huggingface.co/openai-community/gpt2/resolve/607a30d783dfa663caf39e06633721c8d4cfcd7e/model.safetensors",
        548_105_171,
        "248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707",
    ),
}


def sha256_bytes(content: bytes) -> str:
    return hashlib.sha256(content).hexdigest()


@pytest.fixture(autouse=True)
def empty_cache_no_mirror(monkeypatch, tmp_path) -> Path:
    """Every test starts with no mirror and an empty cache folder of its own."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("GPTCOURSE_CACHE_DIR", str(cache))
    monkeypatch.delenv("GPTCOURSE_DATA_MIRROR", raising=False)
    return cache


@pytest.fixture
def web_root(tmp_path) -> Path:
    folder = tmp_path / "www"
    folder.mkdir()
    return folder


@pytest.fixture
def web_server(web_root):
    server = LocalWebServer(web_root)
    yield server
    server.stop()


def closed_port() -> int:
    """A localhost port on which nothing listens (bind, note the port, close)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def leftover_temporary_files(folder: Path) -> list[Path]:
    return list(folder.rglob("*.part"))


# --- the registry --------------------------------------------------------------------


def test_registry_matches_the_mirror_readme():
    assert set(data.DATASETS) == set(README_TABLE) | set(NOT_MIRRORED)
    for name, (filename, url, size, sha256) in {**README_TABLE, **NOT_MIRRORED}.items():
        dataset = data.DATASETS[name]
        assert (dataset.name, dataset.filename, dataset.url) == (name, filename, url)
        assert (dataset.size, dataset.sha256) == (size, sha256)
    assert data.DATASETS["sms-spam"].zip_member == "SMSSpamCollection"


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(ValueError, match="the-verdict"):
        data.fetch("the-verdikt")


# --- the mirror ----------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(README_TABLE))
def test_fetch_from_mirror_gives_the_verified_file(
    name, mirror_dir, monkeypatch, empty_cache_no_mirror
):
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror_dir))
    filename, _, size, sha256 = README_TABLE[name]

    path = data.fetch(name)

    assert path == mirror_dir / filename
    content = path.read_bytes()
    assert len(content) == size
    assert sha256_bytes(content) == sha256
    assert not empty_cache_no_mirror.exists()  # the mirror needs no cache


def test_read_text(mirror_dir, monkeypatch):
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror_dir))
    text = data.read_text("the-verdict")
    assert len(text) == 20_479
    assert text.startswith("I HAD always thought Jack Gisburn rather a cheap genius")


def test_corrupted_mirror_file_is_a_clear_error(mirror_dir, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    corrupted = mirror / "the-verdict.txt"
    shutil.copyfile(mirror_dir / "the-verdict.txt", corrupted)
    with open(corrupted, "ab") as file:
        file.write(b"one extra line\n")
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror))

    with pytest.raises(data.ChecksumError) as error:
        data.fetch("the-verdict")

    message = str(error.value)
    assert "the-verdict.txt" in message
    assert README_TABLE["the-verdict"][3] in message  # expected hash
    assert sha256_bytes(corrupted.read_bytes()) in message  # actual hash


def test_missing_mirror_file_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="gpt2/encoder.json"):
        data.fetch("gpt2-encoder")


# --- downloading, against a local web server -----------------------------------------


def test_download_verifies_and_caches(mirror_dir, web_root, web_server, empty_cache_no_mirror):
    shutil.copyfile(mirror_dir / "the-verdict.txt", web_root / "the-verdict.txt")
    url = web_server.url("the-verdict.txt")

    path = data.fetch("the-verdict", url=url)

    assert path == empty_cache_no_mirror / "the-verdict.txt"
    assert sha256_bytes(path.read_bytes()) == README_TABLE["the-verdict"][3]
    assert web_server.requested_paths == ["/the-verdict.txt"]
    assert leftover_temporary_files(empty_cache_no_mirror) == []

    # Second call: served from the cache, even with the server gone.
    web_server.stop()
    assert data.fetch("the-verdict", url=url) == path
    assert web_server.requested_paths == ["/the-verdict.txt"]


def test_download_into_a_subfolder_of_the_cache(
    mirror_dir, web_root, web_server, empty_cache_no_mirror
):
    shutil.copyfile(mirror_dir / "gpt2" / "vocab.bpe", web_root / "vocab.bpe")
    path = data.fetch("gpt2-vocab", url=web_server.url("vocab.bpe"))
    assert path == empty_cache_no_mirror / "gpt2" / "vocab.bpe"
    assert sha256_bytes(path.read_bytes()) == README_TABLE["gpt2-vocab"][3]


def test_corrupted_cached_file_is_downloaded_again(mirror_dir, web_root, web_server):
    shutil.copyfile(mirror_dir / "the-verdict.txt", web_root / "the-verdict.txt")
    url = web_server.url("the-verdict.txt")
    path = data.fetch("the-verdict", url=url)
    path.write_text("not the verdict")

    assert data.fetch("the-verdict", url=url) == path

    assert len(web_server.requested_paths) == 2
    assert sha256_bytes(path.read_bytes()) == README_TABLE["the-verdict"][3]


def test_download_with_wrong_checksum_keeps_nothing(web_root, web_server, empty_cache_no_mirror):
    (web_root / "the-verdict.txt").write_text("an error page, not the verdict")

    with pytest.raises(data.ChecksumError, match=README_TABLE["the-verdict"][3]):
        data.fetch("the-verdict", url=web_server.url("the-verdict.txt"))

    assert not (empty_cache_no_mirror / "the-verdict.txt").exists()
    assert leftover_temporary_files(empty_cache_no_mirror) == []


def test_sms_zip_is_downloaded_and_extracted(
    mirror_dir, web_root, web_server, empty_cache_no_mirror
):
    # The UCI address serves a zip holding SMSSpamCollection and a readme.
    with zipfile.ZipFile(web_root / "sms.zip", "w", zipfile.ZIP_DEFLATED) as archive:
        archive.write(mirror_dir / "SMSSpamCollection", "SMSSpamCollection")
        archive.writestr("readme", "SMS Spam Collection v.1\n")

    path = data.fetch("sms-spam", url=web_server.url("sms.zip"))

    assert path == empty_cache_no_mirror / "SMSSpamCollection"
    assert sha256_bytes(path.read_bytes()) == README_TABLE["sms-spam"][3]
    # Only the extracted file stays; the downloaded zip is removed.
    assert sorted(p.name for p in empty_cache_no_mirror.iterdir()) == ["SMSSpamCollection"]


def test_zip_without_the_member_is_an_error(web_root, web_server, empty_cache_no_mirror):
    with zipfile.ZipFile(web_root / "sms.zip", "w") as archive:
        archive.writestr("readme", "no data here\n")

    with pytest.raises(data.ChecksumError, match="SMSSpamCollection"):
        data.fetch("sms-spam", url=web_server.url("sms.zip"))
    assert list(empty_cache_no_mirror.iterdir()) == []


def test_unreachable_network_explains_the_mirror(empty_cache_no_mirror):
    url = f"http://127.0.0.1:{closed_port()}/the-verdict.txt"

    with pytest.raises(data.DownloadError) as error:
        data.fetch("the-verdict", url=url)

    message = str(error.value)
    assert url in message
    assert "GPTCOURSE_DATA_MIRROR" in message
    assert not (empty_cache_no_mirror / "the-verdict.txt").exists()


def test_missing_file_on_the_server_is_a_download_error(web_server):
    with pytest.raises(data.DownloadError, match="404"):
        data.fetch("the-verdict", url=web_server.url("no-such-file.txt"))


def test_default_cache_folder_is_in_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.delenv("GPTCOURSE_CACHE_DIR")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert data.cache_dir() == tmp_path / ".cache" / "gptcourse"
