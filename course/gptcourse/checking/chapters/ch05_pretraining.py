"""Chapter 05, pretraining: its tasks, their probes and the hints.

The losses (5.2, 5.3) run on a tiny language model (gptcourse.checking.chapters.toys), so that the self-check does
not depend on the student's own GPTModel; the hidden cases use a small GPTModel as well.
The batches are handed over on the CPU and the device pass runs the model on PyTorch's
"meta" device: a batch that is never moved to `device` is caught without a GPU.

The training loops (5.4, 5.7) train a small model for a few steps in float64, so that any
correct loop gives the reference's parameters to many digits; a hook notes the mode and the
gradient mode of every forward call, and the optimizer notes the learning rate and the
gradient norm at every step (kinds.TrainingLoop).
"""
import math
import pickle

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

from gptcourse.checking import kinds
from gptcourse.checking.chapters import TaskSpec
from gptcourse.checking.chapters.toys import GPT2Shaped, TinyLanguageModel
from gptcourse.checking.contract import Contract, ReferenceValue
from gptcourse.tokenizer import GPT2_FILES

CHAPTER = "05_pretraining"
# The data sets that grading this chapter reads (its cases, its setup cell, its probes): the grader
# checks that they can be had before it grades anything (grader/grading/preflight.py).
GRADING_DATA = GPT2_FILES


# ------------------------------------------------------------------------------------------
# The model a case describes: the losses and the training loops run on it
# ------------------------------------------------------------------------------------------

def _model(probe, name="model"):
    """The model a case describes: the tiny one, or a small GPTModel (the reference's in grading),
    with the case's weights, on the case's device and dtype, in eval mode."""
    args = probe.case.args
    if args.get("model", "tiny") == "tiny":
        model = TinyLanguageModel(args["vocab_size"], args["context_length"], args["emb_dim"])
    else:
        model = probe.name("GPTModel")(dict(args["cfg"]))
    return probe.module_input(name, model)


def _cpu_ids(probe, name, shown_as=None):
    """Token ids as a data loader hands them over: int64 on the CPU, whatever the device (on the
    device pass, one that is never moved is reported by its name)."""
    return probe.cpu_input(name, shown_as)


# ------------------------------------------------------------------------------------------
# 5.1 Text to token ids and back
# ------------------------------------------------------------------------------------------

def encode_arguments(probe):
    return [probe.case.args["text"], probe.ctx.tokenizer], {}


def decode_arguments(probe):
    return [probe.input("ids"), probe.ctx.tokenizer], {}


def record_round_trip(probe):
    """Whether the ids are integers (an embedding needs them so), and the text back from
    text_to_token_ids through token_ids_to_text."""
    ids = probe.name("text_to_token_ids")(probe.case.args["text"], probe.ctx.tokenizer)
    is_integer = isinstance(ids, torch.Tensor) and not ids.is_floating_point() and not ids.is_complex()
    probe.record_value("ids_are_integers", is_integer, "whether the ids are an integer tensor")
    probe.step = "turning the ids back into text with token_ids_to_text"
    probe.record_value("round_trip", probe.name("token_ids_to_text")(ids, probe.ctx.tokenizer), "the text after a round trip")


# ------------------------------------------------------------------------------------------
# 5.2 and 5.3 The losses
# ------------------------------------------------------------------------------------------

def batch_loss_arguments(probe):
    """calc_loss_batch(input_batch, target_batch, model, device): batches on the CPU."""
    model = _model(probe)
    return [_cpu_ids(probe, "inputs", "input_batch"), _cpu_ids(probe, "targets", "target_batch"), model, probe.case.device], {}


def loader_loss_arguments(probe):
    """calc_loss_loader(data_loader, model, device[, num_batches]): a loader on the CPU."""
    args = probe.case.args
    dataset = TensorDataset(_cpu_ids(probe, "inputs"), _cpu_ids(probe, "targets"))
    loader = DataLoader(dataset, batch_size=args["batch_size"], shuffle=False)
    model = _model(probe)
    keywords = {"num_batches": args["num_batches"]} if "num_batches" in args else {}
    return [loader, model, probe.case.device], keywords


# ------------------------------------------------------------------------------------------
# 5.4 and 5.7 The training loops
# ------------------------------------------------------------------------------------------

