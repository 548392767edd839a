"""The grader's chapter module of chapter 06 (decoding and sampling): its public and hidden
cases and its known mistakes. What the cases pin down, in words, is each task's contract (in the
public module's SPECS, rendered in docs/contract.md); here is how the cases are built.

- Filters (6.1 to 6.3) are compared exactly, on many rows at once: temperatures near 0 and large,
  k = 1 and k = the vocabulary size, ties at the k-th value, p so small that one token remains and
  p = 0, -inf already present. Top-p cases are drawn so that no cumulative probability lies within
  TOP_P_MARGIN of p and the tokens at the cut are not equally probable: the kept set is then the
  same however a correct implementation sorts and rounds (at an exact tie the contract's
  "smallest set" is not unique).
- generate (6.4) drives toy models whose next-token logits are known
  (gptcourse.checking.chapters.toys). Greedy and end-token cases run NextTokenModel and are exact.
  What a row holds after its first end token is free, and the book's reading (break before
  appending the last end token) is an accepted alternative to appending it (extras:
  internals/alternatives), so the end-token probe records each row's new tokens before its first
  end token and how many tokens were added.
  Sampling cases draw SAMPLE_ROWS rows of one prompt from a TableModel (the next token's logits
  are a row of a table, chosen by the last token) in one call. kinds.Sampler judges the counts of
  the new tokens (exact binomial tails: at most its false_failure per case, so that the public
  and hidden sampling cases of a grading run fail a correct sampler less than once in a million
  runs on each device) against what the extras give: every outcome's probability, computed here with
  the reference filters in float64 (internals/probs), and the distributions of the known wrong
  samplers (internals/mistakes: temperature first, top-p before top-k, temperature ignored or
  multiplied, a filter ignored, argmax). A wrong sampler is named there and only there: the
  counts are the Sampler's own observation, never compared with the GraderSpec's `mistakes`. The
  order case is redrawn until the three orders are at least ORDER_DISTANCE apart in total
  variation, so that each wrong order is told apart.
- The key-value cache (6.5) gets chapter 03's cases of MultiHeadAttention (without the cache it
  must be the same module) and kinds.ModuleSteps scripts: a sequence in chunks (one token at a
  time, several, mixed), reset_cache() and cache_k / cache_v None, a second sequence up to
  context_length, a call without the cache, and one token too many, which must be refused by the
  student's own raise or assert (a shape error inside PyTorch does not count). The device pass
  runs the script on meta, so a cache made on the CPU is caught without a GPU.
"""
import functools

import numpy as np
import torch

from gptcourse.checking.chapters.attention import multi_head_arguments
from gptcourse.checking.chapters.ch06_sampling import SAMPLE_ROWS, TOP_P_MARGIN
from gptcourse.checking.records import Case
from grader.chapters import GraderSpec
from grader.chapters.attention import (attention_internals, dropout_internals, module_case, multi_head_mistakes,
                                     naive_softmax)
from grader.chapters.casekit import (chunk_edges, chunk_sizes, module_weights, reference_module,
                                     reference_with_text_replaced, subclass_with)
from grader.reference import reference_object

NEG_INF = float("-inf")
# The book's next-token logits over its nine-word vocabulary ("closer", "every", "effort", ...).
BOOK_LOGITS = [4.51, 0.89, -1.90, 6.75, 1.63, -1.62, -1.89, 6.28, 1.79]
# The sampling cases' size and the top-p cases' margin are stated in the contract: they live beside it.
ORDER_DISTANCE = 0.1  # how far apart (total variation) the order case's three orders must be


# ------------------------------------------------------------------------------------------
# 6.1 softmax_with_temperature
# ------------------------------------------------------------------------------------------

def _with_minus_inf(rng, logits, count=1):
    """Some entries of every row set to -inf (never a whole row)."""
    rows = logits.reshape(-1, logits.shape[-1])
    for row in rows:
        row[rng.choice(row.size, size=min(count, row.size - 1), replace=False)] = NEG_INF
    return rows.reshape(logits.shape)


def _temperature_case(rng, shape, temperature, dtype="float32", scale=2.0, logits=None, minus_inf=0):
    x = np.array(logits, dtype=np.float64) if logits is not None else rng.normal(scale=scale, size=shape)
    if minus_inf:
        x = _with_minus_inf(rng, x, minus_inf)
    arrays = {"logits": x, "grad_seed": rng.normal(size=x.shape)}
    extra = ", some logits -inf" if minus_inf else ""
    label = f"logits of shape {tuple(x.shape)} (about -{2 * scale:g} to {2 * scale:g}{extra}), " \
            f"temperature={temperature}, {dtype}"
    if logits is not None:
        label = f"the book's nine logits, temperature={temperature}, {dtype}"
    return Case("6.1", "forward", label, {"temperature": temperature}, arrays, dtype)


# ------------------------------------------------------------------------------------------
# 6.2 top_k_logits and 6.3 top_p_logits
# ------------------------------------------------------------------------------------------

def _top_k_case(rng, shape, k, dtype="float32", ties=False, minus_inf=0, logits=None):
    if logits is not None:
        x = np.array(logits, dtype=np.float64)
    elif ties:
        # Whole numbers in a narrow range: many ties, and in every row one at the k-th value.
        x = rng.integers(-3, 4, size=shape).astype(np.float64)
        for row in x.reshape(-1, shape[-1]):
            order = np.argsort(-row, kind="stable")
            if k < row.size:
                row[order[k]] = row[order[k - 1]]
    else:
        x = rng.normal(scale=2.0, size=shape)
    if minus_inf:
        x = _with_minus_inf(rng, x, minus_inf)
    extra = ", ties at the k-th value" if ties else ""
    extra += ", some logits already -inf" if minus_inf else ""
    label = f"logits of shape {tuple(x.shape)}, k={k}{extra}, {dtype}"
    if logits is not None:
        label = f"the book's nine logits, k={k}, {dtype}"
    return Case("6.2", "forward", label, {"k": k}, {"logits": x}, dtype)


