"""The grader's chapter module of chapter 05 (pretraining): its public and hidden
cases and its known mistakes.

Models are tiny (TinyLanguageModel of gptcourse.checking.chapters.toys, or a GPTModel of emb_dim 4 to 8 with a
vocabulary of tens of tokens).

- Losses (5.2, 5.3) run on TinyLanguageModel (embeddings, a tanh, an output head), so the
  self-check does not depend on the student's GPTModel; hidden cases add a small GPTModel.
  Batches are handed over on the CPU and the device pass runs the model on meta: a batch never
  moved with .to(device) is caught without a GPU.
- Training loops (5.4, 5.7) train a tiny model for a few steps in float64, so any correct loop
  gives the reference's weights to many digits (AdamW included), with loaders that do not
  shuffle. The start context of a training case is text whose GPT-2 token ids are all below the
  tiny vocabulary (single characters such as "A+B=C"), so the loops' sample generation runs on
  the tiny models as it does on GPT-2. Dropout in a training case is fine: evaluation and
  generation in eval mode draw no random numbers, so every correct loop draws the same masks.
  TrainingLoop(spy=True) checks "evaluates in eval mode without gradients and goes back to train
  mode" call by call; optimizer_view=True gives the rate and the clipped gradient norm of every
  step. Cases of train_model are drawn until some warmup step has a gradient norm above 1 and
  some later step is clipped, so that clipping too early and never clipping both show.
- Checkpoints (5.5): a round trip through the worker's private folder into a fresh model and
  optimizer (AdamW's moments included), with and without an optimizer; then the student's own
  checkpoint with a pickled object added, which load_checkpoint must refuse without running it
  (weights_only=True).
- GPT-2 weights (5.6): synthetic checkpoints in the Hugging Face layout (hf_gpt2_state_dict:
  Conv1D weights (in, out), query, key and value side by side, the mask buffers h.N.attn.bias)
  of 1 to 3 blocks; a tensor of the wrong shape must raise an error that names it (RaisesOnCall).

Clipping "after warmup" leaves the step at the end of warmup open (the book clips from the
step after it): the book's run is an accepted alternative (expectation_extras), so both
readings pass.
"""
import math
import types

import numpy as np
import torch

from gptcourse.checking.chapters.toys import TinyLanguageModel
from gptcourse.checking.records import Case
from grader.chapters import GraderSpec
from grader.chapters.casekit import module_weights, reference_with_text_replaced
from grader.reference import reference_object, reference_objects

START_CONTEXTS = ("A+B=C", "X=Y+Z", "A;B?", "#A")  # GPT-2 ids all below 64


def tiny(vocab_size=24, context_length=8, emb_dim=6):
    return {"model": "tiny", "vocab_size": vocab_size, "context_length": context_length, "emb_dim": emb_dim}


def gpt(vocab_size=20, context_length=8, emb_dim=8, n_heads=2, n_layers=1, drop_rate=0.0, qkv_bias=False):
    return {"model": "gpt", "cfg": {"vocab_size": vocab_size, "context_length": context_length, "emb_dim": emb_dim,
                                    "n_heads": n_heads, "n_layers": n_layers, "drop_rate": drop_rate,
                                    "qkv_bias": qkv_bias}}


def _vocab(args):
    return args["cfg"]["vocab_size"] if args["model"] == "gpt" else args["vocab_size"]


def _model_label(args):
    if args["model"] == "tiny":
        return f"a small test model (vocab_size={args['vocab_size']}, emb_dim={args['emb_dim']})"
    cfg = args["cfg"]
    return (f"a small GPTModel (vocab_size={cfg['vocab_size']}, emb_dim={cfg['emb_dim']}, n_layers={cfg['n_layers']}, "
            f"drop_rate={cfg['drop_rate']})")


def _model_weights(args, rng, scale=None):
    """state/model.<name> for every parameter of the case's model."""
    if args["model"] == "tiny":
        model = TinyLanguageModel(args["vocab_size"], args["context_length"], args["emb_dim"])
    else:
        model = reference_object("4.5")(dict(args["cfg"]))
    weights = module_weights(model, rng, prefix="model.")
    if scale is not None:
        weights = {k: v * scale for k, v in weights.items()}
    return weights


def _ids(rng, vocab, shape):
    return rng.integers(0, vocab, size=shape)


# ------------------------------------------------------------------------------------------
# 5.1 Text to token ids and back
# ------------------------------------------------------------------------------------------

WORDS = ("every", "effort", "moves", "you", "the", "sunlit", "terraces", "Gisburn", "painted", "?", ",", ".",
         "tea", "like", "Hello", "I", "had", "always", "thought", "Jack", "cheap", "genius", "—", "é", "42")


