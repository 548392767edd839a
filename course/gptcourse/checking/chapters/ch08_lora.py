"""Chapter 08, parameter-efficient fine-tuning with LoRA: its tasks, their probes and the hints.

- 8.1 LoRALayer: B must start at exactly zero; A is random, so it is judged by its
  distribution: its shape, every value within the Kaiming-uniform bound 1/sqrt(rank) (what
  kaiming_uniform_(A, a=sqrt(5)) gives for an (in_dim, rank) tensor), and a Kolmogorov-Smirnov
  test against the uniform distribution on [-bound, bound] whose false-failure rate is fixed by
  the Dvoretzky-Kiefer-Wolfowitz inequality, P(D > eps) <= 2 exp(-2 n eps^2): eps is chosen so
  that a correct layer fails a case with probability at most INIT_FALSE_FAILURE. Its forward pass is
  compared with the grader's values copied into A and B (kinds.ModuleForward).
- 8.2 LinearWithLoRA: a forward pass with every weight loaded, the output right after
  construction (exactly the wrapped layer's), and whether the wrapped layer's parameters are
  the very objects it was given.
- 8.3 replace_linear_with_lora: a nested model (Sequential, ModuleList, attributes of blocks,
  a module that is not a Linear but holds one, layers that are not linear) is changed in place:
  what stands at the place of every layer afterwards, and which parameters are trainable
  with the base frozen. The hidden cases also count GPT-2 small's trainable parameters at rank
  16, built on the meta device (nothing allocated).
"""
import math
import zlib

import torch
import torch.nn as nn

from gptcourse.checking import kinds
from gptcourse.checking.chapters import TaskSpec
from gptcourse.checking.chapters.toys import NestedModel
from gptcourse.checking.contract import Contract, ReferenceValue, small_number
from gptcourse.checking.probes import ProbeFailure
from gptcourse.tokenizer import GPT2_FILES

CHAPTER = "08_lora"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/grading/preflight.py).
GRADING_DATA = GPT2_FILES


# The largest share of A's values a correct layer may fail the uniformity test with.
INIT_FALSE_FAILURE = 1e-6


# ------------------------------------------------------------------------------------------
# 8.1 LoRALayer
# ------------------------------------------------------------------------------------------

def lora_arguments(args):
    return [args["in_dim"], args["out_dim"], args["rank"], args["alpha"]], {}


def kaiming_bound(rank):
    """kaiming_uniform_(A, a=sqrt(5)) on an (in_dim, rank) tensor: fan_in is rank, the gain
    sqrt(2 / (1 + 5)), so the bound is gain * sqrt(3 / rank) = 1 / sqrt(rank)."""
    return 1.0 / math.sqrt(rank)


def dkw_epsilon(n, false_failure=INIT_FALSE_FAILURE):
    """The distance eps with P(sup |F_n - F| > eps) <= false_failure for n samples (DKW)."""
    return math.sqrt(math.log(2.0 / false_failure) / (2.0 * n))


def uniform_fit(values, bound):
    """The Kolmogorov-Smirnov distance between the values and the uniform distribution on
    [-bound, bound]."""
    x = torch.sort(values.detach().flatten().double().cpu()).values
    if bound <= 0:
        return 1.0
    cdf = ((x + bound) / (2 * bound)).clamp(0, 1)
    return _ks_distance(cdf)


def normal_fit(values, std):
    """The Kolmogorov-Smirnov distance between the values and the normal distribution of mean 0
    and the given spread (only to name the mistake: kaiming_normal_ or torch.randn)."""
    x = torch.sort(values.detach().flatten().double().cpu()).values
    if std <= 0:
        return 1.0
    return _ks_distance(torch.special.ndtr(x / std))


def _ks_distance(cdf):
    n = cdf.numel()
    above = torch.arange(1, n + 1, dtype=torch.float64) / n - cdf
    below = cdf - torch.arange(0, n, dtype=torch.float64) / n
    return float(torch.maximum(above, below).max())


