"""The class challenge of chapter 05: the best Shakespeare model on a fixed budget.

The rules, the same for everyone:
- **Data:** tinyshakespeare, tokenized with GPT-2's tokenizer. The first 90 % of its tokens are
  for training; of the last 10 %, the first half is the *public* validation text (the notebook's
  dry run scores on it) and the second half the *private* one, which only the grader reads.
- **Budget:** BUDGET_TOKENS distinct training tokens. The loader hands out batches in an order
  fixed by the challenge (not by the entry), and no more than the budget allows: len(loader)
  batches of the entry's batch size and context length. Iterating it again replays the same
  batches (more epochs cost time, not tokens).
- **Cap:** at most MAX_PARAMETERS parameters in the course's GPTModel shape (the vocabulary is
  GPT-2's 50,257 tokens), and TIME_LIMIT_S seconds of training on one CPU core.
- **Score:** the mean cross-entropy of the trained model on the private text, computed by the
  grader in its own process with the course's GPTModel and loss code, after training ends.

Why these numbers: on one core of the course machines (2-core Xeon VMs, torch 2.13 on the CPU)
the baseline entry (3.2 million parameters, nearly all of them in the embedding and the output
head over GPT-2's 50,257 tokens) trains its budget in 55 to 60 seconds, and a model at the cap
(emb_dim 39: 3,959,904 parameters) in 61. The time limit leaves room for a second pass over the
budget, and for a machine 2.5 times slower. A smaller model is faster but learns less per token;
more epochs cost time, not budget: those trades are the challenge.

An entry is a dict (the notebook's `challenge_entry` cell); `check_entry` says what is wrong
with one before it is submitted, and `dry_run` trains it in the notebook the way the grader will.
The grader's side is `python -m grader leaderboard` (grader/outputs/leaderboard.py).
"""
import math
import random
import time

import torch

from gptcourse.messages import say

DATA = "tinyshakespeare"
VOCAB_SIZE = 50257  # GPT-2's tokenizer: fixed
BUDGET_TOKENS = 65_536
MAX_PARAMETERS = 4_000_000
TIME_LIMIT_S = 180
# Memory the entry's training may use beyond torch itself: the logits of a batch take
# batch_size x context_length x 50,257 x 4 bytes, and their gradient as much again, so batches of
# more than about 2,000 tokens run out of it.
MEMORY_MB = 3072
MAX_ENTRY_CHARS = 20_000  # the entry's cell: room for a training function, not for text or weights
TRAIN_SHARE = 0.9
QUICK_BATCHES = 4  # the dry run while nbgrader runs the notebook, or with GPTCOURSE_QUICK_RUN set
ORDER_SEED = 2026  # the order of the training batches: the challenge's, the same for every entry

# The settings an entry gives, with the baseline's values (what the notebook starts from).
BASELINE = {
    "model": {"emb_dim": 32, "n_layers": 2, "n_heads": 2, "context_length": 64, "drop_rate": 0.0, "qkv_bias": False},
    "batch_size": 8,
    "num_epochs": 1,
    "peak_lr": 5e-3,
    "initial_lr": 1e-4,
    "min_lr": 1e-4,
    "warmup_steps": 10,
    "weight_decay": 0.1,
    "seed": 123,
}
MODEL_KEYS = {"emb_dim", "n_layers", "n_heads", "context_length", "drop_rate", "qkv_bias"}
# (low, high) of every number an entry gives; the shape must also fit the cap.
LIMITS = {"emb_dim": (8, 1024), "n_layers": (1, 12), "n_heads": (1, 64), "context_length": (8, 512),
          "drop_rate": (0.0, 0.9), "batch_size": (1, 512), "num_epochs": (1, 20), "peak_lr": (1e-6, 1.0),
          "initial_lr": (0.0, 1.0), "min_lr": (0.0, 1.0), "warmup_steps": (0, 10_000),
          "weight_decay": (0.0, 1.0), "seed": (0, 2**31 - 1)}


class EntryProblem(ValueError):
    """What is wrong with an entry, in one sentence for the student."""


# ------------------------------------------------------------------------------------------
# The data: splits and the order of the batches
# ------------------------------------------------------------------------------------------

def token_ids():
    """tinyshakespeare as GPT-2 token ids (from the course's data mirror or cache)."""
    from gptcourse import data
    from gptcourse.tokenizer import get_encoding

    return get_encoding().encode(data.read_text(DATA))


def splits(ids):
    """{"train", "public", "private"}: the token ids of each part (lists)."""
    train_end = int(len(ids) * TRAIN_SHARE)
    middle = train_end + (len(ids) - train_end) // 2
    return {"train": ids[:train_end], "public": ids[train_end:middle], "private": ids[middle:]}