def _top_p_margin_ok(x, p):
    """Whether every row's cumulative probabilities (sorted) stay TOP_P_MARGIN away from p, with
    no tie between the last kept token and the first dropped one."""
    for row in x.reshape(-1, x.shape[-1]):
        probs = np.sort(torch.softmax(torch.tensor(row), dim=-1).numpy())[::-1]
        cumulative = np.cumsum(probs)
        if np.min(np.abs(cumulative - p)) < TOP_P_MARGIN:
            return False
        cut = int(np.searchsorted(cumulative, p))  # the last kept token's rank
        if cut + 1 < probs.size and abs(probs[cut] - probs[cut + 1]) < 1e-6:
            return False
    return True


def _top_p_case(rng, shape, p, dtype="float32", scale=2.0, minus_inf=0, peaked=False, offset=0.0):
    """offset: added to every logit (the probabilities do not change); past 88, exp overflows in
    float32, so a softmax written without subtracting the row's maximum gives NaN probabilities."""
    for _ in range(1000):
        x = rng.normal(scale=scale, size=shape) + offset
        if peaked:  # one token of each row far ahead of the rest
            rows = x.reshape(-1, shape[-1])
            rows[np.arange(rows.shape[0]), rng.integers(0, shape[-1], size=rows.shape[0])] += 3 * scale
        if minus_inf:
            x = _with_minus_inf(rng, x, minus_inf)
        if _top_p_margin_ok(x, p):
            break
    else:
        raise RuntimeError("could not draw top-p logits away from the cut")
    extra = ", one token far ahead in each row" if peaked else ""
    extra += ", some logits already -inf" if minus_inf else ""
    extra += f", large logits (about {offset:g})" if offset else ""
    label = f"logits of shape {tuple(x.shape)}, p={p}{extra}, {dtype}"
    return Case("6.3", "forward", label, {"p": p}, {"logits": x}, dtype)


# ------------------------------------------------------------------------------------------
# 6.4 generate
# ------------------------------------------------------------------------------------------

def _greedy_case(rng, batch, tokens, max_new_tokens, context_size, vocab_size=13, **options):
    """NextTokenModel (it predicts the sum of the ids it sees): cropping and appending show."""
    args = {"model": "next_token", "vocab_size": vocab_size, "context_length": context_size,
            "max_new_tokens": max_new_tokens, "context_size": context_size, **options}
    arrays = {"idx": rng.integers(1, vocab_size, size=(batch, tokens))}
    shown = "".join(f", {k}={v}" for k, v in options.items()) or " (temperature left at its default)"
    label = (f"a model that predicts the sum of the ids it sees (mod {vocab_size}); a batch of {batch} x {tokens} "
             f"ids, max_new_tokens={max_new_tokens}, context_size={context_size}{shown}")
    return Case("6.4", "greedy", label, args, arrays)


def _greedy_path(prompt, steps, context_size, vocab_size):
    """The tokens NextTokenModel's greedy decoding adds to one prompt."""
    ids = list(prompt)
    for _ in range(steps):
        ids.append(sum(ids[-context_size:]) % vocab_size)
    return ids[len(prompt):]


def _end_token_case(rng, batch, tokens, max_new_tokens, context_size, vocab_size=11, all_finish=True,
                    eos_in_prompt=False):
    """Greedy decoding with an end token that the rows produce at different steps (or, with
    all_finish=False, that one row never produces)."""
    for _ in range(5000):
        idx = rng.integers(0, vocab_size, size=(batch, tokens))
        paths = [_greedy_path(row, max_new_tokens, context_size, vocab_size) for row in idx.tolist()]
        eos_id = int(rng.integers(0, vocab_size))
        firsts = [path.index(eos_id) if eos_id in path else None for path in paths]
        finished = [f for f in firsts if f is not None]
        if all_finish and (len(finished) < batch or len(set(finished)) < min(batch, 2)
                           or max(finished) >= max_new_tokens - 1):
            continue
        if not all_finish and not (0 < len(finished) < batch):
            continue
        if eos_in_prompt:
            if eos_id in idx[0].tolist() or firsts[0] is None or firsts[0] < 1:
                continue
            idx[0, 0] = eos_id  # the first row's prompt holds the end token: it has not produced it
            paths = [_greedy_path(row, max_new_tokens, context_size, vocab_size) for row in idx.tolist()]
            firsts = [path.index(eos_id) if eos_id in path else None for path in paths]
            if None in firsts or len(set(firsts)) < 2 or max(firsts) >= max_new_tokens - 1:
                continue
            # The first row finishes last, at least two steps after the others: code that counts its
            # prompt's end token as produced stops earlier, even by the book's count (one token fewer).
            if firsts[0] < max(firsts[1:]) + 2:
                continue
        break
    else:
        raise RuntimeError("could not draw an end-token case")
    args = {"model": "next_token", "vocab_size": vocab_size, "context_length": context_size,
            "max_new_tokens": max_new_tokens, "context_size": context_size, "temperature": 0.0, "eos_id": eos_id}
    steps = ", ".join("never" if f is None else f"step {f + 1}" for f in firsts)
    extra = "; the first row's prompt already holds it" if eos_in_prompt else ""
    who = "the single row produces at" if batch == 1 else f"the {batch} rows produce at:"
    label = (f"greedy decoding with eos_id={eos_id}, which {who} {steps}{extra} "
             f"(a model that predicts the sum of the ids it sees, mod {vocab_size}); max_new_tokens={max_new_tokens}, "
             f"context_size={context_size}")
    return Case("6.4", "end_token", label, args, {"idx": idx})


def _sample_table(rng, vocab, scale=1.5, minus_inf=1):
    table = rng.normal(scale=scale, size=(vocab, vocab))
    for row in table:
        row[rng.choice(vocab, size=minus_inf, replace=False)] = NEG_INF
    return table


