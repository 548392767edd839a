"""The grader's chapter module of chapter 04 (a GPT model): its public and hidden
cases and its known mistakes.

Models are small (emb_dim 4 to 8, 2 heads, 1 to 3 layers, a vocabulary of tens of tokens) so
that every value can be compared; the 124M configuration is counted on the meta device.
Dropout cases choose weights that make everything around the dropout layers deterministic,
without changing what a correct module computes, and list every output that a pattern of
dropped features can give (the public module's judges read them):

- TransformerBlock: the attention's value weights are zero, so the attention sub-block outputs
  out_proj.bias whatever attention dropout does. Row by row, each of the 2 ** emb_dim patterns
  of the first shortcut dropout gives the state after the first shortcut and the feed-forward
  update; every output feature must be that state with or without the (scaled) update.
- GPTModel: one block whose attention adds a constant row and whose feed-forward adds nothing
  (last layer zero). Each feature before final_norm is then m0 * e / (1 - p) + m1 * c / (1 - p):
  4 ** emb_dim candidate rows, passed through final_norm and out_head here.

A row of the student's output that no candidate explains is wrong (with a message for the common
cases: dropout on the sum, no dropout at all, embeddings not dropped); some feature must have been
dropped at each site over the three passes (every case has p = 0.5 and at least 72 features per
site over the passes, so a correct module fails that with probability at most 2^-72). Any way of
drawing the random numbers passes.
"""
import functools
import itertools

import numpy as np
import torch
import torch.nn as nn

from gptcourse.checking.chapters.ch04_gpt_model import config_arguments, layer_norm_arguments
from gptcourse.checking.records import Case
from grader.chapters import GraderSpec
from grader.chapters.casekit import add_x_future, module_arrays, module_weights, reference_module, subclass_with
from grader.reference import reference_object
from grader.reference.ch04_gpt_model import GPT_CONFIG_124M  # the notebook's setup cell, one source


def config(vocab_size=20, context_length=6, emb_dim=8, n_heads=2, n_layers=2, drop_rate=0.0, qkv_bias=False):
    return {"vocab_size": vocab_size, "context_length": context_length, "emb_dim": emb_dim,
            "n_heads": n_heads, "n_layers": n_layers, "drop_rate": drop_rate, "qkv_bias": qkv_bias}


def _config_label(cfg, keys):
    return ", ".join(f"{k}={cfg[k]}" for k in keys)


# ------------------------------------------------------------------------------------------
# 4.1 LayerNorm and 4.2 GELU
# ------------------------------------------------------------------------------------------

def _layer_norm_case(rng, shape, dtype="float32", spread=1.0, offset=0.0, special_rows=False):
    """Rows of several spreads around an offset; with special_rows, a constant row (variance 0)
    and a row of tiny variance, where eps decides the output."""
    emb_dim = shape[-1]
    args = {"emb_dim": emb_dim}
    module = reference_module("4.1", layer_norm_arguments, args)
    arrays = module_arrays(module, rng, shape, shape)
    x = arrays["x"] * spread + offset
    flat = x.reshape(-1, emb_dim)
    if special_rows:
        flat[0] = offset  # variance 0: only eps keeps the division finite
        # Variance ~1e-4, where eps changes the result by 5 %; around 0, so that float32 loses no
        # digits to cancellation (x - mean) in any correct way of computing it.
        flat[-1] = rng.normal(scale=1e-2, size=emb_dim)
    arrays["x"] = flat.reshape(shape)
    extra = " with a constant row and a row of tiny variance" if special_rows else ""
    label = f"input of shape {tuple(shape)}{extra}, emb_dim={emb_dim}, {dtype}"
    return Case("4.1", "forward", label, args, arrays, dtype)