def record_initial_lora(probe):
    """The shapes of A and B, whether B is zero, and A's distribution (see the module docstring)."""
    layer = probe.result
    if not isinstance(layer, nn.Module):
        raise ProbeFailure(f"LoRALayer(...) should be an nn.Module, got {type(layer).__name__}")
    args = probe.case.args
    params = dict(layer.named_parameters())
    for name in ("A", "B"):
        if name not in params:
            raise ProbeFailure(f"your LoRALayer has no parameter named {name!r} (an nn.Parameter attribute "
                               f"self.{name})")
    a, b = params["A"], params["B"]
    probe.record_value("shapes", {"A": list(a.shape), "B": list(b.shape)}, "the shapes of A and B")
    probe.record_value("B_is_zero", bool((b == 0).all()), "whether B starts at exactly zero")
    bound = kaiming_bound(args["rank"])
    values = a.detach().double()
    largest = float(values.abs().max())
    probe.record_value("A_within_bound", largest <= bound * (1 + 1e-6), "whether every value of A lies within the bound")
    distance = uniform_fit(a, bound)
    std = float(values.std()) if values.numel() > 1 else 0.0
    # Only the pass/fail of A_looks_uniform (distance <= epsilon) is a test; the other
    # statistics just name the mistake in the message.
    probe.kept["initial_A"] = {"largest": largest, "smallest": float(values.min()), "distance": distance, "std": std,
                   "bound": bound, "epsilon": dkw_epsilon(a.numel()),
                   "distance_own_range": uniform_fit(a, largest), "distance_normal": normal_fit(a, std)}
    probe.record_value("A_looks_uniform", distance <= dkw_epsilon(a.numel()),
                   "whether A's values look uniform between -bound and bound")
    probe.record_value("A_statistics", {key: round(value, 6) for key, value in probe.kept["initial_A"].items()},
                   "A's largest value, spread and distance from the uniform distribution")


def _near(value, target, tolerance=0.02):
    return target > 0 and abs(value / target - 1) <= tolerance


def diagnose_initial_A(stats, args):
    """What A's statistics say about how it was drawn (the test itself is A_within_bound and
    A_looks_uniform; this only words the message)."""
    in_dim, rank = args["in_dim"], args["rank"]
    bound = kaiming_bound(rank)
    largest, smallest, std = stats.get("largest", 0.0), stats.get("smallest", 0.0), stats.get("std", 0.0)
    eps = stats.get("epsilon", 0.0)
    wanted = (f"every entry uniformly between -1/sqrt(rank) and 1/sqrt(rank) (here +-{bound:.4g}), what "
              f"torch.nn.init.kaiming_uniform_(A, a=math.sqrt(5)) gives for A of shape (in_dim, rank)")
    if std == 0:
        if largest == 0:
            return ("A starts at all zeros: with both A and B zero, no gradient reaches either of them and the "
                    f"layer never learns. A must be random: {wanted}")
        return f"every entry of A is the same ({smallest:.4g}): A must be random, {wanted}"
    if smallest >= 0:
        return (f"A has no negative values (from {smallest:.4g} to {largest:.4g}; torch.rand draws from [0, 1)): "
                f"draw {wanted}")
    if stats.get("distance_own_range", 1.0) <= eps:
        spread = f"A is uniform, but between -{largest:.4g} and {largest:.4g} instead of +-1/sqrt(rank) = +-{bound:.4g}"
        if _near(largest, 1 / math.sqrt(in_dim)):
            return (f"{spread}, the bound 1/sqrt(in_dim): kaiming_uniform_ takes fan_in from the tensor's second "
                    f"dimension, so it must fill A of shape (in_dim, rank) itself, not a (rank, in_dim) tensor "
                    f"transposed afterwards (nor with mode='fan_out')")
        if _near(largest, math.sqrt(6 / (in_dim + rank))):
            return f"{spread}, the bound sqrt(6 / (in_dim + rank)) of xavier_uniform_: draw {wanted}"
        if _near(largest, math.sqrt(6 / rank)):
            return (f"{spread}, the bound sqrt(6 / rank) of kaiming_uniform_ with its default a=0: pass "
                    f"a=math.sqrt(5)")
        if rank > 1 and _near(largest, 1 / rank):
            return f"{spread}, the bound 1/rank: it is 1/sqrt(rank), the square root of rank"
        if _near(largest, math.sqrt(6 / 26 / rank)):  # kaiming_uniform_'s bound sqrt(6 / ((1 + a^2) fan_in)), a=5
            return f"{spread}, what kaiming_uniform_ gives with a=5: pass a=math.sqrt(5), the square root of 5"
        return f"{spread}: draw {wanted}"
    if stats.get("distance_normal", 1.0) <= eps:
        return (f"A's values follow a normal distribution (standard deviation {std:.4g}; kaiming_normal_ or "
                f"torch.randn), not a uniform one: draw {wanted}")
    if largest > bound * (1 + 1e-6):
        return f"A's values reach {largest:.4g}, beyond the bound 1/sqrt(rank) = {bound:.4g}: draw {wanted}"
    return (f"A's values are not spread evenly between -1/sqrt(rank) and 1/sqrt(rank) (distance "
            f"{stats.get('distance', 0.0):.4g} from the uniform distribution, at most {eps:.4g} expected; "
            f"standard deviation {std:.4g}, expected {bound / math.sqrt(3):.4g}): draw {wanted}")