def _sample_case(rng, vocab=6, max_new_tokens=1, prompt_tokens=3, table=None, label_extra="", **options):
    table = _sample_table(rng, vocab) if table is None else table
    args = {"model": "table", "context_length": 4, "context_size": 4, "max_new_tokens": max_new_tokens,
            "num_rows": SAMPLE_ROWS, "num_outcomes": vocab ** max_new_tokens, **options}
    arrays = {"table": table, "idx": rng.integers(0, vocab, size=(1, prompt_tokens))}
    settings = ", ".join(f"{k}={v}" for k, v in options.items())
    label = (f"sampling {max_new_tokens} new token(s) for {SAMPLE_ROWS:,} rows of the same prompt with {settings}, "
             f"from a model whose next-token logits are a table ({vocab} tokens, one of them -inf in every row)"
             f"{label_extra}")
    return Case("6.4", "sample", label, args, arrays, "float64")


_ORDERS = {"right": ("top_k", "top_p", "temperature"), "temperature_first": ("temperature", "top_k", "top_p"),
           "top_p_first": ("top_p", "top_k", "temperature")}


def _order_case(rng):
    """top-k, top-p and a temperature together, on a table drawn so that the three orders give
    distributions at least ORDER_DISTANCE apart in total variation (so each wrong order is told apart)."""
    options = {"temperature": 2.5, "top_k": 4, "top_p": 0.7}
    for _ in range(1000):
        table = _sample_table(rng, 7, scale=1.2)
        case = _sample_case(rng, vocab=7, table=table, label_extra="; the order of the filters matters here",
                            **options)
        probs = [_outcome_probs(case.args, case.arrays, order) for order in _ORDERS.values()]
        if all(0.5 * np.abs(a - b).sum() >= ORDER_DISTANCE for i, a in enumerate(probs) for b in probs[i + 1:]):
            return case
    raise RuntimeError("could not draw a case where the order of the filters matters")


def _next_probs(logits, options, order=_ORDERS["right"], temperature_power=1.0):
    """The probabilities generate's step should sample from, for one row of logits (float64)."""
    x = torch.tensor(logits, dtype=torch.float64)[None]
    temperature = options.get("temperature", 0.0)
    if temperature == 0.0:
        probs = torch.zeros_like(x)
        probs[0, int(torch.argmax(x))] = 1.0
        return probs[0].numpy()
    for step in order:
        if step == "top_k" and options.get("top_k") is not None:
            x = reference_object("6.2")(x, options["top_k"])
        elif step == "top_p" and options.get("top_p") is not None:
            x = reference_object("6.3")(x, options["top_p"])
        elif step == "temperature":
            x = x / temperature ** temperature_power  # power -1: multiplied instead of divided
    return torch.softmax(x, dim=-1)[0].numpy()


def _outcome_probs(args, arrays, order=_ORDERS["right"], **mistake):
    """The probability of every outcome (new tokens t0, t1, ... as t0 + vocab * t1 + ...)."""
    table = arrays["table"]
    vocab = table.shape[0]
    options = {k: args.get(k) for k in ("temperature", "top_k", "top_p")}
    options.update(mistake.get("options", {}))
    power = mistake.get("temperature_power", 1.0)
    probs = {(): 1.0}
    last_of = {(): int(arrays["idx"][0, -1])}
    for _ in range(args["max_new_tokens"]):
        grown = {}
        for prefix, prob in probs.items():
            step = _next_probs(table[last_of[prefix]], options, order, power)
            for token in range(vocab):
                grown[prefix + (token,)] = prob * step[token]
                last_of[prefix + (token,)] = token
        probs = grown
    outcome = np.zeros(vocab ** args["max_new_tokens"])
    for tokens, prob in probs.items():
        outcome[sum(t * vocab ** i for i, t in enumerate(tokens))] = prob
    return outcome


def _sampling_mistakes(args, arrays):
    """[(message, probabilities)] of the known wrong samplers that differ on this case."""
    right = _outcome_probs(args, arrays)
    found = [
        ("the temperature is applied before top-k and top-p: filter the logits first (top-k, then top-p), "
         "then divide by the temperature and sample", _outcome_probs(args, arrays, _ORDERS["temperature_first"])),
        ("top-p is applied before top-k: the task's order is top-k, then top-p (on what top-k kept), then "
         "the temperature", _outcome_probs(args, arrays, _ORDERS["top_p_first"])),
        ("the temperature is ignored: divide the logits by it before the softmax",
         _outcome_probs(args, arrays, options={"temperature": 1.0})),
        ("the logits are multiplied by the temperature instead of divided by it",
         _outcome_probs(args, arrays, temperature_power=-1.0)),
        ("top_k is ignored: keep only the top_k largest logits (top_k_logits) before sampling",
         _outcome_probs(args, arrays, options={"top_k": None})),
        ("top_p is ignored: keep only the nucleus (top_p_logits) before sampling",
         _outcome_probs(args, arrays, options={"top_p": None})),
        ("the most probable token is always taken: with a temperature above 0, sample with "
         "torch.multinomial(probs, num_samples=1)", _outcome_probs(args, arrays, options={"temperature": 0.0})),
    ]
    return [(message, probs) for message, probs in found if 0.5 * np.abs(probs - right).sum() > 1e-9]


# ------------------------------------------------------------------------------------------
# 6.5 KVCacheMultiHeadAttention
# ------------------------------------------------------------------------------------------

_attention = functools.partial(module_case, "6.5", construct=multi_head_arguments, num_heads=2,
                               identity_out_proj=True)