def _gelu_case(rng, shape, dtype="float32", scale=3.0, grid=False):
    arrays = {"x": rng.normal(scale=scale, size=shape), "grad_seed": rng.normal(size=shape)}
    if grid:
        arrays["x"].reshape(-1)[: min(arrays["x"].size, 41)] = np.linspace(-6, 6, 41)[: arrays["x"].size]
    label = f"input of shape {tuple(shape)}, values from about {-2 * scale:g} to {2 * scale:g}, {dtype}"
    return Case("4.2", "forward", label, {}, arrays, dtype)


def _large_gelu_case(rng, shape, limit, dtype="float32"):
    """Inputs spread evenly from -limit to limit: GELU must stay finite (about x far right, about 0
    far left), while exp of the tanh's argument overflows (past about 13 in float32, 25 in float64)
    when tanh is written by hand with exp."""
    x = np.linspace(-limit, limit, int(np.prod(shape)))
    rng.shuffle(x)
    arrays = {"x": x.reshape(shape), "grad_seed": rng.normal(size=shape)}
    label = f"large inputs of shape {tuple(shape)}, values from {-limit:g} to {limit:g}, {dtype}"
    return Case("4.2", "forward", label, {}, arrays, dtype)


# ------------------------------------------------------------------------------------------
# 4.3 FeedForward, 4.4 TransformerBlock, 4.5 GPTModel: forward cases
# ------------------------------------------------------------------------------------------

def _module_case(task_id, rng, cfg, batch, tokens, dtype="float32", label_keys=("emb_dim",)):
    args = {"cfg": cfg}
    module = reference_module(task_id, config_arguments, args)
    shape = (batch, tokens, cfg["emb_dim"])
    arrays = module_arrays(module, rng, shape, shape)
    if task_id == "4.4":
        add_x_future(arrays, args, rng)
    label = f"a batch of {batch} x {tokens} tokens x {cfg['emb_dim']} features, " \
            f"{_config_label(cfg, label_keys)}, {dtype}"
    return Case(task_id, "forward", label, args, arrays, dtype)


def _model_case(rng, cfg, batch, tokens, dtype="float32"):
    args = {"cfg": cfg}
    module = reference_module("4.5", config_arguments, args)
    arrays = module_arrays(module, rng, (batch, tokens), (batch, tokens, cfg["vocab_size"]))
    arrays["x"] = rng.integers(0, cfg["vocab_size"], size=(batch, tokens))
    add_x_future(arrays, args, rng, draw=lambda size: rng.integers(0, cfg["vocab_size"], size=size))
    keys = ("vocab_size", "context_length", "emb_dim", "n_heads", "n_layers", "drop_rate", "qkv_bias")
    label = f"a batch of {batch} x {tokens} token ids, {_config_label(cfg, keys)}, {dtype}"
    return Case("4.5", "forward", label, args, arrays, dtype)


def _size_case(cfg, name):
    return Case("4.5", "size", f"the parameter count of {name}, built on the meta device", {"cfg": cfg})


# ------------------------------------------------------------------------------------------
# Dropout cases and what their judges need
# ------------------------------------------------------------------------------------------

def _block_dropout_case(rng, emb_dim=6, batch=2, tokens=4, qkv_bias=False):
    """The attention's values are zero, so the attention sub-block adds out_proj's bias (a
    constant row) whatever attention dropout does; only the shortcut dropout is left to judge."""
    cfg = config(context_length=tokens + 1, emb_dim=emb_dim, drop_rate=0.5, qkv_bias=qkv_bias)
    args = {"cfg": cfg}
    module = reference_module("4.4", config_arguments, args)
    overrides = {"state/att.W_value.weight": np.zeros((emb_dim, emb_dim)),
                 "state/att.out_proj.bias": rng.normal(size=emb_dim)}
    if qkv_bias:
        overrides["state/att.W_value.bias"] = np.zeros(emb_dim)
    shape = (batch, tokens, emb_dim)
    arrays = module_arrays(module, rng, shape, shape, overrides)
    label = f"train mode with drop_rate=0.5: a batch of {batch} x {tokens} tokens x {emb_dim} features"
    return Case("4.4", "dropout", label, args, arrays)


