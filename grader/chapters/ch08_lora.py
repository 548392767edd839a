"""The grader's chapter module of chapter 08 (LoRA): its public and hidden
cases and its known mistakes.

- 8.1: B must be exactly zero (init/B, and B_is_zero on a large layer). A is random, so it is
  judged by its distribution, on initialisation cases large enough for the uniformity test to
  tell kaiming_uniform_ from a normal draw of the same spread (n = in_dim * rank >= 8,192
  values): its shape, every value within 1/sqrt(rank) (what kaiming_uniform_(A, a=sqrt(5))
  gives an (in_dim, rank) tensor), and the Kolmogorov-Smirnov distance from the uniform
  distribution on that range, which must stay below the Dvoretzky-Kiefer-Wolfowitz bound
  sqrt(ln(2 / 1e-6) / (2 n)): a correct layer fails a case with probability at most 1e-6 (two
  such cases per grading run, so 2e-6). At n = 8,192 the DKW distance at 1e-6 is 0.030, while a
  normal draw of the same spread lies about 0.057 from the uniform distribution. Any way of
  drawing the same distribution passes. Forward cases copy the case's A and B in (B non-zero,
  so the output and the gradients of x, A and B all depend on every value), float32 and
  float64, batched and not.
- 8.2: forward cases with every weight loaded (with and without the wrapped layer's bias), and
  the layer right after construction, where it must be the wrapped layer exactly, with the
  wrapped layer's own parameter objects still in use (a copy is caught).
- 8.3: nested models of 1 to 3 blocks (linear layers directly, in an nn.Sequential, in an
  nn.ModuleList of blocks and in a block's sub-block, beside an embedding and norms; hidden:
  another layout of the same kinds of nesting), and GPT-2 small with a 2-class head at rank 16
  on the meta device: 2,666,528 trainable. For every place that held an nn.Linear, what holds
  it now (wrapped once around the very layer, wrapped twice, a copy, untouched), read by walking
  the children one name at a time (a child named "blocks.0.up", which
  setattr(model, "blocks.0.up", ...) adds, fools dict(model.named_modules())); the other
  modules still in place; the trainable count with the base frozen; the output unchanged, then
  compared once more after every new parameter got values fixed by its name.
"""
import numpy as np
import torch

from gptcourse.checking.chapters.toys import NestedModel
from gptcourse.checking.records import Case
from grader.chapters import GraderSpec
from grader.chapters.casekit import module_weights, subclass_with
from grader.reference import reference_object

GPT2_SMALL = {"vocab_size": 50257, "context_length": 1024, "emb_dim": 768, "n_heads": 12, "n_layers": 12,
              "drop_rate": 0.0, "qkv_bias": True}


# ------------------------------------------------------------------------------------------
# 8.1 LoRALayer
# ------------------------------------------------------------------------------------------

def _lora_case(rng, in_dim, out_dim, rank, alpha, x_shape, dtype="float32"):
    args = {"in_dim": in_dim, "out_dim": out_dim, "rank": rank, "alpha": alpha}
    x_shape = tuple(x_shape) + (in_dim,)
    arrays = {"x": rng.normal(size=x_shape), "state/A": rng.uniform(-1, 1, size=(in_dim, rank)) / np.sqrt(rank),
              "state/B": rng.normal(scale=0.5, size=(rank, out_dim)),
              "grad_seed": rng.normal(size=tuple(x_shape[:-1]) + (out_dim,))}
    label = f"input of shape {x_shape}, in_dim={in_dim}, out_dim={out_dim}, rank={rank}, alpha={alpha}, {dtype}"
    return Case("8.1", "forward", label, args, arrays, dtype)


def _init_case(in_dim, out_dim, rank, alpha=1.0):
    args = {"in_dim": in_dim, "out_dim": out_dim, "rank": rank, "alpha": alpha}
    label = (f"a new LoRALayer(in_dim={in_dim}, out_dim={out_dim}, rank={rank}, alpha={alpha}): B zero, A "
             f"Kaiming-uniform ({in_dim * rank:,} values)")
    return Case("8.1", "init", label, args)


# ------------------------------------------------------------------------------------------
# 8.2 LinearWithLoRA
# ------------------------------------------------------------------------------------------

def _wrapped_weights(rng, in_dim, out_dim, rank, bias):
    arrays = {"state/linear.weight": rng.normal(scale=0.5, size=(out_dim, in_dim)),
              "state/lora.A": rng.uniform(-1, 1, size=(in_dim, rank)) / np.sqrt(rank),
              "state/lora.B": rng.normal(scale=0.5, size=(rank, out_dim))}
    if bias:
        arrays["state/linear.bias"] = rng.normal(scale=0.1, size=(out_dim,))
    return arrays


