"""GPT-2 weights: the safetensors reader and writer, and how the weights are fetched."""
import json
import struct

import numpy as np
import pytest
import torch

from gptcourse import data, gpt2_weights
from gptcourse.gpt2_weights import read_safetensors, write_safetensors
from gptcourse.messages import SHOWN_WIDTH


def test_a_file_laid_out_by_hand_reads_back_with_names_shapes_dtypes_and_values(tmp_path):
    """The format as published: 8 bytes of header length (little-endian), a JSON header with
    each tensor's dtype, shape and byte range, then the raw little-endian numbers."""
    floats = np.array([[1.5, -2.0, 3.25], [0.0, 4.0, -0.5]], dtype="<f4")
    ints = np.array([7, -8], dtype="<i8")
    header = {"__metadata__": {"format": "pt"},
              "h.0.attn.c_attn.weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "steps": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]}}
    encoded = json.dumps(header).encode()
    path = tmp_path / "hand.safetensors"
    path.write_bytes(struct.pack("<Q", len(encoded)) + encoded + floats.tobytes() + ints.tobytes())
    tensors = read_safetensors(path)
    assert list(tensors) == ["h.0.attn.c_attn.weight", "steps"]
    assert tensors["h.0.attn.c_attn.weight"].dtype == torch.float32
    assert torch.equal(tensors["h.0.attn.c_attn.weight"], torch.from_numpy(floats))
    assert torch.equal(tensors["steps"], torch.tensor([7, -8]))


def test_what_the_writer_writes_the_reader_reads_back(tmp_path):
    tensors = {"wte.weight": torch.randn(5, 4), "mask": torch.tril(torch.ones(1, 1, 3, 3)),
               "half": torch.randn(3, dtype=torch.bfloat16), "double": torch.randn(2, 2, dtype=torch.float64),
               "flags": torch.tensor([True, False]), "empty": torch.zeros(0, 4)}
    path = tmp_path / "round.safetensors"
    write_safetensors(tensors, path)
    (header_size,) = struct.unpack("<Q", path.read_bytes()[:8])
    assert header_size % 8 == 0  # the header is padded, as the format asks
    back = read_safetensors(path)
    assert list(back) == list(tensors)
    for name, tensor in tensors.items():
        assert back[name].dtype == tensor.dtype and torch.equal(back[name], tensor), name


def test_a_file_that_is_not_safetensors_is_refused_clearly(tmp_path):
    short = tmp_path / "short.safetensors"
    short.write_bytes(b"abc")
    with pytest.raises(ValueError, match="not a safetensors file"):
        read_safetensors(short)
    lying = tmp_path / "lying.safetensors"
    lying.write_bytes(struct.pack("<Q", 10_000) + b"{}")
    with pytest.raises(ValueError, match="header is longer than the file"):
        read_safetensors(lying)


def test_the_weights_come_from_the_pinned_public_address_not_the_mirror(tmp_path, monkeypatch, capsys):
    dataset = data.DATASETS[gpt2_weights.WEIGHTS_DATASET]
    assert dataset.url.startswith("https://huggingface.co/openai-community/gpt2/resolve/")
    assert "/main/" not in dataset.url  # a pinned revision: the checksum cannot go stale
    monkeypatch.setenv(data.MIRROR_ENV_VAR, str(tmp_path))  # a mirror without the weights
    with pytest.raises(FileNotFoundError, match="gpt2/model.safetensors"):
        gpt2_weights.load_gpt2_state_dict()
    assert gpt2_weights.try_load_gpt2_state_dict() is None
    said = capsys.readouterr().out
    assert "go on" in said and "'gpt2/model.safetensors'" in said  # the file's name whole, on one line
    # One message, broken between words for the page (gptcourse/messages.py), the mirror's path whole.
    assert all(len(line) <= SHOWN_WIDTH or " " not in line for line in said.splitlines())
    assert str(tmp_path) in said.replace("\n", "") and f"'{tmp_path}'" in " ".join(said.split())


def test_cached_weights_are_checked_and_read(tmp_path, monkeypatch):
    """A small checkpoint in the cache stands in for the 548 MB file: the loader checks its
    sha256 against the registry before reading it."""
    monkeypatch.delenv(data.MIRROR_ENV_VAR, raising=False)
    monkeypatch.setenv(data.CACHE_ENV_VAR, str(tmp_path))
    small = {"wte.weight": torch.randn(7, 4), "ln_f.bias": torch.zeros(4)}
    path = tmp_path / "gpt2" / "model.safetensors"
    path.parent.mkdir()
    write_safetensors(small, path)
    real = data.DATASETS[gpt2_weights.WEIGHTS_DATASET]
    monkeypatch.setitem(data.DATASETS, gpt2_weights.WEIGHTS_DATASET,
                        data.Dataset(real.name, "http://127.0.0.1:9/unreachable", data.sha256_of(path), real.filename,
                                     path.stat().st_size))
    loaded = gpt2_weights.load_gpt2_state_dict()
    assert torch.equal(loaded["wte.weight"], small["wte.weight"])
    path.write_bytes(path.read_bytes()[:-4] + b"\1\1\1\1")  # damaged: checked, refetched, which fails here
    with pytest.raises(data.DownloadError):
        gpt2_weights.load_gpt2_state_dict()