def _model_dropout_case(rng, emb_dim=4, batch=2, tokens=3, vocab_size=7):
    """One block whose attention adds a constant row (values zero) and whose feed-forward adds
    nothing (last layer zero): the logits then depend only on which features drop_emb and the
    block's shortcut dropout keep."""
    cfg = config(vocab_size=vocab_size, context_length=tokens + 1, emb_dim=emb_dim, n_layers=1, drop_rate=0.5)
    args = {"cfg": cfg}
    module = reference_module("4.5", config_arguments, args)
    hidden = 4 * emb_dim
    overrides = {"state/trf_blocks.0.att.W_value.weight": np.zeros((emb_dim, emb_dim)),
                 "state/trf_blocks.0.att.out_proj.bias": rng.normal(size=emb_dim),
                 "state/trf_blocks.0.ff.layers.2.weight": np.zeros((emb_dim, hidden)),
                 "state/trf_blocks.0.ff.layers.2.bias": np.zeros(emb_dim)}
    arrays = module_arrays(module, rng, (batch, tokens), (batch, tokens, vocab_size), overrides)
    arrays["x"] = rng.integers(0, vocab_size, size=(batch, tokens))
    label = (f"train mode with drop_rate=0.5: a batch of {batch} x {tokens} token ids, vocab_size={vocab_size}, "
             f"emb_dim={emb_dim}, one transformer block")
    return Case("4.5", "dropout", label, args, arrays)


@functools.lru_cache(maxsize=None)
def _patterns(n, options=2):
    return np.array(list(itertools.product(range(options - 1, -1, -1), repeat=n)), dtype=np.int64)


def _reference_with_weights(case):
    """The case's reference module in float64 and eval mode, with the case's weights."""
    module = reference_module(case.task, config_arguments, case.args).double().eval()
    with torch.no_grad():
        for name, param in module.named_parameters():
            param.copy_(torch.tensor(case.arrays["state/" + name]))
    return module


def _block_internals(case):
    p = case.args["cfg"]["drop_rate"]
    a = case.arrays
    x = torch.tensor(a["x"]).reshape(-1, a["x"].shape[-1])  # (rows, emb_dim)
    constant = torch.tensor(a["state/att.out_proj.bias"]) / (1 - p)
    patterns = _patterns(x.shape[-1])
    block = _reference_with_weights(case)
    with torch.no_grad():
        after = x[:, None, :] + torch.tensor(patterns, dtype=torch.float64) * constant  # (rows, K, emb)
        update = block.ff(block.norm2(after)) / (1 - p)
    return {"internals/after_attention": after.numpy(), "internals/ff_update": update.numpy(),
            "internals/patterns": patterns}


def _model_internals(case):
    """Every feature of the block's output is m0 * e / (1 - p) + m1 * c / (1 - p) for the
    embedding e, the attention's constant row c, and 0/1 choices m0 (drop_emb) and m1 (the
    block's shortcut dropout): 4 ** emb_dim candidate rows, then final_norm and out_head."""
    p = case.args["cfg"]["drop_rate"]
    a = case.arrays
    model = _reference_with_weights(case)
    with torch.no_grad():
        ids = torch.tensor(a["x"])
        emb = model.tok_emb(ids) + model.pos_emb(torch.arange(ids.shape[1]))
        emb = emb.reshape(-1, emb.shape[-1]) / (1 - p)  # (rows, emb_dim)
        constant = torch.tensor(a["state/trf_blocks.0.att.out_proj.bias"]) / (1 - p)
        choices = torch.tensor(_patterns(emb.shape[-1], options=4), dtype=torch.float64)  # 3,2,1,0 per feature
        keep_emb, keep_att = torch.div(choices, 2, rounding_mode="floor"), torch.remainder(choices, 2)
        rows = emb[:, None, :] * keep_emb + constant * keep_att  # (rows, 4**emb_dim, emb_dim)
        logits = model.out_head(model.final_norm(rows))
        # The same without any dropout on the embeddings (to name that mistake).
        unscaled = emb[:, None, :] * (1 - p) + constant * torch.tensor(_patterns(emb.shape[-1]), dtype=torch.float64)
        without_emb_dropout = model.out_head(model.final_norm(unscaled))
    return {"internals/logits": logits.numpy(),
            "internals/emb_dropped": (keep_emb == 0).sum(dim=-1).numpy().astype(np.int64),
            "internals/logits_without_emb_dropout": without_emb_dropout.numpy()}


