"""The toy models the probes run: small stand-ins for a student's GPT whose behaviour is known.

A probe that tests a function which drives a model (generation, a loss, a training loop,
loading weights, editing layers) needs a model to hand it. The student's own GPTModel would
make a mistake in chapter 04 fail every later chapter, and would cost too much for the
self-check; so the public cases use one of these toys, which have a GPT's interface (token
ids of shape (batch, num_tokens) in, logits out) at a tiny cost, and the hidden cases add a
small GPTModel. The toys live here, apart from the chapters, because the public chapter
modules and the grader's chapter modules (grader/chapters/) both build them: the grader's side
makes a toy's weights, the public side runs it.

Each model keeps the name it had when it lived in its chapter: the names show in the
messages students read ("calling generate(NextTokenModel(), ...)"). Random initialisation
is that of the layers, in the order written here: seeded toys give the values the messages
and the fixtures quote, so do not reorder a model's layers.
"""
import torch
import torch.nn as nn

from gptcourse.checking.probes import DeviceMixError


# ------------------------------------------------------------------------------------------
# Language models that generation drives (4.6 generate_text_simple, 6.4 generate)
# ------------------------------------------------------------------------------------------

class ToyLanguageModel(nn.Module):
    """What the course's toy language models share: like a GPT they take token ids of shape
    (batch, num_tokens) and refuse more tokens than their context length, and they note
    whether each call ran with gradients enabled (generation should not)."""

    def __init__(self, context_length):
        super().__init__()
        self.context_length = context_length
        self.grad_enabled = []

    def note_call(self, idx):
        self.grad_enabled.append(torch.is_grad_enabled())
        if idx.dim() != 2:
            raise ValueError(f"the model takes token ids of shape (batch, num_tokens), got {tuple(idx.shape)}")
        if idx.shape[1] > self.context_length:
            raise IndexError(f"index out of range in self: the model takes at most {self.context_length} "
                             f"tokens, got {idx.shape[1]}")


class NextTokenModel(ToyLanguageModel):
    """A toy language model whose next token is known: at every position it predicts the sum
    of the token ids it has seen so far, modulo the vocabulary size. Its logits fall off with
    the (circular) distance from that token, 1.5 * (1 - 0.4 * distance), so that they are not
    the same shape at every position: reading them along the wrong dimension changes the pick.
    They are only gently peaked (with 13 tokens the pick has a probability of about 0.3), so
    code that samples where it should take the argmax picks another token at most steps,
    whatever the state of the random generator.

    Used by 4.6 (generate_text_simple) and by 6.4's greedy and end-token cases (generate):
    the ids it adds show whether the context is cropped and the new token appended."""

    def __init__(self, vocab_size, context_length):
        super().__init__(context_length)
        self.vocab_size = vocab_size
        self.scale = nn.Parameter(torch.tensor(1.5))  # a parameter, so the model has a device

    def forward(self, idx):
        self.note_call(idx)
        target = torch.cumsum(idx, dim=1) % self.vocab_size
        vocab = torch.arange(self.vocab_size, device=idx.device)
        offset = (vocab - target.unsqueeze(-1)) % self.vocab_size  # (batch, num_tokens, vocab)
        distance = torch.minimum(offset, self.vocab_size - offset)
        return self.scale * (1 - 0.4 * distance.to(self.scale.dtype))


class TableModel(ToyLanguageModel):
    """A toy language model whose next-token probabilities are known: the logits at every
    position are the row of `table` of the token at that position (a Markov chain).

    Used by 6.4's sampling cases (generate with temperature, top_k, top_p): the distribution
    of many draws is compared with the one the table gives."""

    def __init__(self, table, context_length):
        super().__init__(context_length)
        self.table = nn.Parameter(torch.as_tensor(table, dtype=torch.float64), requires_grad=False)

    def forward(self, idx):
        self.note_call(idx)
        return self.table[idx]  # (batch, num_tokens, vocab)


# ------------------------------------------------------------------------------------------
# Chapter 05: losses, training loops, checkpoints, loading GPT-2's weights
# ------------------------------------------------------------------------------------------