def batch_starts(train_length, batch_size, context_length, budget=BUDGET_TOKENS):
    """The start of every training window the budget allows, in the challenge's order, one list per
    batch: non-overlapping windows of the training text, shuffled with ORDER_SEED."""
    windows = list(range(0, train_length - context_length - 1, context_length))
    random.Random(ORDER_SEED).shuffle(windows)
    batches = min(budget // (batch_size * context_length), len(windows) // batch_size)
    return [windows[i * batch_size:(i + 1) * batch_size] for i in range(batches)]


def make_batch(ids, starts, context_length):
    """(inputs, targets) of the windows starting at `starts`: targets are the inputs shifted by one."""
    rows = torch.tensor([ids[s:s + context_length + 1] for s in starts], dtype=torch.long)
    return rows[:, :-1], rows[:, 1:]


class BudgetLoader:
    """The training batches of an entry, as a DataLoader would give them (len() and iteration).

    fetch(i) returns batch i; a batch already fetched is kept, so iterating again (another epoch,
    or train_model's evaluation on the training loader) replays it without spending more budget."""

    def __init__(self, count, fetch):
        self._count, self._fetch, self._kept = count, fetch, {}

    def __len__(self):
        return self._count

    def __iter__(self):
        for index in range(self._count):
            if index not in self._kept:
                self._kept[index] = self._fetch(index)
            yield self._kept[index]


class ListLoader:
    """A few fixed batches with len() and iteration (the validation loader train_model gets)."""

    def __init__(self, batches):
        self._batches = list(batches)

    def __len__(self):
        return len(self._batches)

    def __iter__(self):
        return iter(self._batches)


# ------------------------------------------------------------------------------------------
# Entries
# ------------------------------------------------------------------------------------------

def model_config(entry):
    """The GPTModel configuration of an entry: its shape with GPT-2's vocabulary."""
    return {"vocab_size": VOCAB_SIZE, **{key: entry["model"][key] for key in sorted(MODEL_KEYS)}}


def parameter_count(cfg):
    """The parameters of the course's GPTModel of this configuration (embeddings, blocks with
    attention and feed-forward, norms, output head without bias)."""
    d, vocab, layers = cfg["emb_dim"], cfg["vocab_size"], cfg["n_layers"]
    attention = 3 * d * d + (3 * d if cfg["qkv_bias"] else 0) + d * d + d  # query, key, value; out_proj
    feed_forward = d * 4 * d + 4 * d + 4 * d * d + d
    norms = 2 * 2 * d
    return vocab * d + cfg["context_length"] * d + layers * (attention + feed_forward + norms) + 2 * d + d * vocab


def check_entry(entry):
    """None when the entry is well-formed and within the cap; EntryProblem otherwise."""
    if not isinstance(entry, dict):
        raise EntryProblem(f"challenge_entry should be a dict like gptcourse.challenge.BASELINE, not a {type(entry).__name__}")
    missing = sorted(set(BASELINE) - set(entry))
    unknown = sorted(set(entry) - set(BASELINE))
    if missing or unknown:
        raise EntryProblem("challenge_entry " + "; ".join(
            part for part in (f"lacks {', '.join(missing)}" if missing else "",
                              f"has settings the challenge does not know: {', '.join(unknown)}" if unknown else "")
            if part))
    model = entry["model"]
    if not isinstance(model, dict) or set(model) != MODEL_KEYS:
        raise EntryProblem(f"challenge_entry['model'] should give exactly {', '.join(sorted(MODEL_KEYS))}")
    if not isinstance(model["qkv_bias"], bool):
        raise EntryProblem("challenge_entry['model']['qkv_bias'] should be True or False")
    for key, (low, high) in LIMITS.items():
        value = model[key] if key in MODEL_KEYS else entry[key]
        whole = key not in ("drop_rate", "peak_lr", "initial_lr", "min_lr", "weight_decay")
        if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)) or not low <= value <= high:
            kind = "a whole number" if whole else "a number"
            raise EntryProblem(f"{key} should be {kind} from {low:g} to {high:g}, not {value!r}")
    if model["emb_dim"] % model["n_heads"]:
        raise EntryProblem(f"emb_dim ({model['emb_dim']}) must be a multiple of n_heads ({model['n_heads']})")
    count = parameter_count(model_config(entry))
    if count > MAX_PARAMETERS:
        raise EntryProblem(f"this model has {count:,} parameters, over the cap of {MAX_PARAMETERS:,} (the embedding "
                           f"and the output head take 2 x 50,257 x emb_dim of them)")
    if entry["batch_size"] * model["context_length"] > BUDGET_TOKENS:
        raise EntryProblem(f"one batch ({entry['batch_size']} x {model['context_length']} tokens) is more than the "
                           f"whole budget of {BUDGET_TOKENS:,} tokens")