def build_training(probe):
    """A small model in float64 with the case's weights, AdamW, and two loaders that do not
    shuffle (train and validation), built from the case. With args["decay_groups"] the optimizer
    has two parameter groups, as many GPT training scripts make them: the linear layers' weights
    with weight decay, the embeddings, norms and biases without. A schedule must set the rate of
    both."""
    args = probe.case.args
    model = _model(probe)
    model.train()
    if args.get("decay_groups"):
        def decays(name, param):
            return param.dim() >= 2 and "emb" not in name

        named = list(model.named_parameters())
        groups = [{"params": [param for name, param in named if decays(name, param)],
                   "weight_decay": args["weight_decay"]},
                  {"params": [param for name, param in named if not decays(name, param)], "weight_decay": 0.0}]
        optimizer = torch.optim.AdamW(groups, lr=args["lr"])
    else:
        optimizer = torch.optim.AdamW(model.parameters(), lr=args["lr"], weight_decay=args["weight_decay"])

    def loader(prefix):
        dataset = TensorDataset(_cpu_ids(probe, f"{prefix}_inputs"), _cpu_ids(probe, f"{prefix}_targets"))
        # Every iter(loader) draws a seed, from the loader's own generator here: a loop that goes
        # through a loader more often than the reference (to count its tokens first, say) must
        # not shift the dropout masks that the global generator gives the training steps.
        return DataLoader(dataset, batch_size=args["batch_size"], shuffle=False,
                          generator=torch.Generator().manual_seed(0))

    return {"model": model, "optimizer": optimizer, "train_loader": loader("train"), "val_loader": loader("val")}


def _loop_arguments(probe, o):
    args = probe.case.args
    return [o["model"], o["train_loader"], o["val_loader"], o["optimizer"], probe.case.device, args["num_epochs"],
            args["eval_freq"], args["eval_iter"], args["start_context"], probe.ctx.tokenizer]


def call_train_model_simple(probe, fn, o):
    return fn(*_loop_arguments(probe, o))


def call_train_model(probe, fn, o):
    args = probe.case.args
    keywords = {"initial_lr": args["initial_lr"], "min_lr": args["min_lr"]}
    return fn(*_loop_arguments(probe, o), args["warmup_steps"], **keywords)


# ------------------------------------------------------------------------------------------
# 5.5 Checkpoints
# ------------------------------------------------------------------------------------------

def _optimizer_state(optimizer):
    """The optimizer's state as plain data: per parameter (in order) its tensors and step."""
    state = optimizer.state_dict()
    plain = {"param_groups": [{k: v for k, v in group.items() if k != "params"} for group in state["param_groups"]]}
    for index, values in sorted(state["state"].items()):
        for key, value in values.items():
            plain[f"state/{index}/{key}"] = value.detach().double().numpy() if torch.is_tensor(value) else value
    return plain


def _trained_model(probe, name):
    """A small model with the case's weights and an AdamW that has taken two steps (so its
    state holds moments), both from the case."""
    model = _model(probe, name)
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=probe.case.args["lr"])
    ids = _cpu_ids(probe, "inputs").to(probe.device)  # the test's own training, beside the model
    for _ in range(2):
        optimizer.zero_grad()
        logits = model(ids)
        nn.functional.cross_entropy(logits.flatten(0, 1), ids.roll(-1, 1).flatten()).backward()
        optimizer.step()
    return model, optimizer


def write_checkpoint(probe, save, path):
    probe.kept["saved_model"], probe.kept["saved_optimizer"] = _trained_model(probe, "model")
    save(probe.kept["saved_model"], probe.kept["saved_optimizer"], path)


def read_checkpoint(probe, load, path):
    """Load into a fresh model (other weights) and a fresh optimizer; what they hold afterwards."""
    args = probe.case.args
    model = TinyLanguageModel(args["vocab_size"], args["context_length"], args["emb_dim"]).to(probe.dtype)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1.0) if args["with_optimizer"] else None
    if optimizer is not None:
        load(path, model, optimizer)
    else:
        load(path, model)
    restored = {f"model/{name}": value.detach().double().numpy() for name, value in model.state_dict().items()}
    if optimizer is not None:
        restored.update({f"optimizer/{k}": v for k, v in _optimizer_state(optimizer).items()})
    return restored


class UnsafeOnLoad:
    """A pickled object that notes it was unpickled: what a malicious checkpoint would run."""

    ran = []

    def __reduce__(self):
        return (_note_unpickled, ("the checkpoint's pickled object ran",))


def _note_unpickled(message):
    UnsafeOnLoad.ran.append(message)
    return message


def _with_pickled_object(checkpoint):
    """The student's checkpoint with an object added that runs code when unpickled."""
    if isinstance(checkpoint, dict):
        return {**checkpoint, "note": UnsafeOnLoad()}
    if isinstance(checkpoint, (list, tuple)):
        return [*checkpoint, UnsafeOnLoad()]
    return {"checkpoint": checkpoint, "note": UnsafeOnLoad()}


def write_unsafe_checkpoint(probe, save, path):
    model, optimizer = _trained_model(probe, "model")
    save(model, optimizer, path)
    # The file was written by save_checkpoint just now: reading it back in full is safe here.
    checkpoint = torch.load(path, weights_only=False)
    torch.save(_with_pickled_object(checkpoint), path)


def read_unsafe_checkpoint(probe, load, path):
    """Whether loading ran the pickled object, and whether the load refused the file."""
    args = probe.case.args
    model = TinyLanguageModel(args["vocab_size"], args["context_length"], args["emb_dim"]).to(probe.dtype)
    UnsafeOnLoad.ran.clear()
    try:
        load(path, model)
        refused = False
    except pickle.UnpicklingError:
        refused = True
    return {"ran_pickled_code": bool(UnsafeOnLoad.ran), "refused": refused}


