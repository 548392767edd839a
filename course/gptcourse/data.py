"""Download, verify and cache the course's data files.

Every file the course uses is listed in ``DATASETS`` with its public address and its
sha256 checksum. ``fetch(name)`` returns a local path to a verified copy:

1. If the environment variable ``GPTCOURSE_DATA_MIRROR`` names a folder, the file is taken
   from there (workshops and CI run without internet and use such a local mirror).
2. Otherwise, a verified copy in the cache folder is reused
   (``GPTCOURSE_CACHE_DIR``, default ``~/.cache/gptcourse``).
3. Otherwise, the file is downloaded from its public address, checked, and cached.

Why checksums? A half-finished download, a changed file upstream, or a proxy's error page
saved as "the-verdict.txt" would otherwise give confusing results chapters later. With a
checksum we notice at once and say so.
"""

from __future__ import annotations

import hashlib
import http.client
import os
import shutil
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from .messages import say

MIRROR_ENV_VAR = "GPTCOURSE_DATA_MIRROR"
CACHE_ENV_VAR = "GPTCOURSE_CACHE_DIR"
DOWNLOAD_TIMEOUT_SECONDS = 60

# Errors that mean "the network or the server let us down" (not a bug in the code).
NETWORK_ERRORS = (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError)


@dataclass(frozen=True)
class Dataset:
    """One data file: where it comes from and what it must look like."""

    name: str  # the short name used in the notebooks, e.g. "the-verdict"
    url: str  # public address
    sha256: str  # checksum of the file we keep (for a zip: of the extracted member)
    filename: str  # relative path inside the mirror and the cache folder
    size: int  # size in bytes (for information; the checksum is what we trust)
    zip_member: str | None = None  # set when the address serves a zip holding the file


DATASETS: dict[str, Dataset] = {
    dataset.name: dataset
    for dataset in [
        Dataset(
            name="the-verdict",
            url="https://raw.githubusercontent.com/rasbt/LLMs-from-scratch/main/ch02/01_main-chapter-code/the-verdict.txt",
            sha256="b41e41a68f0398a3154ae69e2e4c0e2694e17fe0d66730536837f1b01935b31f",
            filename="the-verdict.txt",
            size=20_479,
        ),
        Dataset(
            name="gpt2-encoder",
            url="https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/encoder.json",
            sha256="196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783",
            filename="gpt2/encoder.json",
            size=1_042_301,
        ),
        Dataset(
            name="gpt2-vocab",
            url="https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/vocab.bpe",
            sha256="1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5",
            filename="gpt2/vocab.bpe",
            size=456_318,
        ),
        Dataset(
            name="sms-spam",
            url="https://archive.ics.uci.edu/static/public/228/sms+spam+collection.zip",
            sha256="7d039a24a6083ed9ef0f806ebad56bbb976e3aeb8de05669173bfdc4996c239d",
            filename="SMSSpamCollection",
            size=477_907,
            zip_member="SMSSpamCollection",
        ),
        Dataset(
            name="instruction-data",
            url="https://raw.githubusercontent.com/rasbt/LLMs-from-scratch/main/ch07/01_main-chapter-code/instruction-data.json",
            sha256="7e09a9af353722ca15c18bc580f093f9c39d3178335a75177319cb1e1d163944",
            filename="instruction-data.json",
            size=203_524,
        ),
        Dataset(
            # OpenAI's GPT-2 124M as Hugging Face publishes it, pinned to one revision of the
            # repository so that the checksum stays valid. Not in the offline mirror (548 MB).
            name="gpt2-124m",
            url="https://huggingface.co/openai-community/gpt2/resolve/607a30d783dfa663caf39e06633721c8d4cfcd7e/model.safetensors",
            sha256="248dfc3911869ec493c76e65bf2fcf7f615828b0254c12b473182f0f81d3a707",
            filename="gpt2/model.safetensors",
            size=548_105_171,
        ),
        Dataset(
            name="tinyshakespeare",
            url="https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt",
            sha256="86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed",
            filename="tinyshakespeare.txt",
            size=1_115_394,
        ),
    ]
}


class ChecksumError(ValueError):
    """A file's content is not what the course expects."""


class DownloadError(ConnectionError):
    """A file could not be downloaded (no network, server down, ...)."""


def fetch(name: str, *, url: str | None = None) -> Path:
    """Return the local path of the verified data file ``name`` (a key of ``DATASETS``).

    ``url`` replaces the public address for this call only (the tests use it to download
    from a small local web server instead of the internet).
    """
    dataset = _lookup(name)

    mirror = os.environ.get(MIRROR_ENV_VAR)
    if mirror:
        return _from_mirror(dataset, Path(mirror).expanduser())

    cached = cache_dir() / dataset.filename
    if cached.exists():
        if sha256_of(cached) == dataset.sha256:
            return cached
        # Probably an interrupted or damaged earlier download: fetch a fresh copy.
        say(f"The cached file {cached} has a wrong checksum; downloading it again.")

    _download_into_cache(dataset, url or dataset.url, cached)
    return cached