def _steps_case(rng, batch, tokens, d_in, d_out, num_heads, context_length, dtype="float32", qkv_bias=False,
                chunks=None, past_end=True, one_by_one=False, straddle=False, dropout=0.0, large_scores=None):
    """A sequence fed in chunks with use_cache=True; reset_cache(); a second sequence fed in other
    chunks; a call without the cache; then, filling the cache to context_length, one token too many
    (straddle: filling it to context_length - 1, a chunk of two tokens, which would pass the end).
    The module is in eval mode, so a dropout above 0 must change nothing. large_scores: every query
    and key bias set to it (with qkv_bias=True), so that the cached path's scores pass the point
    where exp overflows (see module_case)."""
    args = {"d_in": d_in, "d_out": d_out, "context_length": context_length, "dropout": dropout,
            "num_heads": num_heads, "qkv_bias": qkv_bias}
    module = reference_module("6.5", multi_head_arguments, args)
    arrays = {"x": rng.normal(size=(batch, tokens, d_in)), "x2": rng.normal(size=(batch, context_length, d_in))}
    arrays.update(module_weights(module, rng))
    if large_scores:
        for name in ("state/W_query.bias", "state/W_key.bias"):
            arrays[name] = np.full_like(arrays[name], large_scores)
    cached = {"use_cache": True}
    first = chunks or ([[i, i + 1] for i in range(tokens)] if one_by_one else chunk_edges(rng, tokens))
    steps = [{"feed": chunk, "kwargs": cached} for chunk in first]
    steps += [{"call": "reset_cache"}, {"none": ["cache_k", "cache_v"]}]
    second_total = context_length if past_end and not straddle else max(1, context_length - 1)
    steps += [{"feed": chunk, "array": "x2", "kwargs": cached} for chunk in chunk_edges(rng, second_total, first=3)]
    steps += [{"feed": [0, tokens], "kwargs": {"use_cache": False}}]
    if past_end:
        steps += [{"feed": [0, 2 if straddle else 1], "array": "x2", "kwargs": cached, "raises": True}]
    args["steps"] = steps
    sizes = chunk_sizes(first)
    if straddle:
        second = f"{second_total} new tokens (context_length={context_length}), then 2 more (past it)"
    else:
        second = f"{second_total} new tokens up to context_length={context_length}{', then one more' if past_end else ''}"
    label = (f"{f'large scores (query and key biases of {large_scores:g}): ' if large_scores else ''}"
             f"{batch} x {tokens} tokens in {sizes} (use_cache=True), "
             f"reset_cache(), {second}; d_in={d_in}, d_out={d_out}, num_heads={num_heads}"
             f"{', qkv_bias=True' if qkv_bias else ''}{f', dropout={dropout} in eval mode' if dropout else ''}, "
             f"{dtype}")
    return Case("6.5", "steps", label, args, arrays, dtype)


def _train_steps_case(rng, batch, tokens, d_in, d_out, num_heads, chunks, dropout=0.5, dtype="float32"):
    """A sequence fed in chunks with use_cache=True in train mode: the cached path must drop
    attention weights as the plain one does (judged row by row, any random order: see
    gptcourse.checking.chapters.attention.dropped_weights_problem). out_proj is the identity, so the
    output is the heads' context vectors. At p = 0.5 a correct module drops no weight at all with
    probability 2 ** -(batch * num_heads * tokens * (tokens + 1) / 2): below 2 ** -40 here."""
    args = {"d_in": d_in, "d_out": d_out, "context_length": tokens, "dropout": dropout,
            "num_heads": num_heads, "qkv_bias": False,
            "steps": [{"feed": chunk, "kwargs": {"use_cache": True}} for chunk in chunks]}
    module = reference_module("6.5", multi_head_arguments, args)
    arrays = {"x": rng.normal(size=(batch, tokens, d_in))}
    arrays.update(module_weights(module, rng))
    arrays.update({"state/out_proj.weight": np.eye(d_out), "state/out_proj.bias": np.zeros(d_out)})
    sizes = chunk_sizes(chunks)
    label = (f"train mode with dropout={dropout}: {batch} x {tokens} tokens in {sizes} "
             f"(use_cache=True); d_in={d_in}, d_out={d_out}, num_heads={num_heads}, {dtype}")
    return Case("6.5", "steps_train", label, args, arrays, dtype)


# ------------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------------


def _extras_6_4(case):
    if case.kind == "sample":
        return {"internals/probs": _outcome_probs(case.args, case.arrays),
                "internals/mistakes": _sampling_mistakes(case.args, case.arrays)}
    if case.kind == "end_token":
        return _end_token_alternatives(case)
    return {}


def _extras_6_5(case):
    if case.kind == "dropout":
        return dropout_internals(case, heads="split")
    if case.kind == "steps_train":
        return attention_internals(case, heads="split")
    return {}


def _end_token_alternatives(case):
    """The book stops before appending the end token that finishes the last row: one token fewer,
    the same rows before their end tokens. Both readings of the contract pass."""
    from grader.grading.expectations import seeded_probe
    from grader.reference import reference_objects

    expected = seeded_probe(reference_objects(case.task), case)
    if expected.get("num_generated", 0) == case.args["max_new_tokens"]:
        return {}
    return {"internals/alternatives": [dict(expected, num_generated=expected["num_generated"] - 1)]}


# ------------------------------------------------------------------------------------------
# Known mistakes (messages complete "... is wrong — it looks like ...")
# ------------------------------------------------------------------------------------------

def _mistakes_6_1():
    return [
        ("the logits are multiplied by the temperature instead of divided by it",
         lambda logits, temperature: torch.softmax(logits * temperature, dim=-1)),
        ("the temperature is not used: divide the logits by it before the softmax",
         lambda logits, temperature: torch.softmax(logits, dim=-1)),
        ("the softmax is taken over the first dimension (dim=0): the vocabulary is the last one, dim=-1",
         lambda logits, temperature: torch.softmax(logits / temperature, dim=0)),
        ("the log-probabilities are returned (log_softmax): return probabilities, torch.softmax",
         lambda logits, temperature: torch.log_softmax(logits / temperature, dim=-1)),
        ("the softmax is written as exp / sum without subtracting the row's maximum: for a small temperature "
         "exp overflows to inf and inf / inf is NaN; use torch.softmax, which is stable",
         lambda logits, temperature: torch.exp(logits / temperature)
         / torch.exp(logits / temperature).sum(dim=-1, keepdim=True)),
    ]