def _encode_case(text, label=None):
    return Case("5.1", "encode", label or f"the text {text!r}", {"text": text})


def _decode_case(ids, label):
    return Case("5.1", "decode", label, {}, {"ids": np.asarray(ids, dtype=np.int64).reshape(1, -1)})


def _random_text(rng, words=8, special=False):
    picked = [WORDS[i] for i in rng.integers(0, len(WORDS), size=words)]
    if special:
        picked.insert(int(rng.integers(1, words)), "<|endoftext|>")
    return " ".join(picked)


def _gpt2_ids(text):
    from gptcourse import get_encoding
    return get_encoding().encode(text, allowed_special={"<|endoftext|>"})


# ------------------------------------------------------------------------------------------
# 5.2 and 5.3 Losses
# ------------------------------------------------------------------------------------------

def _batch_loss_case(rng, model_args, batch, tokens, dtype="float32"):
    vocab = _vocab(model_args)
    arrays = {"inputs": _ids(rng, vocab, (batch, tokens)), "targets": _ids(rng, vocab, (batch, tokens)),
              "grad_seed": np.array(1.0)}
    arrays.update(_model_weights(model_args, rng))
    label = f"a batch of {batch} x {tokens} token ids on the CPU, {_model_label(model_args)}, {dtype}"
    return Case("5.2", "loss", label, dict(model_args), arrays, dtype)


def _loader_loss_case(rng, model_args, sequences, tokens, batch_size, num_batches="all"):
    vocab = _vocab(model_args)
    args = dict(model_args, batch_size=batch_size)
    if num_batches != "all":
        args["num_batches"] = num_batches
    arrays = {"inputs": _ids(rng, vocab, (sequences, tokens)), "targets": _ids(rng, vocab, (sequences, tokens))}
    arrays.update(_model_weights(model_args, rng))
    batches = math.ceil(sequences / batch_size)
    what = "no num_batches" if num_batches == "all" else f"num_batches={num_batches}"
    label = (f"a loader of {batches} batches ({sequences} sequences of {tokens} tokens, batch_size={batch_size}, "
             f"the last one {'partial' if sequences % batch_size else 'full'}), {what}, {_model_label(model_args)}")
    if sequences == 0:
        label = f"an empty data loader (no batches), {what}"
    return Case("5.3", "loss", label, args, arrays)


# ------------------------------------------------------------------------------------------
# 5.4 and 5.7 Training loops
# ------------------------------------------------------------------------------------------

def _training_case(task_id, rng, model_args, train_sequences=6, val_sequences=4, tokens=6, batch_size=2,
                   num_epochs=2, eval_freq=2, eval_iter=1, lr=0.01, weight_decay=0.1, scale=None, **schedule):
    vocab = _vocab(model_args)
    args = dict(model_args, batch_size=batch_size, num_epochs=num_epochs, eval_freq=eval_freq, eval_iter=eval_iter,
                lr=lr, weight_decay=weight_decay, start_context=START_CONTEXTS[int(rng.integers(len(START_CONTEXTS)))],
                **schedule)
    arrays = {"train_inputs": _ids(rng, vocab, (train_sequences, tokens)),
              "train_targets": _ids(rng, vocab, (train_sequences, tokens)),
              "val_inputs": _ids(rng, vocab, (val_sequences, tokens)),
              "val_targets": _ids(rng, vocab, (val_sequences, tokens))}
    arrays.update(_model_weights(model_args, rng, scale))
    steps = math.ceil(train_sequences / batch_size) * num_epochs
    extra = "".join(f", {k}={v}" for k, v in schedule.items() if k != "decay_groups")
    if schedule.get("decay_groups"):
        extra += ", two parameter groups"
    label = (f"{steps} steps ({num_epochs} epochs of {math.ceil(train_sequences / batch_size)} batches), "
             f"eval_freq={eval_freq}, eval_iter={eval_iter}, AdamW lr={lr}{extra}, {_model_label(model_args)}, float64")
    return Case(task_id, "train", label, args, arrays, "float64")


def _observe_training(case, train_model):
    """The observations of `train_model` (the reference's or a known mistake's) on a training case."""
    from grader.grading.expectations import seeded_probe  # the grader's own way of running the reference
    return seeded_probe({**reference_objects("5.7"), "train_model": train_model}, case)


def _tells_clipping_apart(case):
    """Whether the case catches a loop that clips during warmup (some warmup step has a norm
    above 1) and one that never clips (some step after warmup was clipped to norm 1)."""
    observed = _observe_training(case, reference_object("5.7", "train_model"))
    if "error" in observed:
        return False
    norms, warmup = observed["grad_norm_per_step"], case.args["warmup_steps"]
    return max(norms[:warmup]) > 1.0 and any(abs(n - 1.0) < 1e-5 for n in norms[warmup + 1:])