def _extras_4_4(case):
    return _block_internals(case) if case.kind == "dropout" else {}


def _extras_4_5(case):
    return _model_internals(case) if case.kind == "dropout" else {}


# ------------------------------------------------------------------------------------------
# 4.6 generate_text_simple
# ------------------------------------------------------------------------------------------

def _next_token_case(rng, batch, tokens, max_new_tokens, context_size, vocab_size=13, context_length=64):
    """The toy model: it predicts the sum of the tokens it sees, so cropping, the position
    read and the appending all show in the ids."""
    args = {"model": "next_token", "vocab_size": vocab_size, "context_length": context_length,
            "max_new_tokens": max_new_tokens, "context_size": context_size}
    arrays = {"idx": rng.integers(1, vocab_size, size=(batch, tokens))}
    label = (f"a model that predicts the sum of the ids it sees (mod {vocab_size}); a batch of {batch} x "
             f"{tokens} ids, max_new_tokens={max_new_tokens}, context_size={context_size}")
    return Case("4.6", "generate", label, args, arrays)


def _gpt_generate_case(rng, batch, tokens, max_new_tokens, context_size, dtype="float32", **cfg_options):
    cfg = config(**cfg_options)
    args = {"model": "gpt", "cfg": cfg, "max_new_tokens": max_new_tokens, "context_size": context_size}
    model = reference_module("4.5", config_arguments, args)
    arrays = module_weights(model, rng, prefix="model.")
    arrays["idx"] = rng.integers(0, cfg["vocab_size"], size=(batch, tokens))
    label = (f"a small GPTModel (vocab_size={cfg['vocab_size']}, context_length={cfg['context_length']}); "
             f"a batch of {batch} x {tokens} ids, max_new_tokens={max_new_tokens}, context_size={context_size}, {dtype}")
    return Case("4.6", "generate", label, args, arrays, dtype)


# ------------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------------


# ------------------------------------------------------------------------------------------
# Known mistakes (messages complete "... is wrong — it looks like ...")
# ------------------------------------------------------------------------------------------

def _layer_norm_forward(unbiased=False, eps="inside", dim=-1, std=False, swap=False, subtract_shift=False,
                        center=True, affine=True):
    def forward(self, x):
        mean = x.mean(dim=dim, keepdim=True)
        var = x.var(dim=dim, keepdim=True, unbiased=unbiased)
        spread = torch.sqrt(var) if std else var
        if not center:
            mean = 0.0
        if eps == "inside":
            norm = (x - mean) / torch.sqrt(spread + self.eps)
        elif eps == "outside":
            norm = (x - mean) / (torch.sqrt(spread) + self.eps)
        elif eps == "none":
            norm = (x - mean) / torch.sqrt(spread)
        else:
            norm = (x - mean) / torch.sqrt(spread + eps)
        if not affine:
            return norm
        if swap:
            return self.shift * norm + self.scale
        return self.scale * norm - self.shift if subtract_shift else self.scale * norm + self.shift
    return forward


EPS_TOO_SMALL = ("eps is missing or smaller than the task's 1e-5: divide by torch.sqrt(var + self.eps) with "
                 "self.eps = 1e-5 (without it a row of equal values divides by 0)")