def _mistaken_top_k(mode):
    def top_k_logits(logits, k):
        values, indices = torch.topk(logits, k, dim=-1)
        if mode == "scatter":  # exactly k kept: ties at the k-th value lost
            out = torch.full_like(logits, NEG_INF)
            return out.scatter(-1, indices, values)
        if mode == "strict":
            return logits.masked_fill(logits <= values[..., -1:], NEG_INF)
        if mode == "zero":
            return logits.masked_fill(logits < values[..., -1:], 0.0)
        if mode == "no_keepdim":  # (batch,): broadcasts along the vocabulary, not along each row
            return torch.where(logits < values[:, -1], torch.tensor(NEG_INF), logits)
        if mode == "values":
            return values
        if mode == "smallest":
            low = torch.topk(logits, k, dim=-1, largest=False).values
            return logits.masked_fill(logits > low[..., -1:], NEG_INF)
        if mode == "in_place":
            return logits.masked_fill_(logits < values[..., -1:], NEG_INF)
        if mode == "batch_threshold":  # the smallest top-k value of the whole batch, for every row
            return logits.masked_fill(logits < values.min(), NEG_INF)
        if mode == "kthvalue":  # torch.kthvalue: the k-th smallest value as the threshold
            kth = torch.kthvalue(logits, k, dim=-1, keepdim=True).values
            return logits.masked_fill(logits < kth, NEG_INF)
        if mode == "index_k":  # index k of the descending sort: the (k+1)-th largest
            cutoff = torch.sort(logits, dim=-1, descending=True).values[..., k:k + 1]
            return logits.masked_fill(logits < cutoff, NEG_INF)
        if mode == "dim0":  # topk over the rows of the batch
            kth = torch.topk(logits, k, dim=0).values[-1:]
            return logits.masked_fill(logits < kth, NEG_INF)
        raise ValueError(mode)
    return top_k_logits


def _mistakes_6_2():
    return [
        ("logits equal to the k-th largest are dropped: keep every logit >= the k-th largest value "
         "(ties at the k-th value stay); scattering topk's indices keeps exactly k", _mistaken_top_k("scatter")),
        ("the k-th largest logit itself is removed (<= instead of <): keep logits >= the k-th value",
         _mistaken_top_k("strict")),
        ("the removed logits are set to 0 instead of -inf: 0 still has a probability after the softmax",
         _mistaken_top_k("zero")),
        ("the k-th values are taken as top_values[:, -1], of shape (batch,), which lines up with the "
         "vocabulary dimension instead of the rows: keep the dimension, top_values[..., -1:] (batch, 1)",
         _mistaken_top_k("no_keepdim")),
        ("the k largest values are returned instead of the whole row with the others set to -inf",
         _mistaken_top_k("values")),
        ("the k smallest logits are kept instead of the k largest", _mistaken_top_k("smallest")),
        ("the threshold is the k-th smallest logit: torch.kthvalue(logits, k) counts from the smallest; the "
         "k-th largest is torch.topk(logits, k, dim=-1).values[..., -1:] (or kthvalue(logits, n - k + 1))",
         _mistaken_top_k("kthvalue")),
        ("the threshold is the (k+1)-th largest logit, off by one: in a descending sort the k-th largest is at "
         "index k - 1, sorted[..., k - 1:k], so k + 1 logits stay", _mistaken_top_k("index_k")),
        ("torch.topk is taken over dim=0, the rows of the batch: take the k largest of each row, over the last "
         "dimension (the vocabulary), dim=-1", _mistaken_top_k("dim0")),
        ("one threshold is used for the whole batch (the smallest of all the top-k values): each row needs its "
         "own k-th largest value, top_values[..., -1:]", _mistaken_top_k("batch_threshold")),
    ]


def _mistaken_top_p(mode):
    def top_p_logits(logits, p):
        probs = torch.softmax(logits, dim=0 if mode == "softmax_dim0" else -1)
        if mode == "naive":  # exp / sum without subtracting the maximum: NaN once exp overflows
            probs = naive_softmax(logits)
        if mode == "logits":  # the sorted logits accumulated, no softmax
            probs = logits
        if mode == "unsorted":  # cumulative sum in vocabulary order
            drop = torch.cumsum(probs, dim=-1) - probs >= p
            return logits.masked_fill(drop, NEG_INF)
        sorted_probs, ids = torch.sort(probs, dim=-1, descending=mode != "ascending")
        cumulative = torch.cumsum(sorted_probs, dim=0 if mode == "cumsum_dim0" else -1)
        if mode in ("exclusive", "exclusive_keep_first"):  # drops the token that crosses p
            drop_sorted = cumulative > p
            if mode == "exclusive_keep_first":
                drop_sorted[..., 0] = False
        elif mode == "naive":
            drop_sorted = cumulative - sorted_probs >= p
            drop_sorted[..., 0] = False
        elif mode in ("zero", "no_guard"):  # no_guard: at p = 0 the most probable token goes too
            drop_sorted = cumulative - sorted_probs >= p
        elif mode == "sorted_order":  # the kept logits returned in sorted order
            sorted_logits = torch.gather(logits, -1, ids)
            return sorted_logits.masked_fill(cumulative - sorted_probs >= p, NEG_INF)
        elif mode == "least_probable":
            drop_sorted = cumulative - sorted_probs < p
        elif mode in ("ascending", "logits", "softmax_dim0", "cumsum_dim0", "not_unsorted", "gather_unsort"):
            drop_sorted = cumulative - sorted_probs >= p
        else:
            raise ValueError(mode)
        if mode == "not_unsorted":  # the sorted decision applied in vocabulary order
            return logits.masked_fill(drop_sorted, NEG_INF)
        if mode == "gather_unsort":  # gather applies the permutation again instead of undoing it
            return logits.masked_fill(torch.gather(drop_sorted, -1, ids), NEG_INF)
        drop = torch.zeros_like(drop_sorted).scatter(-1, ids, drop_sorted)
        return logits.masked_fill(drop, 0.0 if mode == "zero" else NEG_INF)
    return top_p_logits