def _schedule_training_case(rng, model_args, scales, **options):
    """A train_model case with gradient norms above 1 before and after warmup, drawn again
    (other weights, warmup lengths) until it has them."""
    for _ in range(20):
        case = _training_case("5.7", rng, model_args, scale=float(rng.choice(scales)),
                              warmup_steps=int(rng.integers(1, 4)), initial_lr=float(rng.choice([1e-4, 3e-4])),
                              min_lr=1e-4, **options)
        if _tells_clipping_apart(case):
            return case
    raise RuntimeError("no train_model case whose gradient norms tell the clipping apart was found")


def _schedule_case(label, total_steps, warmup_steps, peak_lr, initial_lr, min_lr):
    calls = [[step, total_steps, warmup_steps, peak_lr, initial_lr, min_lr] for step in range(total_steps)]
    args = {"calls": calls, "warmup_steps": warmup_steps}
    label = (f"{label}: steps 0..{total_steps - 1} of total_steps={total_steps}, warmup_steps={warmup_steps}, "
             f"peak_lr={peak_lr}, initial_lr={initial_lr}, min_lr={min_lr}")
    return Case("5.7", "schedule", label, args)


# ------------------------------------------------------------------------------------------
# 5.5 Checkpoints
# ------------------------------------------------------------------------------------------

def _checkpoint_case(rng, kind, with_optimizer=True, filename="checkpoint.pth", dtype="float32", **sizes):
    model_args = tiny(**sizes)
    args = dict(model_args, lr=1e-2, with_optimizer=with_optimizer, filename=filename)
    arrays = {"inputs": _ids(rng, model_args["vocab_size"], (2, 5))}
    arrays.update(_model_weights(model_args, rng))
    if kind == "unsafe":
        label = "a checkpoint that carries a pickled object (it runs code when unpickled)"
    else:
        label = (f"save a trained model and its AdamW, load into fresh ones "
                 f"({'with' if with_optimizer else 'without'} an optimizer), file {filename!r}, {dtype}")
    return Case("5.5", kind, label, args, arrays, dtype)


# ------------------------------------------------------------------------------------------
# 5.6 GPT-2 weights in the Hugging Face layout
# ------------------------------------------------------------------------------------------

def hf_gpt2_state_dict(rng, cfg, with_mask_buffers=True):
    """A GPT-2 checkpoint of the configuration's sizes, in Hugging Face's layout: Conv1D weights
    stored (in, out), query, key and value side by side in c_attn, the causal masks as buffers."""
    e, v, c = cfg["emb_dim"], cfg["vocab_size"], cfg["context_length"]

    def normal(*shape, scale=0.5):
        return rng.normal(scale=scale, size=shape)

    sd = {"wte.weight": normal(v, e), "wpe.weight": normal(c, e, scale=0.2)}
    for b in range(cfg["n_layers"]):
        h = f"h.{b}."
        sd.update({
            h + "ln_1.weight": 1 + normal(e, scale=0.1), h + "ln_1.bias": normal(e, scale=0.1),
            h + "attn.c_attn.weight": normal(e, 3 * e), h + "attn.c_attn.bias": normal(3 * e, scale=0.1),
            h + "attn.c_proj.weight": normal(e, e), h + "attn.c_proj.bias": normal(e, scale=0.1),
            h + "ln_2.weight": 1 + normal(e, scale=0.1), h + "ln_2.bias": normal(e, scale=0.1),
            h + "mlp.c_fc.weight": normal(e, 4 * e), h + "mlp.c_fc.bias": normal(4 * e, scale=0.1),
            h + "mlp.c_proj.weight": normal(4 * e, e, scale=0.3), h + "mlp.c_proj.bias": normal(e, scale=0.1),
        })
        if with_mask_buffers:
            sd[h + "attn.bias"] = np.tril(np.ones((c, c))).reshape(1, 1, c, c)
    sd["ln_f.weight"] = 1 + normal(e, scale=0.1)
    sd["ln_f.bias"] = normal(e, scale=0.1)
    return sd