# ------------------------------------------------------------------------------------------
# 5.6 Loading GPT-2 weights in the Hugging Face layout
# ------------------------------------------------------------------------------------------

def hf_state_dict(probe):
    """The case's GPT-2 checkpoint: tensors named as in Hugging Face's model.safetensors."""
    return {key[len("hf/"):]: torch.tensor(np.asarray(value), dtype=probe.dtype)
            for key, value in probe.case.arrays.items() if key.startswith("hf/")}


def load_weights_arguments(probe):
    args = probe.case.args
    build = GPT2Shaped if args["model"] == "shaped" else probe.name("GPTModel")
    model = build(dict(args["cfg"]))
    model.to(probe.dtype)
    probe.kept["loaded_model"] = model
    probe.kept["state_dict"] = hf_state_dict(probe)
    probe.kept["state_dict_before"] = {k: v.clone() for k, v in probe.kept["state_dict"].items()}
    return [model, probe.kept["state_dict"]], {}


def changed_checkpoint_tensors(probe):
    """The names of the checkpoint's tensors that no longer hold what they held before the call."""
    before = probe.kept["state_dict_before"]
    return sorted(k for k, v in probe.kept["state_dict"].items()
                  if k in before and (v.shape != before[k].shape or not torch.equal(v, before[k])))


def record_loaded_model(probe):
    """Every parameter of the model afterwards, the output head next to the token embedding,
    the logits of a few tokens, and whether the state dict was changed: by the call, and then by
    an in-place change of the loaded model."""
    model = probe.kept["loaded_model"]
    probe.record_value("state_dict_changed", changed_checkpoint_tensors(probe), "the state dict's tensors changed by the call")
    # remove_duplicate=False: an output head that shares the token embedding's Parameter is listed too
    for name, param in sorted(model.named_parameters(remove_duplicate=False)):
        probe.record(f"param/{name}", param, f"parameter {name}")
    if probe.case.args["model"] == "gpt":
        # As the notebook does after loading (the book's assign() makes new CPU parameters).
        model.to(probe.device)
        model.eval()
        with torch.no_grad():
            probe.step = "running the loaded model on a few tokens"
            probe.record("logits", model(probe.tensor("idx")), "the loaded model's logits")
    # An optimizer step changes the parameters in place. A parameter that wraps the checkpoint's own
    # tensor (nn.Parameter(tensor) copies nothing) would change the checkpoint with it, and the course
    # starts twice from the same weights (chapter 08 fine-tunes in full and with LoRA).
    probe.step = "changing the loaded model's parameters in place, as an optimizer step does"
    with torch.no_grad():
        for param in model.parameters():
            param.add_(1.0)
    probe.record_value("state_dict_changed_by_update", changed_checkpoint_tensors(probe),
                       "the state dict's tensors changed by an in-place update of the loaded model")


# ------------------------------------------------------------------------------------------


KEY_NAMES = {
    "ids": "The returned token ids",
    "text": "The returned text",
    "round_trip": "The text after text_to_token_ids then token_ids_to_text",
    "loss": "The returned loss",
    "returned": "The returned value",
    "lr_per_step": "The learning rate the optimizer used at each step",
    "lr_per_group_per_step": "The learning rate of every parameter group at each step",
    "grad_norm_per_step": "The gradient norm the optimizer saw at each step (after any clipping)",
    "read_back": "What the model and optimizer hold after load_checkpoint",
    "state_dict_changed": "The checkpoint tensors your function changed",
    "state_dict_changed_by_update": "The checkpoint tensors changed by an in-place update of the loaded model "
                                    "(an optimizer step)",
    "logits": "The loaded model's logits",
    "ids_are_integers": "Whether text_to_token_ids returns integer ids",
    "results": "The learning rates of the schedule, step by step",
    "after/ids": "The ids passed in, after the call",
}