def _mistakes_6_3():
    return [
        # First: it equals the reference except on large logits, where NaN probabilities could
        # otherwise look like another mistake.
        ("the softmax is written by hand as exp(logits) / sum without subtracting each row's maximum: for large "
         "logits exp overflows to inf and inf / inf is NaN; use torch.softmax(logits, dim=-1), which is stable",
         _mistaken_top_p("naive")),
        ("every token is removed when p = 0: the most probable token has a mass of 0 before it, and 0 >= p "
         "then removes it too; keep the first token of the sorted order explicitly, so every row keeps at "
         "least one", _mistaken_top_p("no_guard")),
        ("the token whose probability makes the mass reach p is dropped: keep tokens while the mass "
         "of the tokens ranked above them is still below p", _mistaken_top_p("exclusive_keep_first")),
        ("the token whose probability makes the mass reach p is dropped, and when the most probable token "
         "alone passes p nothing is kept: at least one token must stay", _mistaken_top_p("exclusive")),
        ("the cumulative probability is taken in vocabulary order: sort the probabilities in descending "
         "order first (torch.sort(..., descending=True)) and map the decision back with the sorted indices",
         _mistaken_top_p("unsorted")),
        ("the removed logits are set to 0 instead of -inf: 0 still has a probability after the softmax",
         _mistaken_top_p("zero")),
        ("the logits come back in sorted order: each kept logit must stay in its place in the vocabulary "
         "(scatter the decision back with the indices from torch.sort)", _mistaken_top_p("sorted_order")),
        ("the least probable tokens are kept instead of the most probable", _mistaken_top_p("least_probable")),
        ("the probabilities are sorted in ascending order (torch.sort without descending=True), so the mass is "
         "accumulated from the least probable token and the least probable tokens are kept: sort with "
         "descending=True", _mistaken_top_p("ascending")),
        ("the cumulative sum is taken over the logits instead of their probabilities: apply torch.softmax "
         "(dim=-1) first, and accumulate the sorted probabilities", _mistaken_top_p("logits")),
        ("the softmax is taken over dim=0, across the rows of the batch: each row's probabilities come from "
         "its own logits, softmax over the last dimension (the vocabulary), dim=-1", _mistaken_top_p("softmax_dim0")),
        ("the cumulative sum runs over dim=0, down the rows of the batch: accumulate each row's sorted "
         "probabilities along the last dimension, torch.cumsum(sorted_probs, dim=-1)", _mistaken_top_p("cumsum_dim0")),
        ("the decision made in sorted order is applied to the logits in vocabulary order: map it back to each "
         "token's place with the sorted indices, torch.zeros_like(drop).scatter(-1, sorted_ids, drop)",
         _mistaken_top_p("not_unsorted")),
        ("the sorted decision is mapped back with gather(-1, sorted_ids), which applies the sorting permutation "
         "again instead of undoing it: use scatter(-1, sorted_ids, ...), or gather with sorted_ids.argsort(dim=-1)",
         _mistaken_top_p("gather_unsort")),
    ]


# The known mistakes of generate are the reference with one piece changed, so that the loop is
# written once, in the master (casekit.reference_with_text_replaced, as chapter 05's training loops).
CROP = {"first": "idx[:, :context_size]", False: "idx"}  # the context cut to its first tokens, or not cut
EOS_SEEN = {  # which tokens count as produced: every token of the row, or only this step's
    "all": "finished |= (idx == eos_id).any(dim=1)",
    "step": "finished = idx_next.squeeze(1) == eos_id",
}


def _mistaken_generate(crop=True, no_grad=True, stop="all", eos_scope="new"):
    """The reference generate with one piece changed: the context not cropped or cropped to its
    first tokens (CROP), the model run with gradients, generation stopped when any row has
    produced eos_id or never, or eos_id counted in the prompt or only in this step (EOS_SEEN)."""
    replacements = {}
    if crop is not True:
        replacements["idx_cond = idx[:, -context_size:]"] = f"idx_cond = {CROP[crop]}"
    if not no_grad:
        replacements["with torch.no_grad():"] = "with torch.enable_grad():"
    if stop == "any":
        replacements["if bool(finished.all()):"] = "if bool(finished.any()):"
    if stop == "never":
        replacements["if eos_id is not None:"] = "if False:"
    if eos_scope != "new":
        replacements["finished |= idx_next.squeeze(1) == eos_id"] = EOS_SEEN[eos_scope]
    return reference_with_text_replaced("6.4", "generate", replacements)


def _mistakes_6_4():
    return [
        ("the context is not cropped: the model sees only the last context_size tokens, idx[:, -context_size:]",
         _mistaken_generate(crop=False)),
        ("an end token already in the prompt counts as produced: only the tokens generate adds count",
         _mistaken_generate(eos_scope="all")),
        ("generation stops as soon as one row has produced eos_id: stop only when every row has",
         _mistaken_generate(stop="any")),
        ("generation did not stop although every row had produced eos_id, at different steps: only the current "
         "step's tokens are checked ((idx_next == eos_id).all()); remember which rows have produced it "
         "(finished |= (idx_next == eos_id).squeeze(-1)) and stop once every row has", _mistaken_generate(eos_scope="step")),
        ("eos_id is ignored: stop once every row has produced it", _mistaken_generate(stop="never")),
        ("the context is cropped to its first context_size tokens: the model must see the last ones, "
         "idx[:, -context_size:] (the newest tokens are at the end)", _mistaken_generate(crop="first")),
        ("the model runs with gradients enabled: call it inside `with torch.no_grad():`",
         _mistaken_generate(no_grad=False)),
    ]


def _cache_forward(mask="offset", keep_cache=True, concatenate=True, store_last=False, attend_to_own=False,
                   new_first=False):
    """The reference's forward with one thing about the cache changed (attend_to_own: the cache
    is filled and checked, but each chunk attends only to its own keys and values)."""
    def forward(self, x, use_cache=False):
        b, num_tokens, _ = x.shape
        queries, keys, values = (self._split_heads(layer(x)) for layer in (self.W_query, self.W_key, self.W_value))
        start = 0
        if use_cache and keep_cache:
            if self.cache_k is not None:
                start = self.cache_k.shape[2]
            if start + num_tokens > self.context_length:
                raise ValueError("past context_length")
            new = keys, values
            if self.cache_k is not None and concatenate:  # new_first: the new tokens before the cached ones
                keys, values = (torch.cat((fresh, cached) if new_first else (cached, fresh), dim=2)
                                for cached, fresh in ((self.cache_k, keys), (self.cache_v, values)))
            self.cache_k, self.cache_v = new if store_last else (keys, values)
            if attend_to_own:
                (keys, values), start = new, 0
        total = keys.shape[2]
        scores = queries @ keys.transpose(2, 3)
        if mask == "offset":
            scores = scores.masked_fill(self.mask.bool()[start:start + num_tokens, :total], NEG_INF)
        elif mask == "from_zero":  # rows 0..num_tokens of the mask, whatever the cache holds
            scores = scores.masked_fill(self.mask.bool()[:num_tokens, :total], NEG_INF)
        elif mask == "one_early":  # after cached tokens, the rows one position early
            first = max(start - 1, 0)
            scores = scores.masked_fill(self.mask.bool()[first:first + num_tokens, :total], NEG_INF)
        elif mask == "new_only" and num_tokens > 1:  # masked only when nothing is cached
            if start == 0:
                scores = scores.masked_fill(self.mask.bool()[:num_tokens, :num_tokens], NEG_INF)
        weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
        return self.out_proj((weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out))
    return forward