def _weights_case(rng, cfg_options, batch=2, tokens=4, dtype="float32", with_mask_buffers=True, shaped=False):
    """shaped: load into the toy GPT2Shaped (GPTModel's parameters, no forward), so that
    the self-check does not depend on the student's GPTModel; otherwise into a GPTModel."""
    model_args = dict(gpt(qkv_bias=True, **cfg_options), model="shaped" if shaped else "gpt")
    cfg = model_args["cfg"]
    arrays = {f"hf/{k}": v for k, v in hf_gpt2_state_dict(rng, cfg, with_mask_buffers).items()}
    arrays["idx"] = _ids(rng, cfg["vocab_size"], (batch, tokens))
    into = "the parameters of a GPTModel" if shaped else "a GPTModel"
    label = (f"{into}, a GPT-2 checkpoint in the Hugging Face layout (n_layers={cfg['n_layers']}, emb_dim={cfg['emb_dim']}, "
             f"n_heads={cfg['n_heads']}, vocab_size={cfg['vocab_size']}, context_length={cfg['context_length']})"
             f"{'' if with_mask_buffers else ', without the attn.bias mask buffers'}, {dtype}")
    return Case("5.6", "load", label, model_args, arrays, dtype)


def _mismatch_case(rng, which, cfg_options, shaped=False):
    model_args = dict(gpt(qkv_bias=True, **cfg_options), model="shaped" if shaped else "gpt")
    cfg = model_args["cfg"]
    sd = hf_gpt2_state_dict(rng, cfg)
    e, c, last = cfg["emb_dim"], cfg["context_length"], cfg["n_layers"] - 1
    if which == "c_fc":
        key, param = f"h.{last}.mlp.c_fc.weight", f"trf_blocks.{last}.ff.layers.0.weight"
        sd[key] = rng.normal(size=(e, 3 * e))
    elif which == "wpe":
        key, param = "wpe.weight", "pos_emb.weight"
        sd[key] = rng.normal(size=(c + 3, e))
    else:
        key, param = f"h.{last}.ln_2.bias", f"trf_blocks.{last}.norm2.shift"
        sd[key] = rng.normal(size=(e + 2,))
    arrays = {f"hf/{k}": v for k, v in sd.items()}
    label = f"a checkpoint whose {key} has shape {tuple(sd[key].shape)} (the model's {param} needs another shape)"
    return Case("5.6", "mismatch", label, model_args, arrays)


# ------------------------------------------------------------------------------------------
# The cases
# ------------------------------------------------------------------------------------------


def _for_device(case, device):
    """A training case with dropout runs on a GPU without it: the GPU draws other dropout masks
    than the CPU whose numbers it is compared with, so the run there would never match. The
    CPU run of the same case still tests the loop with dropout."""
    cfg = case.args.get("cfg") or {}
    if case.kind != "train" or not cfg.get("drop_rate"):
        return case.on(device)
    args = dict(case.args, cfg=dict(cfg, drop_rate=0.0))
    label = case.label.replace(f"drop_rate={cfg['drop_rate']}", f"drop_rate=0.0 on {device}, "
                                                                 f"{cfg['drop_rate']} on the CPU")
    return Case(case.task, case.kind, label, args, case.arrays, case.dtype, device)


def _extras_5_7(case):
    """train_model: the book clips from the step after warmup, the reference from the step at its
    end; the contract's "after warmup" allows both, so the book's run is an accepted alternative."""
    if case.kind == "train":
        return {"internals/alternatives": [_observe_training(case, _train_model_with(clip_from="after_warmup"))]}
    return {}


# ------------------------------------------------------------------------------------------
# Known mistakes
# ------------------------------------------------------------------------------------------

# The training loops' known mistakes are the reference loop with one line changed: the loop is
# written once, in the master (casekit.reference_with_text_replaced).
CLIP_FROM = {"after_warmup": "if global_step > warmup_steps:", "always": "if True:", "never": "if False:"}


def _train_model_with(clip_from=None, first_group_only=False):
    """The reference train_model with one line changed: clipping from the step after warmup (the
    book's), always or never (CLIP_FROM); or the rate set on the first parameter group only."""
    replacements = {}
    if clip_from:
        replacements["if global_step >= warmup_steps:"] = CLIP_FROM[clip_from]
    if first_group_only:
        replacements["for param_group in optimizer.param_groups:"] = "for param_group in optimizer.param_groups[:1]:"
    return reference_with_text_replaced("5.7", "train_model", replacements)


def _schedule_with(warmup_denominator=0, cosine_denominator=0, no_floor=False, linear_decay=False,
                   progress_from=None):
    """progress_from "start": the cosine's progress counted from step 0 over all steps, "start_over_decay":
    from step 0 over the decay's steps (instead of from the end of warmup)."""
    def lr_at_step(step, total_steps, warmup_steps, peak_lr, initial_lr, min_lr):
        if step < warmup_steps:
            return initial_lr + step * (peak_lr - initial_lr) / (warmup_steps + warmup_denominator)
        progress = (step - warmup_steps) / (total_steps - warmup_steps + cosine_denominator)
        if progress_from == "start":
            progress = step / total_steps
        elif progress_from == "start_over_decay":
            progress = step / (total_steps - warmup_steps)
        if linear_decay:
            return min_lr + (peak_lr - min_lr) * (1 - progress)
        low = 0.0 if no_floor else min_lr
        return low + (peak_lr - low) * 0.5 * (1 + math.cos(math.pi * progress))
    return lr_at_step