class TinyLanguageModel(nn.Module):
    """Token and position embeddings, a tanh, an output head: logits (batch, tokens, vocab).

    It has a GPT's interface (token ids in, logits out, `pos_emb` says the context length)
    at a fraction of the cost. On the meta device it refuses token ids that were left on the
    CPU with a message about moving the batch.

    Used by chapter 05's public cases (5.2 and 5.3, the losses; 5.4 and 5.7, the training
    loops; 5.5, the checkpoints); the hidden cases of chapter 05 make its weights.
    """

    def __init__(self, vocab_size, context_length, emb_dim):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, emb_dim)
        self.pos_emb = nn.Embedding(context_length, emb_dim)
        self.out_head = nn.Linear(emb_dim, vocab_size, bias=False)

    def forward(self, in_idx):
        weight = self.tok_emb.weight
        if in_idx.device != weight.device and weight.device.type == "meta":
            raise DeviceMixError(
                f"the batch of token ids reached the model on the {in_idx.device.type} while the model is on "
                f"the device under test: move both batches to `device` before using them, with .to(device)")
        positions = torch.arange(in_idx.shape[1], device=in_idx.device)
        return self.out_head(torch.tanh(self.tok_emb(in_idx) + self.pos_emb(positions)))


class GPT2Shaped(nn.Module):
    """The parameters of a GPTModel(cfg) with qkv_bias=True, under the same names, and nothing
    else (no forward): what load_weights_into_gpt fills in. The self-check loads checkpoints
    into it, so that it does not depend on the student's own GPTModel.

    Used by 5.6's public cases (load_weights_into_gpt); its two helpers below give the
    blocks and norms GPTModel's attribute names."""

    def __init__(self, cfg):
        super().__init__()
        emb, vocab = cfg["emb_dim"], cfg["vocab_size"]
        self.tok_emb = nn.Embedding(vocab, emb)
        self.pos_emb = nn.Embedding(cfg["context_length"], emb)
        self.trf_blocks = nn.Sequential(*[_ShapedBlock(emb) for _ in range(cfg["n_layers"])])
        self.final_norm = _ShapedNorm(emb)
        self.out_head = nn.Linear(emb, vocab, bias=False)


class _ShapedBlock(nn.Module):
    def __init__(self, emb):
        super().__init__()
        self.att = nn.Module()
        for name in ("W_query", "W_key", "W_value", "out_proj"):
            setattr(self.att, name, nn.Linear(emb, emb))
        self.ff = nn.Module()
        self.ff.layers = nn.Sequential(nn.Linear(emb, 4 * emb), nn.GELU(approximate="tanh"), nn.Linear(4 * emb, emb))
        self.norm1, self.norm2 = _ShapedNorm(emb), _ShapedNorm(emb)


class _ShapedNorm(nn.Module):
    def __init__(self, emb):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(emb))
        self.shift = nn.Parameter(torch.zeros(emb))


# ------------------------------------------------------------------------------------------
# Chapter 07: a classification head (7.3), the classifier's loss, accuracy and predictions
# (7.4, 7.5)
# ------------------------------------------------------------------------------------------

def _refuse_cpu_batch(in_idx, weight):
    """On the device pass the model is on PyTorch's 'meta' device: token ids left on the CPU
    are named as such instead of failing somewhere inside the model."""
    if in_idx.device != weight.device and weight.device.type == "meta":
        raise DeviceMixError(
            f"the token ids reached the model on the {in_idx.device.type} while the model is on the device under "
            f"test: move the batch to `device` with .to(device), or create the tensor there "
            f"(torch.tensor(ids, device=device))")