class _Initialisation(kinds.Function):
    """kinds.Function whose statistics of A are judged here: A_statistics are shown, never
    compared (they are random); A_within_bound and A_looks_uniform are compared with the
    reference's, but the message names the mistake from the statistics (a known-mistake
    comparison of two booleans would match any other mistake with the same pass/fail)."""

    def probe(self, probe):
        # A is drawn when the layer is built: seeded per case, its values (and the figures the
        # message shows) are the same whatever this process drew before.
        torch.manual_seed(probe.ctx.seed % 2**31)
        return super().probe(probe)

    def owns(self, key):
        return key in ("A_statistics", "A_within_bound", "A_looks_uniform")

    def judge_key(self, key, got, expected, case):
        if key == "A_statistics" or got.get(key) == expected.get(key):
            return None
        from gptcourse.checking.judge import key_name

        return f"{key_name(case.task, key)}: wrong — {diagnose_initial_A(got.get('A_statistics') or {}, case.args)}"


def lora_output_hint(key, got, expected, case):
    """forward's output a constant multiple of the right one: which constant (alpha, rank)."""
    import numpy as np

    have, want = got.get(key), expected.get(key)
    if key != "out" or not isinstance(have, np.ndarray) or not isinstance(want, np.ndarray) \
            or have.shape != want.shape or not np.any(want):
        return ""
    factor = float((have * want).sum() / (want * want).sum())
    if not np.allclose(have, factor * want, rtol=1e-4, atol=1e-6 * float(np.abs(want).max())):
        return ""
    alpha, rank = case.args["alpha"], case.args["rank"]
    if math.isclose(factor, 1 / alpha, rel_tol=1e-4):
        return "the update is not scaled by alpha: forward returns alpha * (x @ A @ B)"
    if math.isclose(factor, 1 / rank, rel_tol=1e-4):
        return ("the update is scaled by alpha / rank (the LoRA paper's scaling), but this task's LoRALayer computes "
                "alpha * (x @ A @ B), without dividing by rank")
    if math.isclose(factor, alpha, rel_tol=1e-4):
        return "the update is scaled by alpha twice: forward returns alpha * (x @ A @ B)"
    return f"the output is {factor:.4g} times the expected one: forward returns alpha * (x @ A @ B)"


# ------------------------------------------------------------------------------------------
# 8.2 LinearWithLoRA
# ------------------------------------------------------------------------------------------

def wrapped_arguments(args):
    """LinearWithLoRA(linear, rank, alpha) around a new nn.Linear of the case's sizes (its
    weights come from the case: state/linear.weight, state/linear.bias)."""
    linear = nn.Linear(args["in_dim"], args["out_dim"], bias=args["bias"])
    return [linear, args["rank"], args["alpha"]], {}


def identity_arguments(probe):
    args = probe.case.args
    probe.step = "creating the nn.Linear to wrap"
    probe.kept["linear"] = nn.Linear(args["in_dim"], args["out_dim"], bias=args["bias"]).to(probe.dtype)
    with torch.no_grad():
        for name, param in probe.kept["linear"].named_parameters():
            param.copy_(probe.tensor(f"state/linear.{name}"))
    return [probe.kept["linear"], args["rank"], args["alpha"]], {}