def _mistakes_5_7():
    names = reference_objects("5.7")
    return [
        ("the gradients are clipped during warmup too", dict(names, train_model=_train_model_with(clip_from="always"))),
        ("the optimizer never sees clipped gradients: clip with torch.nn.utils.clip_grad_norm_(model.parameters(), "
         "max_norm=1.0) between loss.backward() and optimizer.step(), once warmup is over",
         dict(names, train_model=_train_model_with(clip_from="never"))),
        ("warmup divides by warmup_steps - 1, reaching the peak one step early",
         dict(names, lr_at_step=_schedule_with(warmup_denominator=-1))),
        ("the cosine's progress divides by total_steps - warmup_steps - 1",
         dict(names, lr_at_step=_schedule_with(cosine_denominator=-1))),
        ("the cosine decays to 0 instead of min_lr", dict(names, lr_at_step=_schedule_with(no_floor=True))),
        ("the cosine's progress is counted from step 0 (step / total_steps): it starts at the end of warmup, "
         "progress = (step - warmup_steps) / (total_steps - warmup_steps), so the first step after warmup runs "
         "at the peak", dict(names, lr_at_step=_schedule_with(progress_from="start"))),
        ("the cosine's progress is counted from step 0 (step / (total_steps - warmup_steps)): subtract the warmup "
         "steps first, progress = (step - warmup_steps) / (total_steps - warmup_steps)",
         dict(names, lr_at_step=_schedule_with(progress_from="start_over_decay"))),
        ("the rate is set on the first parameter group only (optimizer.param_groups[0]): an optimizer may have "
         "several groups (weights with and without weight decay, say); set the rate on every one, "
         "for group in optimizer.param_groups", dict(names, train_model=_train_model_with(first_group_only=True))),
        ("the rate decays linearly after warmup instead of along a cosine",
         dict(names, lr_at_step=_schedule_with(linear_decay=True))),
    ]


def _mistakes_5_1():
    names = reference_objects("5.1")

    def no_batch_dim(text, tokenizer):
        return torch.tensor(tokenizer.encode(text, allowed_special={"<|endoftext|>"}))

    def ordinary(text, tokenizer):
        return torch.tensor(tokenizer.encode_ordinary(text)).unsqueeze(0)

    return [("the batch dimension is missing: torch.tensor(ids).unsqueeze(0) has shape (1, num_tokens)",
             dict(names, text_to_token_ids=no_batch_dim)),
            ("<|endoftext|> is split into ordinary tokens (encode_ordinary, or encode without allowed_special): "
             "encode with allowed_special={\"<|endoftext|>\"}, which gives it the single id 50256",
             dict(names, text_to_token_ids=ordinary))]


def _mistakes_5_2():
    def summed(input_batch, target_batch, model, device):
        logits = model(input_batch.to(device))
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.to(device).flatten(),
                                                 reduction="sum")

    def softmax_first(input_batch, target_batch, model, device):
        probs = torch.softmax(model(input_batch.to(device)), dim=-1)
        return torch.nn.functional.cross_entropy(probs.flatten(0, 1), target_batch.to(device).flatten())

    def inputs_as_targets(input_batch, target_batch, model, device):
        logits = model(input_batch.to(device))
        return torch.nn.functional.cross_entropy(logits.flatten(0, 1), input_batch.to(device).flatten())

    return [
        ("the loss is summed over the tokens instead of averaged (reduction='sum')", summed),
        ("cross_entropy got probabilities: it applies log-softmax itself, so pass the raw logits", softmax_first),
        ("the inputs are used as targets: compare the logits with target_batch", inputs_as_targets),
    ]