def _mistakes_4_1():
    ln = lambda **o: subclass_with("4.1", forward=_layer_norm_forward(**o))  # noqa: E731
    return [
        ("the variance is the unbiased one (divided by n - 1, torch.var's default): LayerNorm uses the "
         "biased variance, x.var(dim=-1, keepdim=True, unbiased=False)", ln(unbiased=True)),
        # On rows of ordinary spread these three agree to within the tolerance: one message.
        (EPS_TOO_SMALL, ln(eps="none")),
        (EPS_TOO_SMALL, ln(eps=1e-6)),
        (EPS_TOO_SMALL, ln(eps=1e-12)),
        ("eps is added after the square root: it belongs inside, torch.sqrt(var + self.eps)", ln(eps="outside")),
        ("the standard deviation is used where the variance belongs: torch.sqrt(var + eps) with the "
         "variance, not sqrt(std + eps)", ln(std=True)),
        ("the mean and variance are taken over dimension 0 instead of the last (features) dimension: "
         "dim=-1, keepdim=True", ln(dim=0)),
        ("the mean and variance are taken over dimension 1 instead of the last (features) dimension: "
         "dim=-1, keepdim=True", ln(dim=1)),
        ("the mean is not subtracted: normalize x - mean, (x - mean) / torch.sqrt(var + self.eps)",
         ln(center=False)),
        ("scale and shift are never applied: return self.scale * norm_x + self.shift", ln(affine=False)),
        ("scale and shift are swapped: scale * norm_x + shift", ln(swap=True)),
        ("shift is subtracted: scale * norm_x + shift", ln(subtract_shift=True)),
    ]


def _gelu(formula):
    return subclass_with("4.2", forward=lambda self, x: formula(x))


def _mistakes_4_2():
    c = (2.0 / np.pi) ** 0.5
    return [
        ("nn.GELU() / F.gelu without approximate=\"tanh\": that is the exact (erf) GELU; the task asks for "
         "the tanh approximation", _gelu(lambda x: torch.nn.functional.gelu(x))),
        ("the cubic term is x**2 instead of x**3: 0.044715 * x**3", _gelu(lambda x: 0.5 * x * (1 + torch.tanh(c * (x + 0.044715 * x**2))))),
        ("the cubic term is missing: tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))", _gelu(lambda x: 0.5 * x * (1 + torch.tanh(c * x)))),
        ("the factor 0.5 is missing", _gelu(lambda x: x * (1 + torch.tanh(c * (x + 0.044715 * x**3))))),
        ("the result is not multiplied by x: GELU is 0.5 * x * (1 + tanh(...)), the input times a gate",
         _gelu(lambda x: 0.5 * (1 + torch.tanh(c * (x + 0.044715 * x**3))))),
        ("the square root is missing: the constant is sqrt(2 / pi), math.sqrt(2 / math.pi)",
         _gelu(lambda x: 0.5 * x * (1 + torch.tanh(2 / np.pi * (x + 0.044715 * x**3))))),
        ("the cubic coefficient is 0.44715: it is 0.044715", _gelu(lambda x: 0.5 * x * (1 + torch.tanh(c * (x + 0.44715 * x**3))))),
        ("sqrt(pi / 2) is used instead of sqrt(2 / pi)",
         _gelu(lambda x: 0.5 * x * (1 + torch.tanh((np.pi / 2) ** 0.5 * (x + 0.044715 * x**3))))),
        # The normal density's constant, 1 / sqrt(2 * pi), is the one students know by heart.
        ("the constant is sqrt(2 * pi) (the normal density's) instead of sqrt(2 / pi): "
         "math.sqrt(2 / math.pi)", _gelu(lambda x: 0.5 * x * (1 + torch.tanh((2 * np.pi) ** 0.5 * (x + 0.044715 * x**3))))),
        ("the sigmoid approximation x * sigmoid(1.702 x) is used: the task asks for the tanh formula",
         _gelu(lambda x: x * torch.sigmoid(1.702 * x))),
        ("ReLU is used instead of GELU", _gelu(torch.relu)),
        (TANH_BY_HAND, _gelu(lambda x: 0.5 * x * (1 + _tanh_by_hand(c * (x + 0.044715 * x**3))))),
    ]