# ------------------------------------------------------------------------------------------
# Training an entry, and scoring a model
# ------------------------------------------------------------------------------------------

def train_entry(entry, namespace, loader, validation, on_model=None, tokenizer=None, start_context=""):
    """Train the entry's model the way the grader does: its GPTModel and train_model are those
    of `namespace` (the course's, or the student's own), the model starts from the entry's seed,
    AdamW at its peak rate, on the CPU. on_model(model) is called once the model is made.
    Returns the trained model."""
    cfg = model_config(entry)
    torch.manual_seed(entry["seed"])
    model = namespace["GPTModel"](cfg)
    if on_model is not None:
        on_model(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=entry["peak_lr"], weight_decay=entry["weight_decay"])
    # eval_freq past the last step: train_model evaluates once, at its first step, on one batch each.
    namespace["train_model"](model, loader, validation, optimizer, torch.device("cpu"),
                             num_epochs=entry["num_epochs"], eval_freq=10**9, eval_iter=1,
                             start_context=start_context, tokenizer=tokenizer, warmup_steps=entry["warmup_steps"],
                             initial_lr=entry["initial_lr"], min_lr=entry["min_lr"])
    return model


def validation_batch(parts, entry, starts):
    """The one batch that train_model's evaluation gets as its validation loader: the first
    training batch, which the budget has handed out anyway (no token of validation text reaches
    the entry's training)."""
    return make_batch(parts["train"], starts[0], entry["model"]["context_length"])


@torch.no_grad()
def mean_loss(model, ids, context_length, batch_size=32, max_tokens=None):
    """The mean cross-entropy of the next-token predictions over non-overlapping windows of `ids`
    (the first max_tokens of them, when given), in eval mode."""
    ids = ids[:max_tokens] if max_tokens else ids
    starts = list(range(0, len(ids) - context_length - 1, context_length))
    model.eval()
    total, count = 0.0, 0
    for i in range(0, len(starts), batch_size):
        inputs, targets = make_batch(ids, starts[i:i + batch_size], context_length)
        logits = model(inputs)
        total += torch.nn.functional.cross_entropy(logits.flatten(0, 1), targets.flatten(), reduction="sum").item()
        count += targets.numel()
    return total / count if count else math.nan


def dry_run(entry, namespace):
    """Train the entry in this notebook as the grader will (the same batches, the same budget) and
    score it on the public validation text; prints what the grader's line will say. The grader
    runs it again, in a sandbox, and scores it on the private text."""
    check_entry(entry)
    ids = token_ids()
    parts = splits(ids)
    context_length = entry["model"]["context_length"]
    starts = batch_starts(len(parts["train"]), entry["batch_size"], context_length)
    if _quick():  # nbgrader, or GPTCOURSE_QUICK_RUN: a few batches show the path, not the score
        starts = starts[:QUICK_BATCHES]
        say(f"(a quick run: {QUICK_BATCHES} batches instead of the budget's)")
    loader = BudgetLoader(len(starts), lambda i: make_batch(parts["train"], starts[i], context_length))
    began = time.perf_counter()
    from gptcourse.tokenizer import get_encoding

    model = train_entry(entry, namespace, loader, ListLoader([validation_batch(parts, entry, starts)]),
                        tokenizer=get_encoding(), start_context="ROMEO:")
    seconds = time.perf_counter() - began
    loss = mean_loss(model, parts["public"], context_length)
    say(f"public validation loss {loss:.4f} after {len(starts) * entry['batch_size'] * context_length:,} tokens, "
          f"{parameter_count(model_config(entry)):,} parameters, {seconds:.0f} s of training")
    return loss


# Set by the course's test of the masters, which runs chapter 05's training in full: the dry run's
# path in a few batches (its full run is compared with the grader's at a small budget elsewhere).
QUICK_CHALLENGE_ENV_VAR = "GPTCOURSE_QUICK_CHALLENGE"


def _quick():
    """Whether the dry run should be a quick one: as gptcourse.pretrain.pick_run decides, or
    with GPTCOURSE_QUICK_CHALLENGE set."""
    import os

    from gptcourse.notebook import being_graded
    from gptcourse.pretrain import QUICK_ENV_VAR

    return bool(os.environ.get(QUICK_ENV_VAR) or os.environ.get(QUICK_CHALLENGE_ENV_VAR)) or being_graded()