def _mistakes_5_3():
    calc_loss_batch = reference_object("5.2")

    def token_weighted(data_loader, model, device, num_batches=None):
        if len(data_loader) == 0:
            return float("nan")
        n = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
        total, count = 0.0, 0
        for i, (x, y) in enumerate(data_loader):
            if i >= n:
                break
            total += calc_loss_batch(x, y, model, device).item() * x.numel()
            count += x.numel()
        return total / count

    def divides_by_loader_length(data_loader, model, device, num_batches=None):
        if len(data_loader) == 0:
            return float("nan")
        n = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
        total = sum(calc_loss_batch(x, y, model, device).item() for i, (x, y) in zip(range(n), data_loader))
        return total / len(data_loader)

    def divides_by_num_batches(data_loader, model, device, num_batches=None):
        if len(data_loader) == 0:
            return float("nan")
        n = len(data_loader) if num_batches is None else num_batches  # not capped by the loader's length
        total = sum(calc_loss_batch(x, y, model, device).item() for i, (x, y) in zip(range(n), data_loader))
        return total / n

    def breaks_one_batch_late(data_loader, model, device, num_batches=None):
        if len(data_loader) == 0:
            return float("nan")
        n = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
        total = 0.0
        for i, (x, y) in enumerate(data_loader):
            if i > n:  # one batch too late: batches 0 .. n are used
                break
            total += calc_loss_batch(x, y, model, device).item()
        return total / n

    return [
        ("each token is weighted equally: the task's loss is the mean of the batch losses (a partial last "
         "batch counts as much as a full one)", token_weighted),
        ("the sum is divided by len(data_loader), not by the number of batches used", divides_by_loader_length),
        ("num_batches is larger than the loader here, and the sum of the loader's batches is divided by "
         "num_batches itself: use min(num_batches, len(data_loader)) batches and divide by that number",
         divides_by_num_batches),
        ("the loop stops one batch late (if i > num_batches: break), adding num_batches + 1 batch losses: "
         "batches 0 .. num_batches - 1 are the first num_batches, so stop when i >= num_batches",
         breaks_one_batch_late),
    ]


def _train_model_simple_with(eval_after_step=False, tokens_as_rows=False, reset_each_epoch=False):
    """The reference train_model_simple with one line changed: evaluate when (step + 1) % eval_freq
    == 0, count tokens as sequences (shape[0]), or restart the step count every epoch."""
    replacements = {}
    if eval_after_step:
        replacements["if global_step % eval_freq == 0:"] = "if (global_step + 1) % eval_freq == 0:"
    if tokens_as_rows:
        replacements["tokens_seen += input_batch.numel()"] = "tokens_seen += input_batch.shape[0]"
    if reset_each_epoch:
        replacements["model.train()"] = "model.train(); global_step = -1"
    return reference_with_text_replaced("5.4", "train_model_simple", replacements)


def _mistakes_5_4():
    return [
        ("the evaluations come one step late: evaluate when global_step % eval_freq == 0, with global_step "
         "counted from 0 (the first evaluation right after the first step)", _train_model_simple_with(eval_after_step=True)),
        ("tokens_seen counts sequences, not tokens: add input_batch.numel()", _train_model_simple_with(tokens_as_rows=True)),
        ("the step count starts again every epoch: keep one global_step across epochs",
         _train_model_simple_with(reset_each_epoch=True)),
    ]


def _mistakes_5_5():
    names = reference_objects("5.5")

    def model_only_save(model, optimizer, path):
        torch.save({"model_state_dict": model.state_dict()}, path)

    def model_only_load(path, model, optimizer=None):
        model.load_state_dict(torch.load(path, weights_only=True)["model_state_dict"])

    def unsafe_load(path, model, optimizer=None):
        checkpoint = torch.load(path, weights_only=False)
        model.load_state_dict(checkpoint["model_state_dict"])
        if optimizer is not None:
            optimizer.load_state_dict(checkpoint["optimizer_state_dict"])

    return [
        ("only the model is saved and restored: the optimizer's state (AdamW's moments) must come back too",
         {"save_checkpoint": model_only_save, "load_checkpoint": model_only_load}),
        ("the checkpoint is loaded with weights_only=False, which runs whatever code a pickled object carries",
         dict(names, load_checkpoint=unsafe_load)),
    ]


def _load_weights_with(transpose=True, ln_swapped=False, tie=True):
    """The reference loader with one knob changed (Conv1D weights untransposed, ln_1 and ln_2
    swapped, the output head left as it was)."""
    reference = reference_object("5.6")

    def load_weights_into_gpt(gpt, state_dict):
        sd = dict(state_dict)
        for b in range(len(gpt.trf_blocks)):
            h = f"h.{b}."
            if not transpose:
                for name in ("attn.c_proj.weight", "mlp.c_fc.weight", "mlp.c_proj.weight"):
                    sd[h + name] = sd[h + name].T
                q, k, v = torch.chunk(sd[h + "attn.c_attn.weight"], 3, dim=-1)
                sd[h + "attn.c_attn.weight"] = torch.cat([q.T, k.T, v.T], dim=-1)
            if ln_swapped:
                for part in ("weight", "bias"):
                    sd[h + "ln_1." + part], sd[h + "ln_2." + part] = sd[h + "ln_2." + part], sd[h + "ln_1." + part]
        head = gpt.out_head.weight
        try:
            reference(gpt, sd)
        except ValueError:
            return  # an untransposed non-square weight cannot be loaded at all
        if not tie:
            gpt.out_head.weight = head

    return load_weights_into_gpt