def record_identity(probe):
    """Right after construction: the same parameters as the layer given, and its output."""
    wrapped = probe.result
    if not isinstance(wrapped, nn.Module):
        raise ProbeFailure(f"LinearWithLoRA(...) should be an nn.Module, got {type(wrapped).__name__}")
    given = {id(param): name for name, param in probe.kept["linear"].named_parameters()}
    kept = sorted(given[id(param)] for param in wrapped.parameters() if id(param) in given)
    probe.record_value("wrapped_parameters_kept", kept, "the parameters of the layer given that are still in use")
    # The LoRA layer is made in the default dtype: move the whole module to the case's dtype, as
    # a training script would (.to keeps the Parameter objects, so the check above still holds).
    probe.prepare(wrapped)
    probe.kept["linear"].to(device=probe.device, dtype=probe.dtype)  # already there when it is kept; a copy leaves it behind
    probe.step = "running the new LinearWithLoRA on an input"
    x = probe.tensor("x")
    with torch.no_grad():
        out = wrapped(x)
        probe.record("out_at_init", out, "the output right after construction")
        probe.record("linear_out", probe.kept["linear"](x), "the wrapped layer's own output")


def _wrapped_layer_trainable(module):
    """The contract leaves open whether LinearWithLoRA may freeze the layer it wraps (the notebook
    freezes the whole model before wrapping, so doing it again in __init__ is harmless): the
    parameters of `linear` are made trainable again right after construction, so that the
    gradients through the wrapped layer are still checked (they show that forward really uses
    linear(x)). The LoRA parameters are left as they are."""
    inner = getattr(module, "linear", None)
    if isinstance(inner, nn.Module):
        for param in inner.parameters():
            param.requires_grad_(True)


# ------------------------------------------------------------------------------------------
# 8.3 replace_linear_with_lora
# ------------------------------------------------------------------------------------------

def build_nested(args, gpt_model=None):
    if args["model"] == "nested":
        return NestedModel(args["vocab_size"], args["dim"], args["hidden"], args["n_blocks"])
    model = gpt_model(dict(args["cfg"]))
    model.out_head = nn.Linear(args["cfg"]["emb_dim"], args["num_classes"])
    return model


def replace_arguments(probe):
    """replace_linear_with_lora(model, rank, alpha) on the case's model with the case's
    weights, the base frozen as the notebook freezes it."""
    args = probe.case.args
    gpt_model = probe.name("GPTModel") if args["model"] == "gpt" else None
    probe.step = "building the model the test passes in"
    model = probe.module_input("model", build_nested(args, gpt_model))
    for param in model.parameters():
        param.requires_grad = False
    probe.kept["model"] = model
    probe.kept["before"] = dict(model.named_modules())
    probe.kept["old_parameters"] = {id(param) for param in model.parameters()}
    probe.kept["linears"] = {name: module for name, module in probe.kept["before"].items() if isinstance(module, nn.Linear)}
    with torch.no_grad():
        probe.kept["out_before"] = model(probe.tensor("ids"))
    return [model, args["rank"], args["alpha"]], {}


def describe_place(module, original):
    """What stands where an nn.Linear stood: wrapped once (around the very layer), twice, ..."""
    if module is None:
        return "nothing (removed)"
    if module is original:
        return "the nn.Linear itself, not wrapped"
    if isinstance(module, nn.Linear):
        return "another nn.Linear"
    inner = getattr(module, "linear", None)
    depth = 1
    while inner is not None and not isinstance(inner, nn.Linear) and hasattr(inner, "linear"):
        inner, depth = inner.linear, depth + 1
    if inner is original:
        return f"{type(module).__name__} around the original layer" + ("" if depth == 1 else f", wrapped {depth} times")
    if isinstance(inner, nn.Linear):
        return f"{type(module).__name__} around a copy of the layer"
    return f"a {type(module).__name__}"


def module_at(model, path):
    """The module registered at a dotted path, walked one child at a time (what forward uses),
    or None. Unlike dict(model.named_modules()), it is not fooled by a child whose own name
    holds dots (setattr(model, "blocks.0.up", ...) adds such a child and changes nothing else)."""
    module = model
    for atom in path.split(".") if path else []:
        module = module._modules.get(atom) if isinstance(module, nn.Module) else None
        if module is None:
            return None
    return module