def _wrapped_case(rng, in_dim, out_dim, rank, alpha, x_shape, bias=True, dtype="float32"):
    args = {"in_dim": in_dim, "out_dim": out_dim, "rank": rank, "alpha": alpha, "bias": bias}
    x_shape = tuple(x_shape) + (in_dim,)
    arrays = _wrapped_weights(rng, in_dim, out_dim, rank, bias)
    arrays.update({"x": rng.normal(size=x_shape), "grad_seed": rng.normal(size=tuple(x_shape[:-1]) + (out_dim,))})
    label = (f"nn.Linear({in_dim}, {out_dim}, bias={bias}) wrapped with rank={rank}, alpha={alpha}, weights "
             f"loaded, input of shape {x_shape}, {dtype}")
    return Case("8.2", "forward", label, args, arrays, dtype)


def _identity_case(rng, in_dim, out_dim, rank, alpha, bias=True, dtype="float32"):
    args = {"in_dim": in_dim, "out_dim": out_dim, "rank": rank, "alpha": alpha, "bias": bias}
    arrays = {key: value for key, value in _wrapped_weights(rng, in_dim, out_dim, rank, bias).items()
              if key.startswith("state/linear.")}
    arrays["x"] = rng.normal(size=(3, in_dim))
    label = f"right after LinearWithLoRA(nn.Linear({in_dim}, {out_dim}, bias={bias}), rank={rank}, alpha={alpha})"
    return Case("8.2", "identity", label, args, arrays, dtype)


# ------------------------------------------------------------------------------------------
# 8.3 replace_linear_with_lora
# ------------------------------------------------------------------------------------------

def _replace_case(rng, n_blocks, rank, alpha, dim=6, hidden=10, vocab_size=20):
    args = {"model": "nested", "vocab_size": vocab_size, "dim": dim, "hidden": hidden, "n_blocks": n_blocks,
            "rank": rank, "alpha": alpha}
    arrays = module_weights(NestedModel(vocab_size, dim, hidden, n_blocks), rng, prefix="model.")
    arrays["ids"] = rng.integers(0, vocab_size, size=(2, 4))
    label = (f"a model with nn.Linear layers directly, in an nn.Sequential, in an nn.ModuleList of {n_blocks} "
             f"block{'s' * (n_blocks > 1)} and in a block's sub-block, rank={rank}, alpha={alpha}")
    return Case("8.3", "replace", label, args, arrays)


def _gpt_replace_case(rng, n_layers, rank, alpha):
    cfg = dict(GPT2_SMALL, vocab_size=30, context_length=8, emb_dim=8, n_heads=2, n_layers=n_layers)
    args = {"model": "gpt", "cfg": cfg, "num_classes": 2, "rank": rank, "alpha": alpha}
    model = reference_object("4.5")(dict(cfg))
    model.out_head = torch.nn.Linear(cfg["emb_dim"], 2)
    arrays = module_weights(model, rng, prefix="model.")
    arrays["ids"] = rng.integers(0, 30, size=(2, 5))
    label = f"a GPTModel of {n_layers} blocks with a 2-class head, the base frozen, rank={rank}, alpha={alpha}"
    return Case("8.3", "replace", label, args, arrays)


def _count_case(rank, alpha=16, **cfg):
    args = {"model": "gpt", "cfg": dict(GPT2_SMALL, **cfg), "num_classes": 2, "rank": rank, "alpha": alpha}
    name = "GPT-2 small" if not cfg else f"a GPTModel ({', '.join(f'{k}={v}' for k, v in cfg.items())})"
    label = f"{name} with a 2-class head on the meta device, the base frozen, rank={rank}: trainable parameters"
    return Case("8.3", "count", label, args)


# ------------------------------------------------------------------------------------------
# Known mistakes
# ------------------------------------------------------------------------------------------

def _mistakes_8_1():
    import math

    def init_normal(self, in_dim, out_dim, rank, alpha):
        torch.nn.Module.__init__(self)
        self.A = torch.nn.Parameter(torch.randn(in_dim, rank) / math.sqrt(3 * rank))  # the same spread, not uniform
        self.B = torch.nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def init_transposed(self, in_dim, out_dim, rank, alpha):
        torch.nn.Module.__init__(self)
        a = torch.empty(rank, in_dim)
        torch.nn.init.kaiming_uniform_(a, a=math.sqrt(5))  # fan_in = in_dim: a bound of 1/sqrt(in_dim)
        self.A = torch.nn.Parameter(a.T.contiguous())
        self.B = torch.nn.Parameter(torch.zeros(rank, out_dim))
        self.alpha = alpha

    def init_b_random(self, in_dim, out_dim, rank, alpha):
        torch.nn.Module.__init__(self)
        self.A = torch.nn.Parameter(torch.empty(in_dim, rank))
        torch.nn.init.kaiming_uniform_(self.A, a=math.sqrt(5))
        self.B = torch.nn.Parameter(torch.randn(rank, out_dim) * 0.01)
        self.alpha = alpha

    def no_alpha(self, x):
        return x @ self.A @ self.B

    def alpha_over_rank(self, x):
        return (self.alpha / self.A.shape[1]) * (x @ self.A @ self.B)

    return [
        ("B starts with random values: torch.zeros(rank, out_dim)", subclass_with("8.1", __init__=init_b_random)),
        # The two initialisations below are named by the chapter's own judgement of A's statistics
        # (ch08_lora.diagnose_initial_A), not by these messages: A_within_bound and A_looks_uniform
        # are pass/fail booleans, and comparing them would name any non-uniform A "transposed".
        ("A was initialised as (rank, in_dim) and transposed, so its bound is 1/sqrt(in_dim): initialise the "
         "(in_dim, rank) tensor itself", subclass_with("8.1", __init__=init_transposed)),
        ("A is drawn from a normal distribution: kaiming_uniform_ draws uniformly",
         subclass_with("8.1", __init__=init_normal)),
        ("the update is not scaled by alpha: alpha * (x @ A @ B)", subclass_with("8.1", forward=no_alpha)),
        ("the update is scaled by alpha / rank (the LoRA paper's scaling): this task's update is "
         "alpha * (x @ A @ B)", subclass_with("8.1", forward=alpha_over_rank)),
    ]