def _loader_sharing_the_checkpoint():
    """The reference loader whose assign() wraps the checkpoint's tensor itself: nn.Parameter(values)
    instead of a copy, so the parameters share memory with the checkpoint."""
    sharing_assign = reference_with_text_replaced("5.6", "assign", {"values.detach().clone()": "values"})
    reference = reference_object("5.6")
    return types.FunctionType(reference.__code__, {**reference.__globals__, "assign": sharing_assign},
                              reference.__name__)


def _mistakes_5_6():
    return [
        ("the parameters share memory with the checkpoint's tensors (nn.Parameter(tensor) wraps the very tensor, "
         "and a slice or .T of it is a view of it): an optimizer step then rewrites the checkpoint; copy the "
         "values, nn.Parameter(tensor.clone())", _loader_sharing_the_checkpoint()),
        ("the Conv1D weights are copied untransposed: GPT-2 stores them (in, out), nn.Linear (out, in), so take .T",
         _load_weights_with(transpose=False)),
        ("ln_1 and ln_2 are swapped: ln_1 is norm1 (before attention), ln_2 is norm2 (before the feed-forward)",
         _load_weights_with(ln_swapped=True)),
        ("the output head is not tied to the token embedding: out_head.weight gets wte.weight",
         _load_weights_with(tie=False)),
    ]


# ------------------------------------------------------------------------------------------
# Each task's cases (public and hidden) and known mistakes, in one place (grader/chapters/__init__.py: GraderSpec)
# ------------------------------------------------------------------------------------------