TANH_BY_HAND = ("tanh is written by hand as (exp(u) - exp(-u)) / (exp(u) + exp(-u)): for large inputs exp overflows "
                "to inf and inf / inf is NaN; use torch.tanh, which stays finite for any input")


def _tanh_by_hand(u):
    return (torch.exp(u) - torch.exp(-u)) / (torch.exp(u) + torch.exp(-u))


def _feed_forward_with(activation):
    def __init__(self, cfg):
        reference_object("4.3").__init__(self, cfg)
        self.layers[1] = activation()
    return subclass_with("4.3", __init__=__init__)


def _mistakes_4_3():
    return [
        ("the activation is nn.GELU() without approximate=\"tanh\" (the exact erf form): use GELU() from "
         "Task 4.2, the tanh approximation", _feed_forward_with(nn.GELU)),
        ("forward adds its input to the result (a shortcut, x + self.layers(x)): the shortcut belongs to "
         "the transformer block, FeedForward returns self.layers(x)",
         subclass_with("4.3", forward=lambda self, x: x + self.layers(x))),
    ]


def _block_forward(post_norm=False, skip_att=False, skip_ff=False, parallel=False, norm_then_add=False,
                   shared_norm=False, stale_shortcut=False):
    def forward(self, x):
        drop, norm2 = self.drop_shortcut, (self.norm1 if shared_norm else self.norm2)
        if post_norm:
            x = self.norm1(x + drop(self.att(x)))
            return self.norm2(x + drop(self.ff(x)))
        if parallel:
            return x + drop(self.att(self.norm1(x))) + drop(self.ff(norm2(x)))
        if norm_then_add:
            x = self.norm1(x)
            x = x + drop(self.att(x))
            x = norm2(x)
            return x + drop(self.ff(x))
        h = drop(self.att(self.norm1(x))) + (0 if skip_att else x)
        return drop(self.ff(norm2(h))) + (0 if skip_ff else x if stale_shortcut else h)
    return forward


def _mistakes_4_4():
    block = lambda **o: subclass_with("4.4", forward=_block_forward(**o))  # noqa: E731
    return [
        ("LayerNorm comes after each sub-block and its add (post-norm): GPT-2 normalizes first "
         "(pre-norm), x + drop(att(norm1(x)))", block(post_norm=True)),
        ("the attention sub-block has no shortcut: add its input back, x = x + shortcut", block(skip_att=True)),
        ("the feed-forward sub-block has no shortcut: add its input back, x = x + shortcut", block(skip_ff=True)),
        ("the feed-forward sub-block works on the block's input instead of the attention sub-block's "
         "result: the two sub-blocks run one after the other", block(parallel=True)),
        ("the shortcut is taken after the LayerNorm: save shortcut = x before self.norm1(x), so that the "
         "un-normalized input is added back", block(norm_then_add=True)),
        ("norm1 is used in both sub-blocks: the feed-forward sub-block has its own LayerNorm, norm2",
         block(shared_norm=True)),
        ("the feed-forward sub-block adds the block's input as its shortcut: its shortcut is its own input, "
         "the attention sub-block's result (set shortcut = x again before norm2)", block(stale_shortcut=True)),
    ]


def _model_forward(final_norm=True, positions="arange", softmax=False, tied=False):
    def forward(self, in_idx):
        _, num_tokens = in_idx.shape
        x = self.tok_emb(in_idx)
        if positions == "arange":
            x = x + self.pos_emb(torch.arange(num_tokens, device=in_idx.device))
        elif positions == "ids":
            x = x + self.pos_emb(in_idx)
        x = self.trf_blocks(self.drop_emb(x))
        x = self.final_norm(x) if final_norm else x
        logits = x @ self.tok_emb.weight.T if tied else self.out_head(x)
        return torch.softmax(logits, dim=-1) if softmax else logits
    return forward