def _update_values(name, param):
    """Values for a parameter the function added (LoRA's A and B), fixed by its name alone, so
    that the reference's model and a correct one get the same."""
    generator = torch.Generator().manual_seed(zlib.crc32(name.encode()))
    return (0.3 * torch.randn(tuple(param.shape), generator=generator, dtype=torch.float64)).to(param.dtype)


def record_replaced(probe):
    """For every place that held an nn.Linear, what holds it now; every other module still in
    its place; the trainable parameters; the output (LoRA's B is zero: it must not change); the
    output once the new parameters are given non-zero values (the updates must be used)."""
    model = probe.kept["model"]
    dotted = sorted(f"{prefix}.{name}".lstrip(".") for prefix, module in model.named_modules()
                    for name in module._modules if "." in name)
    probe.record_value("dotted_children", dotted, "children whose names hold dots")
    probe.record_value("places", {name: describe_place(module_at(model, name), original)
                              for name, original in probe.kept["linears"].items()},
                   "what stands where each nn.Linear was")
    others = sorted(name for name, module in probe.kept["before"].items()
                    if name and name not in probe.kept["linears"] and not any(name.startswith(lin + ".") for lin in probe.kept["linears"])
                    and module_at(model, name) is not module)
    probe.record_value("others_moved", others, "the other modules no longer in their place")
    trainable = sum(param.numel() for param in model.parameters() if param.requires_grad)
    probe.record_value("trainable", trainable, "the number of trainable parameters (the base frozen)")
    probe.step = "running the model after your function changed it"
    # The new LoRA parameters are made on the CPU; the notebook moves the model afterwards, as here.
    model.to(device=probe.device, dtype=probe.dtype)
    with torch.no_grad():
        out = model(probe.tensor("ids"))
    probe.record_value("output_unchanged", bool(torch.allclose(out, probe.kept["out_before"], rtol=1e-5, atol=1e-6)),
                   "whether the model computes what it did before (B starts at zero)")
    old = probe.kept["old_parameters"]
    probe.step = "giving the new parameters (A and B of every LoRA layer) non-zero values and running the model"
    with torch.no_grad():
        for name, param in model.named_parameters():
            if id(param) not in old:
                param.copy_(_update_values(name, param))
        probe.record("output_with_updates", model(probe.tensor("ids")), "the output once A and B are not zero")


def count_arguments(probe):
    """GPT-2 small (or another size) with a 2-class head on the meta device, frozen."""
    args = probe.case.args
    probe.step = "building GPT-2 small on the meta device"
    with torch.device("meta"):
        model = build_nested(args, probe.name("GPTModel"))
    for param in model.parameters():
        param.requires_grad = False
    probe.kept["model"] = model
    return [model, args["rank"], args["alpha"]], {}


def record_count(probe):
    model = probe.kept["model"]
    probe.record_value("trainable", sum(param.numel() for param in model.parameters() if param.requires_grad),
                   "the number of trainable parameters (the base frozen)")
    probe.record_value("total", sum(param.numel() for param in model.parameters()),
                   "the number of parameters in all")


KEY_NAMES = {
    "shapes": "The shapes of A and B",
    "B_is_zero": "B right after construction",
    "A_within_bound": "The range of A's values right after construction",
    "A_looks_uniform": "The distribution of A's values right after construction",
    "init/B": "B right after construction",
    "wrapped_parameters_kept": "The wrapped layer's own parameters",
    "out_at_init": "The output right after construction",
    "places": "What stands where each nn.Linear was",
    "others_moved": "The modules that are not linear layers",
    "trainable": "The number of trainable parameters",
    "total": "The number of parameters",
    "output_unchanged": "The model's output right after the replacement",
    "dotted_children": "Children whose names hold dots",
    "output_with_updates": "The model's output once every LoRA layer's A and B are not zero",
}