def read_text(name: str) -> str:
    """Return the content of the data file ``name`` as text (UTF-8)."""
    return fetch(name).read_text(encoding="utf-8")


def cache_dir() -> Path:
    """The folder where downloaded files are kept between sessions."""
    folder = os.environ.get(CACHE_ENV_VAR) or Path.home() / ".cache" / "gptcourse"
    return Path(folder).expanduser()


def sha256_of(path: Path) -> str:
    """The sha256 checksum of a file, read in chunks so big files need little memory."""
    digest = hashlib.sha256()
    with open(path, "rb") as file:
        while chunk := file.read(1024 * 1024):
            digest.update(chunk)
    return digest.hexdigest()


def _lookup(name: str) -> Dataset:
    if name not in DATASETS:
        known = ", ".join(sorted(DATASETS))
        raise ValueError(f"Unknown data set {name!r}. Known data sets: {known}.")
    return DATASETS[name]


def _from_mirror(dataset: Dataset, mirror: Path) -> Path:
    path = mirror / dataset.filename
    if not path.is_file():
        raise FileNotFoundError(
            f"{MIRROR_ENV_VAR} is set to {str(mirror)!r}, but the mirror has no file "
            f"{dataset.filename!r} (needed for data set {dataset.name!r})."
        )
    _verify(path, dataset, source=f"the mirror {mirror}")
    return path


def _verify(path: Path, dataset: Dataset, source: str) -> None:
    """Raise ChecksumError if the file at ``path`` is not the expected one."""
    actual = sha256_of(path)
    if actual != dataset.sha256:
        raise ChecksumError(
            f"Checksum mismatch for {dataset.filename!r} from {source}:\n"
            f"  expected sha256 {dataset.sha256}\n"
            f"  actual   sha256 {actual}\n"
            "The file is damaged or is not the file the course expects."
        )


def _download_into_cache(dataset: Dataset, url: str, destination: Path) -> None:
    """Download ``url``, check it, and only then move it to ``destination``.

    We write into temporary files in the cache folder and rename at the end: a download
    that is interrupted (Ctrl-C, lost Wi-Fi) can never leave a half-written file under
    the final name. Renaming within one folder is atomic.
    """
    destination.parent.mkdir(parents=True, exist_ok=True)
    download = _temporary_path(destination.parent)
    extracted = _temporary_path(destination.parent)
    try:
        _download(url, download, description=dataset.name)
        if dataset.zip_member is None:
            checked = download
        else:
            _extract_member(download, dataset.zip_member, extracted)
            checked = extracted
        _verify(checked, dataset, source=url)
        os.replace(checked, destination)
    finally:
        # Whatever happened, do not leave temporary files behind.
        download.unlink(missing_ok=True)
        extracted.unlink(missing_ok=True)


def _temporary_path(folder: Path) -> Path:
    handle, name = tempfile.mkstemp(dir=folder, suffix=".part")
    os.close(handle)
    return Path(name)


def _download(url: str, destination: Path, description: str) -> None:
    """Save the file at ``url`` as ``destination``; explain what to do if that fails."""
    # Some servers refuse requests that do not say who is asking (User-Agent).
    request = urllib.request.Request(url, headers={"User-Agent": "gptcourse-data-loader"})
    try:
        with urllib.request.urlopen(request, timeout=DOWNLOAD_TIMEOUT_SECONDS) as response:
            _save_with_progress_bar(response, destination, description)
    except NETWORK_ERRORS as error:
        raise DownloadError(
            f"Could not download {description!r} from {url}: {error}\n"
            "Without internet, copy the course's data files into a folder and set the "
            f"environment variable {MIRROR_ENV_VAR} to that folder, e.g.\n"
            f"  export {MIRROR_ENV_VAR}=/path/to/data"
        ) from error


def _save_with_progress_bar(response, destination: Path, description: str) -> None:
    """Copy an open HTTP response into a file, piece by piece, showing the progress."""
    size = response.headers.get("Content-Length")
    total = int(size) if size else None  # unknown size: the bar just counts bytes
    with open(destination, "wb") as file:
        with tqdm(total=total, unit="B", unit_scale=True, desc=description) as progress:
            while chunk := response.read(64 * 1024):
                file.write(chunk)
                progress.update(len(chunk))


def _extract_member(zip_path: Path, member: str, destination: Path) -> None:
    """Copy one file out of a zip archive."""
    if not zipfile.is_zipfile(zip_path):
        # e.g. a server's HTML error page instead of the archive
        raise ChecksumError(
            f"The downloaded file is not a zip archive (expected {member!r} inside)."
        )
    with zipfile.ZipFile(zip_path) as archive:
        if member not in archive.namelist():
            raise ChecksumError(
                f"The zip archive has no file {member!r}; it holds {archive.namelist()}."
            )
        with archive.open(member) as source, open(destination, "wb") as target:
            shutil.copyfileobj(source, target)