ERROR_HINTS = [
    (r"disallowed special token",
     "the text contains <|endoftext|>: tokenizer.encode(text, allowed_special={\"<|endoftext|>\"})", ("5.1",)),
    (r"argument 'tokens'|cannot be converted to 'Sequence'|'Tensor' object cannot be interpreted as an integer"
     r"|unhashable type|'list' object cannot be interpreted as an integer|'float' object cannot be interpreted"
     r"|not an instance of 'Sequence'",
     "tokenizer.decode takes a flat list of integer ids: remove the batch dimension with squeeze(0) (only "
     "dimension 0: a single token must stay a list) and convert with .tolist(); the ids must be integers",
     ("5.1",)),
    (r"'int' object is not iterable",
     "squeeze() without an argument also removes the token dimension when there is one token: "
     "squeeze(0) removes the batch dimension only", ("5.1",)),
    (r"Expected input batch_size \(\d+\) to match target batch_size|Expected target size",
     "cross_entropy wants logits of shape (N, vocab_size) and targets of shape (N,): flatten batch and "
     "tokens together, logits.flatten(0, 1) and target_batch.flatten()", ("5.2", "5.3")),
    (r"ZeroDivisionError",
     "an empty data loader has no batches to average: return float(\"nan\") when len(data_loader) == 0",
     ("5.3",)),
    (r"not supported between instances of '(int|NoneType)' and '(NoneType|int)'",
     "num_batches=None means every batch: if num_batches is None: num_batches = len(data_loader), "
     "otherwise min(num_batches, len(data_loader))", ("5.3",)),
    (r"Weights only load failed",
     "torch.load(..., weights_only=True) reads tensors, numbers, strings, lists and dicts only, and this "
     "checkpoint holds more: save the state dicts (model.state_dict(), optimizer.state_dict()), not the model "
     "or optimizer objects", ("5.5",), "instead"),
    (r"'NoneType' object has no attribute '(load_state_dict|state_dict)'",
     "load_checkpoint(path, model) without an optimizer must work: restore the optimizer's state only "
     "when one is given (if optimizer is not None)", ("5.5",)),
    (r"Missing key\(s\) in state_dict|Unexpected key\(s\) in state_dict",
     "load_state_dict got another dictionary than the model's own: save model.state_dict() under one key "
     "and optimizer.state_dict() under another, and load each into its own object", ("5.5",)),
    (r"KeyError: '(transformer\.|lm_head)",
     "the keys in this checkpoint have no 'transformer.' prefix and there is no lm_head: the output head "
     "takes the token embedding's weights (wte.weight)", ("5.6",)),
    (r"KeyError: 'h\.\d+\.|index \d+ is out of range",
     "the checkpoint has exactly as many blocks as the model, numbered from 0: loop over the model's own "
     "blocks, for b in range(len(gpt.trf_blocks)), not a fixed 12 (names: h.<b>.attn.c_attn.weight, "
     "h.<b>.ln_1.weight, ...)", ("5.6",)),
    (r"KeyError: '(wte|wpe|ln_f)",
     "the checkpoint's names are Hugging Face's: wte.weight, wpe.weight, h.<block>.attn.c_attn.weight, "
     "h.<block>.ln_1.weight, ..., ln_f.weight (print(list(state_dict)) to see them all)", ("5.6",)),
    (r"(?i)shape|size mismatch|must match the size",
     "a checkpoint of exactly the model's sizes was refused: GPT-2's Conv1D weights are (in, out) and need .T "
     "for nn.Linear's (out, in); c_attn holds query, key and value side by side in its LAST dimension, "
     "torch.chunk(weight, 3, dim=-1)", ("5.6",)),
    (r"ZeroDivisionError",
     "total_steps is every step of the run, len(train_loader) * num_epochs, and warmup ends before it: "
     "the cosine's denominator total_steps - warmup_steps is then never 0", ("5.7",)),
]


def _loss_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key != "loss" or have is None or want is None:
        return ""
    have, want = np.asarray(have, dtype=float), np.asarray(want, dtype=float)
    if have.shape != ():
        return ("the loss must be one number, the mean over every token of every sequence: "
                "cross_entropy(logits.flatten(0, 1), target_batch.flatten()) with its default reduction")
    tokens = int(np.asarray(case.arrays.get("inputs", np.zeros((1, 1)))).size)
    if want and np.isclose(have / want, tokens, rtol=1e-4):
        return "that is the sum over the tokens, not the mean: keep cross_entropy's default reduction='mean'"
    if np.isclose(have, -want, rtol=1e-4):
        return "the sign is flipped: cross-entropy is the mean of -log p(target), a positive number"
    return ("compare the logits at each position with the target at the same position: "
            "the targets are already shifted by one, cross_entropy(logits.flatten(0, 1), targets.flatten())")


def _loader_loss_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key != "loss" or not isinstance(want, float):
        return ""
    if math.isnan(want):
        return "an empty data loader has no batches: return float(\"nan\")"
    if isinstance(have, float) and not math.isnan(have) and case.args.get("num_batches") is not None:
        return (f"average over the first min(num_batches, len(data_loader)) batches: here num_batches="
                f"{case.args['num_batches']}; add up the batch losses of exactly those and divide by their count")
    return ("the mean of the batch losses: add loss.item() of each batch and divide by the number of batches "
            "(a partial last batch counts as one batch, like any other)")


def _step_tokens(case):
    """The tokens seen after each step of a training case (batches in order, every epoch)."""
    args = case.args
    inputs = np.asarray(case.arrays["train_inputs"])
    sizes = [len(inputs[i:i + args["batch_size"]]) * inputs.shape[1] for i in range(0, len(inputs), args["batch_size"])]
    return list(np.cumsum(sizes * args["num_epochs"]))