def _no_bounds_check(self, x, use_cache=False):
    """The cache grows past context_length without a check: the mask slice fails inside PyTorch."""
    b, num_tokens, _ = x.shape
    queries, keys, values = (self._split_heads(layer(x)) for layer in (self.W_query, self.W_key, self.W_value))
    start = 0
    if use_cache:
        if self.cache_k is not None:
            start = self.cache_k.shape[2]
            keys = torch.cat((self.cache_k, keys), dim=2)
            values = torch.cat((self.cache_v, values), dim=2)
        self.cache_k, self.cache_v = keys, values
    scores = (queries @ keys.transpose(2, 3)).masked_fill(
        self.mask.bool()[start:start + num_tokens, :start + num_tokens], NEG_INF)
    weights = self.dropout(torch.softmax(scores / self.head_dim ** 0.5, dim=-1))
    return self.out_proj((weights @ values).transpose(1, 2).contiguous().view(b, num_tokens, self.d_out))


def _mistakes_6_5():
    cache = lambda **o: subclass_with("6.5", forward=_cache_forward(**o))  # noqa: E731
    return [
        ("a chunk after cached tokens uses the mask's first rows: the new queries sit at positions "
         "start .. start + num_tokens - 1, so take the mask's rows start:start + num_tokens "
         "(and its columns :start + num_tokens)", cache(mask="from_zero")),
        ("a chunk of several tokens after cached ones is not masked: its queries must not see the keys of "
         "the chunk's later tokens", cache(mask="new_only")),
        ("after cached tokens the mask's rows are taken one position early (from start - 1): each new query is "
         "masked as the token before it, so it cannot see its own key; take the rows start:start + num_tokens",
         cache(mask="one_early")),
        ("the new keys and values are put before the cached ones: torch.cat((self.cache_k, keys), dim=2) keeps "
         "the tokens in their order, which the mask's columns follow (and so does the stored cache)",
         cache(new_first=True)),
        ("each chunk attends only to itself: the keys and values of earlier chunks are not used; "
         "compute the attention with the concatenation of cache_k and the chunk's keys (and of cache_v and its "
         "values), with the mask's rows start:start + num_tokens",
         cache(attend_to_own=True)),
        ("the cache is never filled or read: with use_cache=True, concatenate the chunk's keys and values to "
         "cache_k and cache_v, store the result, and compute the attention with all of them (the mask's rows "
         "start:start + num_tokens); and check that the cached tokens and the new ones fit in context_length",
         cache(keep_cache=False)),
        ("the cache keeps only the latest chunk's keys and values: store the concatenation of the cached keys and "
         "values and the new ones, torch.cat((self.cache_k, keys), dim=2), not the new ones alone",
         cache(store_last=True)),
        ("the new keys and values are never joined to the cached ones: concatenate them along the token "
         "dimension, torch.cat((self.cache_k, keys), dim=2), attend to all of them and store the result",
         cache(concatenate=False)),
        ("running past context_length fails inside PyTorch instead of with your own clear error: check "
         "that the cached tokens plus the new ones fit and raise (ValueError) saying so",
         subclass_with("6.5", forward=_no_bounds_check)),
    ] + [(message, subclass_with("6.5", forward=forward)) for message, forward in multi_head_mistakes(cache=True)]