def _mistakes_8_2():
    import copy

    lora_layer = reference_object("8.1")

    def copies_linear(self, linear, rank, alpha):
        torch.nn.Module.__init__(self)
        self.linear = copy.deepcopy(linear)
        self.lora = lora_layer(linear.in_features, linear.out_features, rank, alpha)

    def lora_only(self, x):
        return self.lora(x)

    def product(self, x):
        return self.linear(x) * self.lora(x)

    return [
        ("the wrapped layer is a copy: keep the layer given, self.linear = linear",
         subclass_with("8.2", __init__=copies_linear)),
        ("forward returns only the update: linear(x) + lora(x)", subclass_with("8.2", forward=lora_only)),
        ("forward multiplies the two outputs: it adds them, linear(x) + lora(x)",
         subclass_with("8.2", forward=product)),
    ]


def _mistakes_8_3():
    linear_with_lora = reference_object("8.2")

    def top_level_only(model, rank, alpha):
        for name, module in list(model.named_children()):
            if isinstance(module, torch.nn.Linear):
                setattr(model, name, linear_with_lora(module, rank, alpha))

    def dotted_setattr(model, rank, alpha):
        for name, module in list(model.named_modules()):
            if isinstance(module, torch.nn.Linear):
                setattr(model, name, linear_with_lora(module, rank, alpha))  # adds a child named "blocks.0.up"

    def freezes_all(model, rank, alpha):
        for name, module in model.named_children():
            if isinstance(module, torch.nn.Linear):
                setattr(model, name, linear_with_lora(module, rank, alpha))
            else:
                freezes_all(module, rank, alpha)
        model.requires_grad_(False)

    return [
        ("only the model's direct children are replaced: recurse into every child that is not an nn.Linear",
         top_level_only),
        ("setattr(model, 'blocks.0.up', ...) adds a new child with a dotted name and leaves the nested layer in "
         "place: setattr on the parent (model.get_submodule('blocks.0')), or recurse through named_children()",
         dotted_setattr),
        ("everything is frozen after the replacement, A and B too: don't freeze inside the function",
         freezes_all),
    ]


# ------------------------------------------------------------------------------------------
# Each task's cases (public and hidden) and known mistakes, in one place (grader/chapters/__init__.py: GraderSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "8.1": GraderSpec(
        public=lambda rng: [
            _lora_case(rng, 4, 3, 2, 3.0, (2, 5)),  # alpha neither 1 nor rank: alpha, alpha / rank and 1 differ
            _init_case(512, 6, 16),
        ],
        hidden=lambda rng: [
            _lora_case(rng, 6, 6, 1, 0.5, (3,)),
            _lora_case(rng, 5, 7, 3, 16.0, (2, 4), dtype="float64"),
            _lora_case(rng, 8, 2, 4, 1.0, (1, 3, 2)),
            _init_case(1024, 4, 8, alpha=8.0),
            _init_case(256, 32, 64),
        ],
        mistakes=_mistakes_8_1),
    "8.2": GraderSpec(
        public=lambda rng: [
            _wrapped_case(rng, 4, 3, 2, 1.5, (2, 5)),
            _identity_case(rng, 5, 4, 2, 8.0),
        ],
        hidden=lambda rng: [
            _wrapped_case(rng, 6, 6, 1, 0.5, (3,), bias=False),
            _wrapped_case(rng, 5, 7, 3, 16.0, (2, 4), dtype="float64"),
            _identity_case(rng, 8, 3, 4, 2.0, bias=False),
            _identity_case(rng, 4, 6, 2, 16.0, dtype="float64"),
        ],
        mistakes=_mistakes_8_2),
    "8.3": GraderSpec(
        public=lambda rng: [
            _replace_case(rng, 2, 2, 4.0),
        ],
        hidden=lambda rng: [
            _replace_case(rng, 1, 1, 1.0, dim=4, hidden=8),
            _replace_case(rng, 3, 4, 16.0),
            _gpt_replace_case(rng, 2, 2, 8.0),
            _count_case(16),
            _count_case(8, n_layers=2),
        ],
        mistakes=_mistakes_8_3),
}