def _mistakes_4_5():
    model = lambda **o: subclass_with("4.5", forward=_model_forward(**o))  # noqa: E731
    return [
        ("final_norm is never applied: normalize the blocks' output before out_head", model(final_norm=False)),
        ("the position embeddings are missing: add self.pos_emb(torch.arange(num_tokens))", model(positions="none")),
        ("the position table is looked up with the token ids: look it up with the positions "
         "torch.arange(num_tokens)", model(positions="ids")),
        ("the logits are computed with the token embedding's weight (x @ tok_emb.weight.T) instead of "
         "out_head: the task's model has a separate out_head, self.out_head(x)", model(tied=True)),
        ("a softmax is applied to the logits: forward returns the raw logits (the loss and the sampling "
         "apply the softmax themselves)", model(softmax=True)),
    ]


def _generate(crop="last", position=-1, no_grad=True):
    def generate_text_simple(model, idx, max_new_tokens, context_size):
        for _ in range(max_new_tokens):
            idx_cond = {"last": idx[:, -context_size:], "first": idx[:, :context_size], "none": idx}[crop]
            with torch.set_grad_enabled(not no_grad):
                logits = model(idx_cond)
            idx_next = torch.argmax(logits[:, position, :], dim=-1, keepdim=True)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx
    return generate_text_simple


def _mistakes_4_6():
    return [
        ("the context is not cropped: the model sees only the last context_size tokens, "
         "idx[:, -context_size:]", _generate(crop="none")),
        ("the context is cropped to the first context_size tokens: keep the last ones, idx[:, -context_size:]",
         _generate(crop="first")),
        ("the next token is read from the first position's logits: only the last position, "
         "logits[:, -1, :], has seen the whole context", _generate(position=0)),
    ]