# ------------------------------------------------------------------------------------------
# Each task's cases (public and hidden) and known mistakes, in one place (grader/chapters/__init__.py: GraderSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "6.1": GraderSpec(
        public=lambda rng: [
            _temperature_case(rng, None, 1.0, logits=BOOK_LOGITS),
            _temperature_case(rng, None, 0.1, logits=BOOK_LOGITS),
            _temperature_case(rng, (3, 7), 5.0),
            _temperature_case(rng, (2, 6), 0.7, minus_inf=2),
            _temperature_case(rng, (2, 5), 0.01, scale=3.0),
        ],
        hidden=lambda rng: [
            _temperature_case(rng, (4, 11), 0.01, dtype="float64", scale=5.0),
            _temperature_case(rng, (2, 3, 6), 50.0),
            _temperature_case(rng, (5,), 0.003, scale=3.0),
            _temperature_case(rng, (3, 9), 1.0, dtype="float64", minus_inf=3),
            _temperature_case(rng, (2, 12), 0.02, scale=4.0, minus_inf=1),
        ],
        mistakes=_mistakes_6_1),
    "6.2": GraderSpec(
        public=lambda rng: [
            _top_k_case(rng, None, 3, logits=BOOK_LOGITS),
            _top_k_case(rng, (4, 10), 3),
            _top_k_case(rng, (3, 8), 2, ties=True),
        ],
        hidden=lambda rng: [
            _top_k_case(rng, (6, 12), 1, dtype="float64"),
            _top_k_case(rng, (3, 8), 8),
            _top_k_case(rng, (5, 9), 4, ties=True, dtype="float64"),
            _top_k_case(rng, (4, 7), 5, minus_inf=3),
            _top_k_case(rng, (2, 3, 9), 3),
            _top_k_case(rng, (11,), 11, ties=True),
        ],
        mistakes=_mistakes_6_2),
    "6.3": GraderSpec(
        public=lambda rng: [
            _top_p_case(rng, (9,), 0.6),
            _top_p_case(rng, (4, 10), 0.8),
            _top_p_case(rng, (3, 8), 0.01),
            _top_p_case(rng, (3, 7), 0.0),
        ],
        hidden=lambda rng: [
            _top_p_case(rng, (6, 12), 0.5, dtype="float64"),
            _top_p_case(rng, (4, 9), 0.001),
            _top_p_case(rng, (5, 10), 0.9, peaked=True),
            _top_p_case(rng, (3, 8), 0.75, minus_inf=3, dtype="float64"),
            _top_p_case(rng, (2, 3, 7), 0.6, scale=0.5),
            _top_p_case(rng, (12,), 0.95, scale=1.0),
            _top_p_case(rng, (4, 9), 0.0, dtype="float64"),
            _top_p_case(rng, (2, 3, 6), 0.0, peaked=True),
            _top_p_case(rng, (3, 8), 0.8, offset=100.0),
        ],
        mistakes=_mistakes_6_3),
    "6.4": GraderSpec(
        public=lambda rng: [
            _greedy_case(rng, batch=2, tokens=4, max_new_tokens=3, context_size=3),
            _greedy_case(rng, batch=1, tokens=3, max_new_tokens=4, context_size=8, temperature=0.0, top_k=3),
            _end_token_case(rng, batch=1, tokens=3, max_new_tokens=7, context_size=4),
            _end_token_case(rng, batch=3, tokens=2, max_new_tokens=8, context_size=4),
            _end_token_case(rng, batch=2, tokens=3, max_new_tokens=8, context_size=4, eos_in_prompt=True),
            _sample_case(rng, temperature=1.0),
            _sample_case(rng, temperature=0.5, top_k=3),
            _sample_case(rng, temperature=1.2, top_p=0.6),
            _order_case(rng),
        ],
        hidden=lambda rng: [
            _greedy_case(rng, batch=3, tokens=6, max_new_tokens=5, context_size=2, temperature=0.0, top_p=0.5),
            _greedy_case(rng, batch=1, tokens=2, max_new_tokens=4, context_size=10),
            _greedy_case(rng, batch=2, tokens=5, max_new_tokens=0, context_size=3),
            _end_token_case(rng, batch=4, tokens=3, max_new_tokens=10, context_size=3),
            _end_token_case(rng, batch=3, tokens=2, max_new_tokens=6, context_size=5, all_finish=False),
            _end_token_case(rng, batch=2, tokens=3, max_new_tokens=9, context_size=4, eos_in_prompt=True),
            _end_token_case(rng, batch=1, tokens=4, max_new_tokens=7, context_size=3),
            _sample_case(rng, vocab=5, max_new_tokens=2, temperature=1.0),
            _sample_case(rng, temperature=1.5, top_p=0.7),
            _sample_case(rng, vocab=5, max_new_tokens=2, temperature=0.8, top_k=2, top_p=0.9),
            _order_case(rng),
        ],
        mistakes=_mistakes_6_4,
        extras=_extras_6_4),
    "6.5": GraderSpec(
        public=lambda rng: [
            _attention(rng, batch=2, tokens=6, d_in=3, d_out=4),
            _attention(rng, batch=1, tokens=4, d_in=5, d_out=6, num_heads=3, context_length=7, qkv_bias=True),
            _attention(rng, kind="dropout", batch=2, tokens=5, d_in=4, d_out=4, dropout=0.5),
            _attention(rng, kind="raises", d_in=4, d_out=5, context_length=6),
            _steps_case(rng, batch=2, tokens=6, d_in=3, d_out=4, num_heads=2, context_length=7, one_by_one=True),
            _steps_case(rng, batch=1, tokens=7, d_in=4, d_out=6, num_heads=3, context_length=8,
                        chunks=[[0, 3], [3, 4], [4, 7]], straddle=True),
            _steps_case(rng, batch=2, tokens=5, d_in=3, d_out=4, num_heads=2, context_length=6, dropout=0.5,
                        chunks=[[0, 2], [2, 3], [3, 5]]),
            _train_steps_case(rng, batch=2, tokens=6, d_in=3, d_out=4, num_heads=2, chunks=[[0, 2], [2, 3], [3, 6]]),
        ],
        hidden=lambda rng: [
            _attention(rng, batch=3, tokens=5, d_in=4, d_out=6, num_heads=1, context_length=9, qkv_bias=True),
            _attention(rng, batch=2, tokens=6, d_in=3, d_out=6, num_heads=3, dropout=0.3, dtype="float64"),
            _attention(rng, batch=2, tokens=5, d_in=4, d_out=6, num_heads=2, qkv_bias=True, dtype="float64", large_scores=25.0),
            _attention(rng, kind="dropout", batch=2, tokens=4, d_in=3, d_out=6, num_heads=3, context_length=6,
                       dropout=0.5),
            _attention(rng, kind="raises", d_in=3, d_out=7, num_heads=3, context_length=6),
            _steps_case(rng, batch=3, tokens=8, d_in=4, d_out=6, num_heads=2, context_length=9, dtype="float64"),
            _steps_case(rng, batch=1, tokens=5, d_in=3, d_out=4, num_heads=1, context_length=5, qkv_bias=True,
                        chunks=[[0, 1], [1, 5]]),
            _steps_case(rng, batch=2, tokens=9, d_in=5, d_out=8, num_heads=4, context_length=10,
                        chunks=[[0, 4], [4, 5], [5, 6], [6, 9]], straddle=True),
            _steps_case(rng, batch=3, tokens=6, d_in=4, d_out=6, num_heads=3, context_length=7, dropout=0.3,
                        dtype="float64"),
            _steps_case(rng, batch=2, tokens=5, d_in=4, d_out=6, num_heads=2, context_length=6, qkv_bias=True,
                        dtype="float64", large_scores=25.0),
            _train_steps_case(rng, batch=3, tokens=5, d_in=4, d_out=6, num_heads=3, chunks=[[0, 1], [1, 2], [2, 5]],
                              dtype="float64"),
        ],
        mistakes=_mistakes_6_5,
        extras=_extras_6_5),
}