ERROR_HINTS = [
    (r"parameter 'lora\.[AB]' has shape",
     "the LoRA layer has the wrong sizes: its update is computed from the input x (..., in_features) and has "
     "linear(x)'s shape (..., out_features): LoRALayer(linear.in_features, linear.out_features, rank, alpha), "
     "as nn.Linear's weight is (out_features, in_features)",
     ("8.2",)),
    (r"must match the size of tensor",
     "two tensors added together have different shapes: linear(x) and lora(x) are both (..., out_features); "
     "nn.Linear's weight is (out_features, in_features), while A @ B is (in_features, out_features), so a weight "
     "merged with the update needs (A @ B).T: or simply return linear(x) + lora(x)",
     ("8.2",)),
    (r"argument 'size'.*float|tuple of ints,\s*but got float|'float' object cannot be interpreted as an integer",
     "a size is a float: rank (an int) comes before alpha, LoRALayer(in_dim, out_dim, rank, alpha) and "
     "LinearWithLoRA(linear, rank, alpha): check the order of the arguments", ("8.1", "8.2", "8.3")),
    (r"mat1 and mat2 shapes cannot be multiplied|size mismatch|must match the size",
     "the shapes do not chain: x (..., in_dim) @ A (in_dim, rank) @ B (rank, out_dim) gives (..., out_dim)",
     ("8.1", "8.2")),
    (r"'(int|float)' object has no attribute",
     "LinearWithLoRA gets the nn.Linear itself as its first argument: read its sizes from linear.in_features "
     "and linear.out_features", ("8.2",)),
    (r"maximum recursion depth exceeded",
     "the recursion never ends: recurse only into children that are not nn.Linear, never into the "
     "LinearWithLoRA you just made; a loop over model.modules() walks into the wrappers it adds: loop over "
     "list(model.modules()), made before changing anything",
     ("8.3",)),
    (r"object has no attribute 'in_features'",
     "only the nn.Linear layers are wrapped (isinstance(child, nn.Linear)): LinearWithLoRA reads in_features and "
     "out_features, which embeddings, layer norms and other modules do not have", ("8.3",)),
    (r"object has no attribute '(trf_blocks|out_head|att|ff|final_norm|tok_emb|pos_emb|W_query|layers)'",
     "replace_linear_with_lora must work on any model, not only GPTModel: walk the children of whatever module "
     "it is given (named_children) instead of naming GPTModel's attributes", ("8.3",)),
    (r"dictionary changed size during iteration|OrderedDict mutated during iteration",
     "the children changed while you were walking through them: loop over list(module.named_children()) or "
     "replace each child with setattr, which keeps the same names", ("8.3",)),
]


def _init_hint(key, got, expected, case):
    have = got.get(key)
    rank = case.args.get("rank")
    stats = got.get("A_statistics") or {}
    if key == "B_is_zero" or key == "init/B":
        return "B must start at exactly zero (torch.zeros(rank, out_dim)), so that the update is 0 before training"
    if key == "structure" and isinstance(have, dict) and rank:
        in_dim, out_dim = case.args["in_dim"], case.args["out_dim"]
        if any("plain tensor" in str(what) for what in have.values()):
            return ("wrap A and B in nn.Parameter(...): a plain tensor attribute is not registered, so "
                    "model.parameters() does not list it and the optimizer never trains it")
        if f"shape ({rank}, {in_dim})" in str(have.get("A")) or f"shape ({out_dim}, {rank})" in str(have.get("B")):
            return ("A is (in_dim, rank) and B is (rank, out_dim), so that x @ A @ B needs no transpose (the LoRA "
                    "paper writes W + BA with A (rank, in_dim) and B (out_dim, rank): this layout is its transpose)")
        return f"A is (in_dim, rank) = {(in_dim, rank)} and B is (rank, out_dim) = {(rank, out_dim)}"
    if key == "shapes":
        return (f"A is (in_dim, rank) and B is (rank, out_dim): here A {[case.args['in_dim'], rank]} and "
                f"B {[rank, case.args['out_dim']]}, got {have}")
    if key in ("A_within_bound", "A_looks_uniform"):
        return diagnose_initial_A(stats, case.args)
    return ""