# ------------------------------------------------------------------------------------------
# Each task's cases (public and hidden) and known mistakes, in one place (grader/chapters/__init__.py: GraderSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "4.1": GraderSpec(
        public=lambda rng: [
            _layer_norm_case(rng, (2, 3, 5)),
            _layer_norm_case(rng, (2, 4, 6), spread=2.0, offset=3.0, special_rows=True),
        ],
        hidden=lambda rng: [
            _layer_norm_case(rng, (3, 2, 7), spread=0.5, offset=-2.0, special_rows=True),
            _layer_norm_case(rng, (4, 5), dtype="float64", spread=3.0),
            _layer_norm_case(rng, (1, 1, 3), special_rows=False),
            _layer_norm_case(rng, (2, 2, 2, 8), dtype="float64", spread=0.1, offset=1.0, special_rows=True),
        ],
        mistakes=_mistakes_4_1),
    "4.2": GraderSpec(
        public=lambda rng: [_gelu_case(rng, (2, 3, 8)), _gelu_case(rng, (41,), grid=True, scale=1.5),
                            _large_gelu_case(rng, (3, 9), 60.0)],
        hidden=lambda rng: [
            _gelu_case(rng, (3, 4, 5), dtype="float64", scale=2.5),
            _gelu_case(rng, (1, 1, 7), scale=0.5),
            _gelu_case(rng, (2, 41), dtype="float64", grid=True, scale=4.0),
            _large_gelu_case(rng, (2, 5, 4), 40.0),
            _large_gelu_case(rng, (4, 10), 200.0, dtype="float64"),
        ],
        mistakes=_mistakes_4_2),
    "4.3": GraderSpec(
        public=lambda rng: [
            _module_case("4.3", rng, config(emb_dim=4), 2, 3),
            _module_case("4.3", rng, config(emb_dim=6), 1, 5),
        ],
        hidden=lambda rng: [
            _module_case("4.3", rng, config(emb_dim=8), 3, 2, dtype="float64"),
            _module_case("4.3", rng, config(emb_dim=2), 2, 6),
            _module_case("4.3", rng, config(emb_dim=5), 1, 1),
        ],
        mistakes=_mistakes_4_3),
    "4.4": GraderSpec(
        public=lambda rng: [
            _module_case("4.4", rng, config(emb_dim=6, n_heads=3, context_length=5), 2, 4,
                         label_keys=("emb_dim", "n_heads", "context_length")),
            _module_case("4.4", rng, config(emb_dim=4, n_heads=1, context_length=7, qkv_bias=True), 1, 5,
                         label_keys=("emb_dim", "n_heads", "context_length", "qkv_bias")),
            _block_dropout_case(rng),
        ],
        hidden=lambda rng: [
            _module_case("4.4", rng, config(emb_dim=8, n_heads=4, context_length=9), 3, 5, dtype="float64",
                         label_keys=("emb_dim", "n_heads", "context_length")),
            _module_case("4.4", rng, config(emb_dim=6, n_heads=3, context_length=4, qkv_bias=True), 2, 4,
                         label_keys=("emb_dim", "n_heads", "context_length", "qkv_bias")),
            _module_case("4.4", rng, config(emb_dim=4, n_heads=1, context_length=6, drop_rate=0.3), 1, 2,
                         label_keys=("emb_dim", "n_heads", "context_length", "drop_rate")),
            _block_dropout_case(rng, emb_dim=6, batch=1, tokens=5, qkv_bias=True),
        ],
        mistakes=_mistakes_4_4,
        extras=_extras_4_4),
    "4.5": GraderSpec(
        public=lambda rng: [
            _model_case(rng, config(vocab_size=11, context_length=6, emb_dim=4, n_layers=2), 2, 5),
            _model_case(rng, config(vocab_size=9, context_length=5, emb_dim=6, n_heads=3, n_layers=1, qkv_bias=True), 1, 5),
            _model_dropout_case(rng),
            _size_case(GPT_CONFIG_124M, "GPT_CONFIG_124M"),
        ],
        hidden=lambda rng: [
            _model_case(rng, config(vocab_size=int(rng.integers(15, 40)), context_length=8, emb_dim=8, n_heads=4,
                                    n_layers=3), 3, 6),
            _model_case(rng, config(vocab_size=10, context_length=4, emb_dim=4, n_layers=2, drop_rate=0.2), 2, 4,
                        dtype="float64"),
            _model_case(rng, config(vocab_size=12, context_length=7, emb_dim=6, n_heads=2, n_layers=1, qkv_bias=True), 1, 1),
            _model_dropout_case(rng, batch=2, tokens=3, vocab_size=9),
            _size_case(config(vocab_size=1000, context_length=64, emb_dim=48, n_heads=4, n_layers=3, qkv_bias=True),
                       "a configuration with qkv_bias=True (vocab_size=1000, context_length=64, emb_dim=48, "
                       "n_heads=4, n_layers=3)"),
        ],
        mistakes=_mistakes_4_5,
        extras=_extras_4_5),
    "4.6": GraderSpec(
        public=lambda rng: [
            # The toy model only: in a notebook, a GPTModel here would be the student's own.
            _next_token_case(rng, batch=2, tokens=4, max_new_tokens=3, context_size=3),
            _next_token_case(rng, batch=1, tokens=3, max_new_tokens=4, context_size=8),
        ],
        hidden=lambda rng: [
            _gpt_generate_case(rng, batch=1, tokens=3, max_new_tokens=4, context_size=5, vocab_size=15, context_length=5),
            _next_token_case(rng, batch=3, tokens=6, max_new_tokens=5, context_size=2),
            _next_token_case(rng, batch=1, tokens=2, max_new_tokens=4, context_size=10),
            _next_token_case(rng, batch=2, tokens=5, max_new_tokens=0, context_size=3),
            _gpt_generate_case(rng, batch=2, tokens=4, max_new_tokens=6, context_size=6, vocab_size=25,
                               context_length=6, emb_dim=8, n_heads=4, dtype="float64"),
            _gpt_generate_case(rng, batch=3, tokens=1, max_new_tokens=3, context_size=3, vocab_size=9,
                               context_length=4, n_layers=1),
        ],
        mistakes=_mistakes_4_6),
}
