"""A stand-in for OpenAI's GPT-2 checkpoint, for the tests of the notebooks' GPT-2 branch.

The real file (Hugging Face's openai-community/gpt2 `model.safetensors`, 548 MB) is not in
the offline mirror, and the course's machines reach no host but the package registries. The
stand-in is written the way the published file is, so that everything that reads it (the
data loader, `gptcourse.gpt2_weights`, the student's `load_weights_into_gpt`) meets what it
would meet with the real one:

- the published tensor names (`PUBLISHED_NAMES`), all float32 ("F32"); Conv1D weights stored
  (in, out), query, key and value side by side in `c_attn`, the causal masks `h.N.attn.bias`
  of shape (1, 1, context, context);
- the header `{"__metadata__": {"format": "pt"}, ...}` as compact JSON, the tensors in name
  order (Hugging Face's writer sorts them by dtype, then by name), and no padding after the
  header: the published file is 548,105,171 bytes, an odd number, while every tensor in it
  is made of 4-byte floats, so its header cannot have been padded to a multiple of 8.

Only its sizes are small: GPT-2's vocabulary (50,257, since the notebooks feed it real GPT-2
token ids) and context (1,024), but 64-dim embeddings, 4 heads and 2 blocks (21 MB).
"""
from __future__ import annotations

import json
import math
import struct

import numpy as np
import torch
import torch.nn.functional as F

from gptcourse import data
from gptcourse.gpt2_weights import GPT2_124M_CONFIG, WEIGHTS_DATASET
from grader.chapters.ch05_pretraining import hf_gpt2_state_dict

# The sizes that make the stand-in small; everything else is GPT2_124M_CONFIG's.
STANDIN_SIZES = {"emb_dim": 64, "n_heads": 4, "n_layers": 2}

# The names in the published file: these two, the block's names for every block h.0 to h.11,
# then the final norm (as listed by safetensors' safe_open on openai-community/gpt2).
PUBLISHED_NAMES_BEFORE_BLOCKS = ["wte.weight", "wpe.weight"]
PUBLISHED_BLOCK_NAMES = ["ln_1.weight", "ln_1.bias", "attn.bias", "attn.c_attn.weight", "attn.c_attn.bias",
                         "attn.c_proj.weight", "attn.c_proj.bias", "ln_2.weight", "ln_2.bias",
                         "mlp.c_fc.weight", "mlp.c_fc.bias", "mlp.c_proj.weight", "mlp.c_proj.bias"]
PUBLISHED_NAMES_AFTER_BLOCKS = ["ln_f.weight", "ln_f.bias"]
PUBLISHED_SIZE = 548_105_171  # bytes, as in the course's registry (gptcourse.data)


def published_names(n_layers):
    blocks = [f"h.{b}.{name}" for b in range(n_layers) for name in PUBLISHED_BLOCK_NAMES]
    return PUBLISHED_NAMES_BEFORE_BLOCKS + blocks + PUBLISHED_NAMES_AFTER_BLOCKS


def standin_config():
    """GPT2_124M_CONFIG with the stand-in's small sizes."""
    return {**GPT2_124M_CONFIG, **STANDIN_SIZES}


def standin_tensors(cfg, seed=124):
    """A checkpoint of `cfg`'s sizes in the published layout, random but fixed by `seed`
    (the hidden cases' generator of chapter 05, with its mask buffers), in float32."""
    arrays = hf_gpt2_state_dict(np.random.default_rng(seed), cfg, with_mask_buffers=True)
    return {name: torch.tensor(array, dtype=torch.float32) for name, array in arrays.items()}


def published_header(shapes):
    """The header the published file's writer makes for float32 tensors of these shapes:
    compact JSON, metadata first, then the tensors in name order with their byte ranges."""
    header, offset = {"__metadata__": {"format": "pt"}}, 0
    for name in sorted(shapes):
        size = 4 * math.prod(shapes[name])
        header[name] = {"dtype": "F32", "shape": list(shapes[name]), "data_offsets": [offset, offset + size]}
        offset += size
    return json.dumps(header, separators=(",", ":")).encode("utf-8")


def write_as_published(tensors, path):
    """Write float32 tensors as the published file is written (see the module's docstring).
    Deliberately not gptcourse's own writer: the stand-in must not come from the code it tests."""
    assert all(t.dtype == torch.float32 for t in tensors.values())
    header = published_header({name: tuple(t.shape) for name, t in tensors.items()})
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(header)))  # little-endian unsigned 64-bit length
        file.write(header)
        for name in sorted(tensors):
            file.write(tensors[name].contiguous().numpy().astype("<f4").tobytes())


def registry_entry(path, url):
    """The test-only registry entry: the real entry's name and file name, the stand-in's
    address, sha256 and size."""
    real = data.DATASETS[WEIGHTS_DATASET]
    return data.Dataset(name=real.name, url=url, sha256=data.sha256_of(path), filename=real.filename,
                        size=path.stat().st_size)


def hf_gpt2_logits(sd, cfg, idx):
    """GPT-2's forward pass written directly on a Hugging Face state dict (Conv1D: x @ W + b),
    independent of GPTModel: what load_weights_into_gpt must reproduce."""
    emb, heads = cfg["emb_dim"], cfg["n_heads"]
    batch, tokens = idx.shape
    x = sd["wte.weight"][idx] + sd["wpe.weight"][:tokens]
    causal = torch.triu(torch.ones(tokens, tokens, dtype=torch.bool), 1)

    def norm(x, name):
        return F.layer_norm(x, (emb,), sd[name + ".weight"], sd[name + ".bias"], eps=1e-5)

    for b in range(cfg["n_layers"]):
        h = f"h.{b}."
        qkv = norm(x, h + "ln_1") @ sd[h + "attn.c_attn.weight"] + sd[h + "attn.c_attn.bias"]
        q, k, v = (t.view(batch, tokens, heads, emb // heads).transpose(1, 2) for t in qkv.split(emb, dim=-1))
        scores = (q @ k.transpose(-2, -1) / (emb // heads) ** 0.5).masked_fill(causal, float("-inf"))
        context = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, tokens, emb)
        x = x + context @ sd[h + "attn.c_proj.weight"] + sd[h + "attn.c_proj.bias"]
        hidden = F.gelu(norm(x, h + "ln_2") @ sd[h + "mlp.c_fc.weight"] + sd[h + "mlp.c_fc.bias"], approximate="tanh")
        x = x + hidden @ sd[h + "mlp.c_proj.weight"] + sd[h + "mlp.c_proj.bias"]
    return norm(x, "ln_f") @ sd["wte.weight"].T