def wrapped_output_hint(key, got, expected, case):
    """forward's output against what the usual mistakes compute from the case's own weights."""
    import numpy as np

    have = got.get(key)
    arrays = case.arrays
    if key != "out" or not isinstance(have, np.ndarray) or "state/lora.A" not in arrays:
        return ""
    x = np.asarray(arrays["x"], dtype=np.float64)
    weight = np.asarray(arrays["state/linear.weight"], dtype=np.float64)
    bias = np.asarray(arrays["state/linear.bias"], dtype=np.float64) if "state/linear.bias" in arrays else 0.0
    a, b = (np.asarray(arrays[f"state/lora.{n}"], dtype=np.float64) for n in "AB")
    alpha = case.args["alpha"]
    base = x @ weight.T + bias
    update = alpha * (x @ a @ b)
    candidates = [
        (update, "forward returns only the update: it is linear(x) + lora(x)"),
        (base, "forward returns only linear(x): add the update, linear(x) + lora(x)"),
        (base * update, "forward multiplies the two outputs: it adds them, linear(x) + lora(x)"),
        (base + alpha * update, "the update is scaled by alpha twice: LoRALayer already multiplies by alpha, so "
                                "forward is just linear(x) + lora(x)"),
        (base + update / alpha, "the update is not scaled by alpha: lora(x) already is, linear(x) + lora(x)"),
    ]
    if "state/linear.bias" in arrays:
        candidates.append((x @ weight.T + update, "the wrapped layer's bias is missing: call self.linear(x), which "
                                                  "adds linear.bias, rather than x @ linear.weight.T"))
    if weight.shape[0] == weight.shape[1]:
        candidates.append((base + alpha * (base @ a @ b), "the update is applied to linear(x) instead of to the "
                                                          "input: linear(x) + lora(x), both from x"))
    for value, message in candidates:
        if value.shape == have.shape and np.allclose(have, value, rtol=1e-4, atol=1e-5):
            return message
    return ""


def _wrap_hint(key, got, expected, case):
    have = got.get(key)
    if key == "wrapped_parameters_kept":
        return ("the layer given must be kept as it is, the same object (self.linear = linear): its parameters "
                f"are the pretrained weights, not copies of them (still in use: {have})")
    if key == "out_at_init":
        return "right after construction the output must be exactly linear(x): B starts at zero, and forward is linear(x) + lora(x)"
    return ""


def _replace_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key == "dotted_children":
        example = (have or ["blocks.0.up"])[0]
        parent, _, child = example.rpartition(".")
        return (f"setattr(module, name, ...) with a dotted name such as {example!r} adds a new child of that name "
                f"and leaves the nested layer where it was (the model still uses it): find the parent, "
                f"parent = model.get_submodule({parent!r}), then setattr(parent, {child!r}, ...), or recurse "
                f"through named_children(), whose names never hold dots")
    if key == "places" and isinstance(have, dict) and isinstance(want, dict):
        wrong = {name: what for name, what in have.items() if what != want.get(name)}
        if not wrong:
            return ""
        name, what = next(iter(wrong.items()))
        if len(wrong) == len(have) and all("not wrapped" in w for w in wrong.values()):
            # The same observation comes from code that picks no layer (by a name the test model
            # lacks, say) and from code that wraps them somewhere else: name both checks, claim neither.
            return ("not one nn.Linear of the model passed in was replaced: wrap every nn.Linear, whatever its "
                    "name or depth, in place in the model itself, setattr(parent, name, LinearWithLoRA(layer, "
                    "rank, alpha)); a loop variable or a copy of the model does not change the model")
        if "wrapped" in what and "times" in what:
            return (f"{name} is wrapped more than once: walk the direct children (named_children) and recurse only "
                    f"into modules that are not nn.Linear, rather than model.named_modules() while changing it")
        if "not wrapped" in what:
            nested = [n for n in wrong if "." in n]
            return (f"{len(wrong)} nn.Linear layer(s) not wrapped, e.g. {name}: every nn.Linear at every depth must be "
                    f"replaced (in nn.Sequential, nn.ModuleList and attributes of blocks too)"
                    + (": recurse into every child that is not an nn.Linear" if nested else ""))
        if "copy" in what:
            return f"{name} wraps a copy of the layer: wrap the layer itself, LinearWithLoRA(module, rank, alpha)"
        return f"{name} now holds {what}: put LinearWithLoRA(that_layer, rank, alpha) in its place"
    if key == "others_moved":
        return f"only the nn.Linear layers may be replaced; these other modules changed: {', '.join(have or [])}"
    if key == "trainable" and have == 0:
        return ("no parameter is trainable: the new A and B of every LoRA layer must stay trainable; don't freeze "
                "anything inside the function (the caller froze the base before calling it)")
    if key == "trainable" and isinstance(have, int) and isinstance(want, int) and have > want:
        return (f"{have - want:,} parameters too many are trainable: only the LoRA layers' A and B may be; leave "
                f"requires_grad of the existing parameters as they are (no requires_grad_(True) on the wrapper or the "
                f"model), and wrap every nn.Linear once")
    if key == "trainable":
        return ("with the base frozen, only the LoRA layers' A and B are trainable: leave requires_grad of the "
                "existing parameters as they are, and wrap every nn.Linear once")
    if key == "output_with_updates":
        return ("once A and B are not zero, the model's output is not what wrapping every nn.Linear once gives: "
                "each LinearWithLoRA must stand where its layer was, so that forward goes through it")
    if key == "output_unchanged":
        return "right after the replacement the model must compute what it did before (every B is zero)"
    return ""