SPECS = {
    "5.1": GraderSpec(
        public=lambda rng: [
            _encode_case("Every effort moves you"),
            _encode_case("Hello, do you like tea? <|endoftext|> In the sunlit terraces"),
            _decode_case([6109, 3626, 6100, 345], "the ids [[6109, 3626, 6100, 345]] (a batch of one)"),
            _decode_case([6109], "a single token, [[6109]]"),
        ],
        hidden=lambda rng: [
            _encode_case(_random_text(rng, 9)),
            _encode_case(_random_text(rng, 7, special=True), None),
            _encode_case("<|endoftext|>", "the text '<|endoftext|>' alone"),
            _decode_case(_gpt2_ids(_random_text(rng, 10, special=True)), "the ids of a sentence with <|endoftext|>"),
            _decode_case([int(i) for i in rng.integers(0, 50257, size=12)], "12 random token ids"),
        ],
        mistakes=_mistakes_5_1,
        for_device=_for_device),
    "5.2": GraderSpec(
        public=lambda rng: [
            _batch_loss_case(rng, tiny(), 2, 4),
            _batch_loss_case(rng, tiny(vocab_size=11, emb_dim=4), 1, 6),
        ],
        hidden=lambda rng: [
            _batch_loss_case(rng, tiny(vocab_size=17, emb_dim=5), 3, 5),
            _batch_loss_case(rng, tiny(vocab_size=13, emb_dim=4), 2, 1, dtype="float64"),
            _batch_loss_case(rng, gpt(), 2, 6),
            _batch_loss_case(rng, gpt(n_layers=2, drop_rate=0.1), 1, 5, dtype="float64"),
        ],
        mistakes=_mistakes_5_2,
        for_device=_for_device),
    "5.3": GraderSpec(
        public=lambda rng: [
            _loader_loss_case(rng, tiny(), 4, 5, 2),
            _loader_loss_case(rng, tiny(), 5, 5, 2, num_batches=2),
            _loader_loss_case(rng, tiny(), 5, 3, 2, num_batches=10),
            _loader_loss_case(rng, tiny(), 0, 5, 2),
        ],
        hidden=lambda rng: [
            _loader_loss_case(rng, tiny(vocab_size=19), 7, 4, 3),
            _loader_loss_case(rng, tiny(vocab_size=19), 6, 4, 2, num_batches=1),
            _loader_loss_case(rng, tiny(vocab_size=19), 6, 4, 2, num_batches=10),
            _loader_loss_case(rng, tiny(vocab_size=19), 0, 4, 2, num_batches=3),
            _loader_loss_case(rng, gpt(), 4, 6, 2, num_batches=None),
        ],
        mistakes=_mistakes_5_3,
        for_device=_for_device),
    "5.4": GraderSpec(
        public=lambda rng: [_training_case("5.4", rng, tiny(vocab_size=64))],
        hidden=lambda rng: [
            _training_case("5.4", rng, tiny(vocab_size=64), num_epochs=1, eval_freq=1, eval_iter=2),
            _training_case("5.4", rng, gpt(vocab_size=64), num_epochs=2, eval_freq=3, eval_iter=5),
            _training_case("5.4", rng, gpt(vocab_size=64, drop_rate=0.2), train_sequences=5, num_epochs=3, eval_freq=2,
                           eval_iter=1),
        ],
        mistakes=_mistakes_5_4,
        for_device=_for_device),
    "5.5": GraderSpec(
        public=lambda rng: [
            _checkpoint_case(rng, "file"),
            _checkpoint_case(rng, "file", with_optimizer=False, filename="model_only.pth"),
            _checkpoint_case(rng, "unsafe"),
        ],
        hidden=lambda rng: [
            _checkpoint_case(rng, "file", filename="nested name.pt", vocab_size=17, emb_dim=5),
            _checkpoint_case(rng, "file", with_optimizer=False, dtype="float64"),
            _checkpoint_case(rng, "unsafe", vocab_size=9),
        ],
        mistakes=_mistakes_5_5,
        for_device=_for_device),
    # Loaded into GPT2Shaped (GPTModel's parameters under GPTModel's names): the self-check must
    # not depend on the student's own GPTModel (see docs/authoring.md); hidden cases use GPTModel.
    "5.6": GraderSpec(
        public=lambda rng: [
            _weights_case(rng, {"n_layers": 2, "emb_dim": 6, "n_heads": 2, "vocab_size": 30, "context_length": 6},
                          shaped=True),
            _mismatch_case(rng, "c_fc", {"n_layers": 2, "emb_dim": 6, "n_heads": 2, "vocab_size": 30, "context_length": 6},
                           shaped=True),
        ],
        hidden=lambda rng: [
            _weights_case(rng, {"n_layers": 1, "emb_dim": 6, "n_heads": 2, "vocab_size": 30, "context_length": 6}),
            _weights_case(rng, {"n_layers": 2, "emb_dim": 8, "n_heads": 4, "vocab_size": 25, "context_length": 5},
                          batch=1, tokens=5, dtype="float64", with_mask_buffers=False),
            _weights_case(rng, {"n_layers": 3, "emb_dim": 4, "n_heads": 1, "vocab_size": 40, "context_length": 7}),
            _mismatch_case(rng, "c_fc", {"n_layers": 2, "emb_dim": 6, "n_heads": 2, "vocab_size": 30, "context_length": 6}),
            _mismatch_case(rng, "wpe", {"n_layers": 1, "emb_dim": 4, "n_heads": 2, "vocab_size": 20, "context_length": 6}),
            _mismatch_case(rng, "ln_2", {"n_layers": 2, "emb_dim": 4, "n_heads": 2, "vocab_size": 20, "context_length": 6}),
        ],
        mistakes=_mistakes_5_6,
        for_device=_for_device),
    "5.7": GraderSpec(
        public=lambda rng: [
            _schedule_case("a short schedule", 20, 5, 0.01, 1e-4, 1e-5),
            _schedule_case("the notebook's kind of schedule", 30, 3, 6e-3, 6e-5, 6e-5),
            _schedule_training_case(rng, tiny(vocab_size=64), (2.0, 3.0), num_epochs=2, eval_freq=2, eval_iter=1,
                                    lr=0.02, decay_groups=True),
        ],
        hidden=lambda rng: [
            _schedule_case("a longer schedule", 37, 4, 6e-4, 3e-5, 1e-6),
            _schedule_case("warmup of a single step", 9, 1, 0.1, 0.001, 0.0),
            _schedule_case("a rate that starts at the peak", 12, 3, 2e-3, 2e-3, 2e-4),
            _schedule_training_case(rng, tiny(vocab_size=64), (2.0, 3.0), num_epochs=2, eval_freq=2, eval_iter=1,
                                    lr=0.02),
            _schedule_training_case(rng, gpt(vocab_size=64, drop_rate=0.1), (0.7, 1.0), train_sequences=8, num_epochs=1,
                                    eval_freq=3, eval_iter=2, lr=0.02),
            _schedule_training_case(rng, gpt(vocab_size=64), (1.5, 2.0), train_sequences=6, num_epochs=2, eval_freq=2,
                                    eval_iter=1, lr=0.02, decay_groups=True),
        ],
        mistakes=_mistakes_5_7,
        extras=_extras_5_7,
        for_device=_for_device),
}