def _training_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key == "training_mode_after":
        return "leave the model in train mode (model.train()) after evaluating or generating"
    if key == "returned" and isinstance(have, (list, tuple)) and isinstance(want, list):
        names = "train_losses, val_losses, tokens_seen" + (", lrs" if len(want) == 4 else "")
        if len(have) != len(want):
            return f"return {len(want)} lists: {names}"
        seen, expected_seen = have[2], want[2]
        if isinstance(seen, list) and seen != expected_seen:
            if all(t in _step_tokens(case) for t in seen):
                return (f"the evaluations happen after other steps: evaluate when global_step % eval_freq == 0, "
                        f"with global_step counting every step from 0 across epochs (-1 before the first step, "
                        f"incremented right after each step), so at steps 0, eval_freq, 2 * eval_freq, ...; "
                        f"tokens seen at the evaluations: yours {seen}, expected {expected_seen}")
            return (f"tokens seen: after each step add input_batch.numel() (sequences times tokens); "
                    f"yours {seen}, expected {expected_seen}")
        if len(want) == 4 and not _same_numbers(have[3], want[3]):
            return _returned_rates_hint(have[3], want[3])
        return ("the losses differ: each evaluation averages eval_iter batches of each loader "
                "(calc_loss_loader(..., num_batches=eval_iter)) right after the step")
    if key.startswith("param/"):
        return ("the trained weights differ: per batch, zero_grad, the loss of the batch, backward, step, "
                "in that order, for every batch of every epoch")
    return ""


def _same_numbers(have, want):
    return (isinstance(have, list) and len(have) == len(want)
            and all(isinstance(h, (int, float)) for h in have) and np.allclose(have, want, rtol=1e-6, atol=1e-12))


def _returned_rates_hint(rates, wanted):
    """train_model's fourth list, the learning rates, wrong while the losses are right."""
    if isinstance(rates, list) and len(rates) != len(wanted):
        return (f"the returned learning rates: one per optimizer step, {len(wanted)} here (every step, not only "
                f"the steps that evaluate); yours has {len(rates)}")
    return ("the returned learning rates are not the ones the optimizer used: append each step's rate as you "
            "set it, once per step")


def _schedule_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key not in ("results", "lr_per_step") or not isinstance(have, list) or not isinstance(want, list):
        return ""
    warmup = case.args["warmup_steps"]
    if len(have) != len(want):
        return f"{len(want)} steps expected, got {len(have)}"
    numbers = [h for h in have if isinstance(h, (int, float))]
    if key == "lr_per_step" and len(numbers) == len(have) > 1 and len(set(numbers)) == 1 and len(set(want)) > 1 \
            and np.isclose(numbers[0], case.args["lr"], rtol=1e-9):
        # The optimizer ran every step at the rate it was made with: nothing the code computed reached it
        # (a schedule that computes one rate at every step shows another constant, and another hint).
        return (f"the optimizer ran every step at the same rate, {numbers[0]:.4g}: the rate your code computes "
                f"never reaches it. Write it into every parameter group before optimizer.step(): "
                f"for group in optimizer.param_groups: group[\"lr\"] = lr")
    if key == "lr_per_step" and len(numbers) == len(have) and warmup < len(have) \
            and numbers[warmup] < 0.5 * want[warmup] and all(b <= a for a, b in zip(numbers, numbers[1:])):
        return ("the rate never climbs to the optimizer's rate: read the peak once, before the loop "
                "(peak_lr = optimizer.param_groups[0][\"lr\"]); inside the loop the optimizer holds the rate "
                "you set at the previous step")
    proven = _schedule_slip(have, want, case)
    if proven:
        return proven
    for step, (h, w) in enumerate(zip(have, want)):
        if not isinstance(h, (int, float)) or not np.isclose(h, w, rtol=1e-6, atol=1e-12):
            phase = "warmup" if step < warmup else "cosine decay"
            if step < warmup:
                detail = ("during warmup the rate climbs in equal steps from initial_lr: initial_lr + step * "
                          "(peak_lr - initial_lr) / warmup_steps, with step counted from 0")
            elif step == warmup:
                detail = "the first step after warmup (step == warmup_steps) runs at the peak rate: progress 0"
            else:
                detail = ("after warmup, progress = (step - warmup_steps) / (total_steps - warmup_steps) and "
                          "lr = min_lr + (peak_lr - min_lr) * 0.5 * (1 + cos(pi * progress))")
            shown = f"{h:.4g}" if isinstance(h, (int, float)) else repr(h)
            return f"step {step} ({phase}): yours {shown}, expected {w:.4g} — {detail}"
    return ""