# ------------------------------------------------------------------------------------------
# The book's numbers
# ------------------------------------------------------------------------------------------

# Numbers of the book's runs that a test of this chapter asserts, each with the test that does
# (docs/contract.md lists them under the chapter).
REFERENCE_VALUES = (
    ReferenceValue("GPT-2 small with a 2-class head, its base frozen, has 2,666,528 trainable parameters "
                   "after `replace_linear_with_lora` at rank 16.",
                   "tests/chapters/test_ch08.py::"
                   "test_lora_on_gpt2_small_with_a_2_class_head_trains_2_666_528_parameters"),
)


# ------------------------------------------------------------------------------------------
# Each task's contract, probes and hints, in one place (gptcourse/checking/chapters/__init__.py:
# TaskSpec). The contract says in words what the cases of both chapter modules check and what they
# leave free; docs/contract.md is rendered from it (grader/authoring/contract.py).
# ------------------------------------------------------------------------------------------

SPECS = {
    "8.1": TaskSpec(
        contract=Contract(
            pinned=(
                "Parameters `A` of shape `(in_dim, rank)` and `B` of shape `(rank, out_dim)`, `B` all zeros when made.",
                "`A` drawn uniformly from `[-1/sqrt(rank), 1/sqrt(rank)]`, judged by its distribution on a layer of "
                f"at least 8,192 values (a correct layer fails with probability at most {small_number(INIT_FALSE_FAILURE)}).",
                "`forward` gives `alpha * (x @ A @ B)` (no division by `rank`) for any leading dimensions.",
            ),
            free=("How `A` is drawn, as long as the distribution is that one.",)),
        probes={"forward": kinds.ModuleForward(lora_arguments, attributes=("A", "B"), initial_values=("B",)),
                "init": _Initialisation(lambda probe: lora_arguments(probe.case.args), outputs=(), also=record_initial_lora)},
        hints=(_init_hint, lora_output_hint)),
    "8.2": TaskSpec(
        contract=Contract(
            pinned=(
                "Attributes `linear`, the very layer given (not a copy), and `lora`, a `LoRALayer` of the layer's "
                "sizes; `forward` is `linear(x) + lora(x)`.",
                "Right after construction its output is exactly the wrapped layer's.",
            ),
            free=("Whether `__init__` freezes the wrapped layer.",)),
        probes={"forward": kinds.ModuleForward(wrapped_arguments, attributes=("linear",),
                                               after_construct=_wrapped_layer_trainable),
                "identity": kinds.Function(identity_arguments, outputs=(), also=record_identity)},
        hints=(_wrap_hint, wrapped_output_hint)),
    "8.3": TaskSpec(
        contract=Contract(
            pinned=(
                "Every `nn.Linear`, however deeply nested (in an `nn.Sequential`, an `nn.ModuleList`, a block of a "
                "block), is replaced in its place by a `LinearWithLoRA` around that very layer, exactly once; "
                "every other module stays where it was.",
                "The output is unchanged right after, and A and B stay trainable: GPT-2 small with a 2-class head "
                "at rank 16 and its base frozen has 2,666,528 trainable parameters.",
            )),
        probes={"replace": kinds.Function(replace_arguments, outputs=(), also=record_replaced,
                                          name="replace_linear_with_lora"),
                "count": kinds.Function(count_arguments, outputs=(), also=record_count, name="replace_linear_with_lora")},
        hints=(_replace_hint,)),
}