class ToyClassifier(nn.Module):
    """A classifier GPT's interface at a tiny cost: token ids (batch, tokens) in, logits
    (batch, tokens, num_classes) out, and a context length (the rows of `pos_emb`).

    A token's vector is row `id % table_size` of `tok_emb`, so any vocabulary costs the same;
    position embeddings are added, and the output at a position is computed from the mean of
    the vectors up to it: like a GPT's, the last position's output has seen the whole message
    and the first one's only the first token.

    Used by 7.4 (the loss and accuracy of a classifier) and 7.5 (classify_text): public and
    hidden cases both; the hidden cases of chapter 07 make its weights.
    """

    def __init__(self, context_length, emb_dim, num_classes, table_size=64):
        super().__init__()
        self.table_size = table_size
        self.tok_emb = nn.Embedding(table_size, emb_dim)
        self.pos_emb = nn.Embedding(context_length, emb_dim)
        self.out_head = nn.Linear(emb_dim, num_classes)

    def forward(self, in_idx):
        _refuse_cpu_batch(in_idx, self.tok_emb.weight)
        num_tokens = in_idx.shape[1]
        positions = torch.arange(num_tokens, device=in_idx.device)
        x = self.tok_emb(in_idx % self.table_size) + self.pos_emb(positions)
        counts = torch.arange(1, num_tokens + 1, device=in_idx.device, dtype=x.dtype).unsqueeze(-1)
        running_mean = x.cumsum(dim=1) / counts  # position t sees tokens 0..t
        return self.out_head(torch.tanh(running_mean))


class ToyGPT(nn.Module):
    """A GPTModel's layout (tok_emb, pos_emb, trf_blocks, final_norm, out_head) with tiny
    blocks: what add_classification_head edits. The self-check uses it so that it does not
    depend on the student's own GPTModel.

    Used by 7.3's public cases (add_classification_head); the hidden cases of chapter 07
    make its weights."""

    def __init__(self, vocab_size, context_length, emb_dim, n_layers):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, emb_dim)
        self.pos_emb = nn.Embedding(context_length, emb_dim)
        self.trf_blocks = nn.Sequential(*[_ToyBlock(emb_dim) for _ in range(n_layers)])
        self.final_norm = nn.LayerNorm(emb_dim)
        self.out_head = nn.Linear(emb_dim, vocab_size, bias=False)

    def forward(self, in_idx):
        positions = torch.arange(in_idx.shape[1], device=in_idx.device)
        x = self.trf_blocks(self.tok_emb(in_idx) + self.pos_emb(positions))
        return self.out_head(self.final_norm(x))


class _ToyBlock(nn.Module):
    def __init__(self, emb_dim):
        super().__init__()
        self.norm = nn.LayerNorm(emb_dim)
        self.ff = nn.Linear(emb_dim, emb_dim)

    def forward(self, x):
        return x + torch.tanh(self.ff(self.norm(x)))


# ------------------------------------------------------------------------------------------
# Chapter 08: replacing linear layers with LoRA (8.3)
# ------------------------------------------------------------------------------------------

class Block(nn.Module):
    """A block with layers as attributes, one of them in a sub-block: NestedModel's blocks.
    (The name stays plain Block: it shows in the model's description.)"""

    def __init__(self, dim, hidden):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, hidden)
        self.act = nn.GELU()
        self.inner = nn.Module()
        self.inner.down = nn.Linear(hidden, dim, bias=False)

    def forward(self, x):
        return x + self.inner.down(self.act(self.up(self.norm(x))))


class NestedModel(nn.Module):
    """Linear layers at every depth: directly, in an nn.Sequential, in an nn.ModuleList of
    blocks, in a block's sub-block; and an embedding and norms that are not linear.

    Used by 8.3 (replace_linear_with_lora), public and hidden cases: a replacement that
    walks only one level of children, or misses a kind of container, leaves some of these
    linear layers unwrapped. The hidden cases of chapter 08 make its weights."""

    def __init__(self, vocab_size, dim, hidden, n_blocks):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, dim)
        self.proj = nn.Linear(dim, dim)
        self.blocks = nn.ModuleList([Block(dim, hidden) for _ in range(n_blocks)])
        self.head = nn.Sequential(nn.LayerNorm(dim), nn.Linear(dim, 3))

    def forward(self, ids):
        x = self.proj(self.tok_emb(ids))
        for block in self.blocks:
            x = block(x)
        return self.head(x)