# Slips in the schedule's constants that no known mistake lists: each is said only when the
# student's rates are exactly what the slipped formula gives at every step.
_SCHEDULE_SLIPS = (
    ("the cosine misses its 0.5: lr = min_lr + (peak_lr - min_lr) * 0.5 * (1 + cos(pi * progress)) "
     "(without it the rate right after warmup is about twice the peak)",
     lambda step, warmup, total, peak, initial, low: (
         initial + step * (peak - initial) / warmup if step < warmup
         else low + (peak - low) * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))))),
    ("the warmup counts steps from 1: they are counted from 0, so that step 0 runs at initial_lr itself, "
     "initial_lr + step * (peak_lr - initial_lr) / warmup_steps",
     lambda step, warmup, total, peak, initial, low: (
         initial + (step + 1) * (peak - initial) / warmup if step < warmup
         else low + (peak - low) * 0.5 * (1 + math.cos(math.pi * (step - warmup) / (total - warmup))))),
)


def _schedule_slip(have, want, case):
    """The slip of _SCHEDULE_SLIPS that gives exactly the student's rates, if one does."""
    args = case.args
    if not all(isinstance(h, (int, float)) for h in have):
        return ""
    if "calls" in args:  # lr_at_step's own calls: step, total_steps, warmup_steps, peak_lr, initial_lr, min_lr
        calls = [(step, warmup, total, peak, initial, low) for step, total, warmup, peak, initial, low in args["calls"]]
    elif {"lr", "initial_lr", "min_lr", "warmup_steps"} <= set(args):  # a training run: a rate per step
        calls = [(step, args["warmup_steps"], len(want), args["lr"], args["initial_lr"], args["min_lr"])
                 for step in range(len(want))]
    else:
        return ""
    for sentence, rate in _SCHEDULE_SLIPS:
        try:
            slipped = [rate(*call) for call in calls]
        except (ZeroDivisionError, TypeError):
            continue
        if np.allclose(have, slipped, rtol=1e-6, atol=1e-12):
            return sentence
    return ""


def _gradient_norm_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key != "grad_norm_per_step" or not isinstance(have, list) or len(have) != len(want):
        return ""
    if have and not any(have) and any(want):
        return ("the optimizer saw no gradients at all: zero_grad() must come before loss.backward(), not "
                "between backward and step (it wipes the gradients the step needs)")
    warmup = case.args.get("warmup_steps")
    if warmup is None:
        return "the gradients the optimizer saw differ: per batch, zero_grad, loss, backward, then step"
    for step, (h, w) in enumerate(zip(have, want)):
        if np.isclose(h, w, rtol=1e-5):
            continue
        if step >= warmup and h > 1.0 + 1e-6:
            return (f"at step {step}, after warmup, the optimizer saw a gradient norm of {h:.3f}: clip it to 1.0 "
                    f"between loss.backward() and optimizer.step(), "
                    f"torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)")
        if step < warmup and np.isclose(h, 1.0, rtol=1e-5):
            return (f"at step {step}, during warmup, the gradient was clipped to norm 1: clip only after warmup "
                    f"(global_step >= warmup_steps)")
        return f"at step {step} the optimizer saw a gradient norm of {h:.4g}, expected {w:.4g}"
    return ""


def _checkpoint_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key != "read_back" or not isinstance(have, dict) or not isinstance(want, dict):
        return ""
    if "ran_pickled_code" in want:
        if have.get("ran_pickled_code"):
            return ("loading ran code hidden in the checkpoint: torch.load(path, weights_only=True) refuses "
                    "anything but tensors and plain data, so a checkpoint from a stranger cannot run code")
        return ""
    missing = sorted(k for k in want if not _same_value(have.get(k), want[k]))
    if any(k.startswith("optimizer/") for k in missing) and not any(k.startswith("model/") for k in missing):
        return ("the model came back but the optimizer did not: save optimizer.state_dict() as well and "
                "restore it with optimizer.load_state_dict(...) when an optimizer is given (AdamW's moments "
                "are part of training's state)")
    if missing:
        return (f"{missing[0].split('/', 1)[1]} was not restored: save model.state_dict() and load it back "
                f"with model.load_state_dict(...)")
    return ""


def _same_value(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and np.allclose(a, b)
    return a == b


def _weights_hint(key, got, expected, case):
    have, want = got.get(key), expected.get(key)
    if key == "state_dict_changed":
        return ("the state dict passed in was changed (an in-place transpose or copy?): read from it, "
                "do not write into it")
    if key == "state_dict_changed_by_update":
        return ("the model's parameters share memory with the checkpoint's tensors: nn.Parameter(tensor) wraps the "
                "very tensor (a slice or .T of it too), so training the model rewrites the checkpoint. Copy the "
                "values when you make each parameter: nn.Parameter(tensor.clone()), or copy_ into the existing "
                "parameter under torch.no_grad()")
    if not key.startswith("param/") or not isinstance(have, np.ndarray) or not isinstance(want, np.ndarray):
        return ""
    name = key[len("param/"):]
    transposed = want.ndim == 2 and want.shape[0] != want.shape[1] and have.shape == want.shape[::-1]
    if want.ndim == 2 and want.shape[0] == want.shape[1] and have.shape == want.shape:
        transposed = np.allclose(have, want.T) and not np.allclose(have, want)
    if transposed:
        return (f"{name} holds the checkpoint's matrix untransposed: GPT-2's Conv1D layers store (in, out), "
                f"nn.Linear stores (out, in), so take .T of the c_attn, attn.c_proj, mlp.c_fc and mlp.c_proj weights")
    if name == "out_head.weight":
        return "the output head is tied to the token embedding in GPT-2: out_head.weight gets wte.weight"
    if ".att.W_" in name:
        return ("c_attn holds query, key and value side by side along its last dimension, in that order, in "
                "c_attn.weight and c_attn.bias alike: torch.chunk(c_attn_weight, 3, dim=-1) (then .T for each "
                "weight) and torch.chunk(c_attn_bias, 3, dim=-1)")
    if ".norm1." in name or ".norm2." in name or "final_norm" in name:
        return ("LayerNorm's scale takes ln_*.weight and its shift ln_*.bias; ln_1 goes to norm1 (before "
                "attention), ln_2 to norm2 (before the feed-forward network), ln_f to final_norm")
    return f"{name} does not hold the checkpoint's values: see the table of names in the task"


def _ids_hint(key, got, expected, case):
    if key == "ids_are_integers":
        return ("token ids are integers: torch.tensor(ids) keeps them int64 (with dtype=torch.float an "
                "nn.Embedding cannot look them up)")
    have, want = got.get(key), expected.get(key)
    if key == "ids" and isinstance(have, np.ndarray) and isinstance(want, np.ndarray) and have.shape != want.shape:
        if have.ndim != 2 or have.shape[0] != 1:
            return (f"text_to_token_ids returns shape (1, num_tokens), a batch of one: "
                    f"torch.tensor(ids).unsqueeze(0); yours has shape {have.shape}")
        return (f"{have.shape[1]} token ids where GPT-2's tokenizer gives {want.shape[1]}: encode the text with the "
                f"tokenizer you are given, tokenizer.encode(text, allowed_special={{\"<|endoftext|>\"}})")
    return ""


# ------------------------------------------------------------------------------------------
# The book's numbers
# ------------------------------------------------------------------------------------------

# Numbers of the book's runs that a test of this chapter asserts, each with the test that does
# (docs/contract.md lists them under the chapter).
REFERENCE_VALUES = (
    ReferenceValue("An untrained `GPTModel` of chapter 05's configuration (context 256) has a validation loss "
                   "of about 10.98 on the last 10 % of The Verdict (the book: 10.981).",
                   "tests/chapters/test_ch05.py::"
                   "test_the_untrained_validation_loss_on_the_verdict_is_about_10_99"),
)


# ------------------------------------------------------------------------------------------
# Each task's contract, probes and hints, in one place (gptcourse/checking/chapters/__init__.py:
# TaskSpec). The contract says in words what the cases of both chapter modules check and what they
# leave free; docs/contract.md is rendered from it (grader/authoring/contract.py).
# ------------------------------------------------------------------------------------------

SPECS = {
    "5.1": TaskSpec(
        contract=Contract(
            pinned=(
                "`text_to_token_ids` returns the GPT-2 ids of the text as an integer tensor of shape "
                "`(1, num_tokens)`, `<|endoftext|>` allowed (the single id 50256).",
                "`token_ids_to_text` decodes such a tensor back to the text; the tensor passed in stays unchanged.",
            ),
            free=(
                "Which integer dtype the ids have (the task text asks for int64).",
                "What the empty text gives: no case encodes it. The book's `torch.tensor(ids)` makes an empty list "
                "a float32 tensor, while the task text (and the reference, with `dtype=torch.long`) gives int64 ids.",
            )),
        probes={"encode": kinds.Function(encode_arguments, outputs=(("ids", "the returned token ids"),),
                                         name="text_to_token_ids", also=record_round_trip, device_pass=False),
                "decode": kinds.Function(decode_arguments, outputs=(("text", "the returned text"),),
                                         name="token_ids_to_text", device_pass=False)},
        hints=(_ids_hint,)),
    "5.2": TaskSpec(
        contract=Contract(
            pinned=(
                "The mean cross-entropy over every position of every sequence, as a 0-d tensor that gradients "
                "flow back through.",
                "Both batches arrive on the CPU and are moved to `device`; the model is a tiny language model or "
                "a small `GPTModel`.",
            )),
        probes={"loss": kinds.Function(batch_loss_arguments, outputs=(("loss", "the returned loss"),), tensors=True,
                                       grad_of="loss", device_pass=True)},
        hints=(_loss_hint,)),
    "5.3": TaskSpec(
        contract=Contract(
            pinned=(
                "The mean of the batch losses over the first `num_batches` batches: all of them for `None` or a "
                "number larger than the loader's length.",
                "`nan` for an empty loader.",
            ),
            free=(
                "A Python number or a 0-d tensor.",
                "Whether the function switches the model's mode or turns gradients off.",
                "`num_batches=0`: not checked (the book's code divides by zero there; `nan` is just as good).",
            )),
        probes={"loss": kinds.Function(loader_loss_arguments, outputs=(("loss", "the returned loss"),), scalars=True,
                                       device_pass=True)},
        hints=(_loader_loss_hint,)),
    "5.4": TaskSpec(
        contract=Contract(
            pinned=(
                "One optimizer step per batch of every epoch (gradients zeroed each time), and as many training "
                "forward passes, in train mode with gradients.",
                "Evaluation right after steps 0, `eval_freq`, `2 * eval_freq`, ... over `eval_iter` batches of each "
                "loader, in eval mode without gradients, then back to train mode.",
                "Returns `(train_losses, val_losses, tokens_seen)`, one entry per evaluation, with the input "
                "tokens counted up to that step; the model ends in train mode with the reference's weights "
                "(small float64 cases, AdamW).",
            ),
            free=(
                "What it prints and how the sample after each epoch is made.",
                "How many evaluation forward passes it makes (the losses decide).",
            )),
        probes={"train": kinds.TrainingLoop(build_training, call_train_model_simple, spy=True, optimizer_view=True)},
        hints=(_gradient_norm_hint, _training_hint)),
    "5.5": TaskSpec(
        contract=Contract(
            pinned=(
                "A checkpoint written by `save_checkpoint` and read back by `load_checkpoint` restores the model's "
                "parameters and, when an optimizer is given, its state (AdamW's moments included) into a fresh "
                "model and optimizer; the file's name may hold a space.",
                "Loading refuses a file that carries a pickled object and never runs it (`weights_only=True`).",
            ),
            free=(
                "The file's layout and its keys: only your own `load_checkpoint` reads it.",
                "What `load_checkpoint` returns.",
                "The model's buffers (the attention `mask`): `state_dict` carries them and `load_state_dict` puts "
                "them back, but the checks compare parameters and the optimizer's state only.",
            )),
        probes={"file": kinds.FileRoundTrip("save_checkpoint", "load_checkpoint", write=write_checkpoint,
                                            read=read_checkpoint),
                "unsafe": kinds.FileRoundTrip("save_checkpoint", "load_checkpoint", write=write_unsafe_checkpoint,
                                              read=read_unsafe_checkpoint)},
        hints=(_checkpoint_hint,)),
    "5.6": TaskSpec(
        contract=Contract(
            pinned=(
                "Every parameter of the `GPTModel` (with `qkv_bias=True`, one to three blocks, any width) gets its "
                "value from the Hugging Face checkpoint: `c_attn` split into query, key and value, the Conv1D "
                "matrices transposed, LayerNorm weight and bias to `scale` and `shift`, `out_head` from `wte`; "
                "the loaded model gives the reference's logits.",
                "The checkpoint may hold the `h.N.attn.bias` mask buffers or not; its tensors stay unchanged, by the "
                "call and afterwards: the loaded model's parameters are then changed in place (as an optimizer step "
                "does) and the checkpoint must not change with them, so a parameter that wraps the checkpoint's own "
                "tensor, or a view of it, fails.",
                "A tensor of the wrong shape raises (any exception).",
            ),
            free=(
                "Whether `out_head` shares the token embedding's tensor or gets a copy of it.",
                "The error's message (naming the tensor is advised, not graded).",
            )),
        probes={"load": kinds.Function(load_weights_arguments, outputs=(), also=record_loaded_model, device_pass=False),
                # Any exception will do (the contract); naming the tensor is the task text's advice, not graded.
                "mismatch": kinds.RaisesOnCall(load_weights_arguments, messages={
                    "raised": "a checkpoint tensor of the wrong shape was copied without complaint: compare each "
                              "tensor's shape with the parameter it replaces and raise an error (one that names "
                              "the tensor helps whoever meets it)"})},
        hints=(_weights_hint,)),
    "5.7": TaskSpec(
        contract=Contract(
            pinned=(
                "`lr_at_step`: linear warmup from `initial_lr` to `peak_lr` over `warmup_steps` steps, then a "
                "cosine from `peak_lr` down towards `min_lr` at `total_steps`; a warmup of one step and a rate "
                "that starts at the peak included.",
                "`train_model`: the peak is the optimizer's rate when it is called; before each step the "
                "schedule's rate is set on every parameter group; the gradient norm is clipped to 1.0 once "
                "warmup is over, never before.",
                "Returns the three lists of 5.4 and the rate of every step; everything else as in 5.4.",
            ),
            free=(
                "Whether clipping starts at the step where warmup ends or at the one after (the book's).",
            )),
        probes={"schedule": kinds.Repeated("lr_at_step", "the learning rate of every step"),
                "train": kinds.TrainingLoop(build_training, call_train_model, spy=True, optimizer_view=True,
                                            name="train_model")},
        hints=(_schedule_hint, _gradient_norm_hint, _training_hint)),
}
