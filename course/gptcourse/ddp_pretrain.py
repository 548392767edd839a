"""Pretrain your GPTModel on several GPUs at once (or several CPU processes): data parallelism.

    torchrun --standalone --nproc_per_node=2 -m gptcourse.ddp_pretrain \\
        --notebook 05_pretraining.ipynb --device cpu --steps 20

torchrun starts `--nproc_per_node` copies of this program, gives each a number, its *rank*
(0, 1, ...), in environment variables, and lets them find each other. Every process then

1. takes your GPTModel from your saved chapter 05 notebook, as its carry-over cells bring it in
   (from 04_gpt_model.ipynb beside the notebook, or from its paste cell);
2. builds the model from the same seed, so every copy starts with the same weights, and wraps
   it in DistributedDataParallel (DDP);
3. trains on its own share of every batch: a DistributedSampler shuffles the training windows
   in the same order in every process and deals them out, `batch_size / world_size` windows per
   process and step, so the *global* batch stays `--batch-size` whatever the number of processes;
4. and in `loss.backward()` DDP averages the gradients of all processes. Every process then
   holds the gradient of the whole global batch and takes the same optimizer step, so the
   copies stay identical without ever sending a weight.

Process 0 alone prints, evaluates and saves checkpoints; the others only train. A checkpoint is
Task 5.5's dictionary ("model_state_dict", "optimizer_state_dict") plus the step it was taken
after and the run's settings; a run started again with the same `--out` folder resumes from it.

Why a script and not a notebook cell: each process is a separate Python program with its own
memory and its own GPU, and a notebook's kernel is one process. torchrun starts the processes;
the notebook can only start torchrun (chapter 05's section 10 does, with `launch`).

On CUDA each process drives one GPU and the processes talk through NCCL, NVIDIA's library for
GPU-to-GPU communication; on a CPU they talk through gloo. On a GPU the training step is the
fast one of chapter 05's section 9 (`gptcourse.speedups`: whatever the card supports); on a CPU
it is the plain step of your own model (`--fast-path on` to try the fast one there too).
"""
from __future__ import annotations

import argparse
import codecs
import dataclasses
import inspect
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset
from tqdm.auto import tqdm

from .carry import CellFailed, setup_and_carried_names
from .data import read_text
from .pretrain import pick_run
from .progress import progress_bar
from .runtime import autocast, runtime_profile
from .speedups import (PaddedOutputHead, SpeedSettings, TrainingStep, next_token_loss, pad_vocabulary,
                       set_tf32, speed_ladder, synchronize, use_flash_attention)
from .tokenizer import get_encoding

CHECKPOINT_NAME = "checkpoint.pth"
DEFAULT_OUT = "ddp_run"
EXIT_RUN_ERROR = 2  # a problem this program explains in one line (like argparse's usage errors)
GPT_MODEL_TASK = "Task 4.5 (GPTModel)"
TRAIN_SHARE = 0.9  # of the text's characters, as in the notebook; the rest is for validation
TIMING_SKIP_STEPS = 3  # tokens per second are measured after these (torch.compile compiles in them)
SPEAKER_GRACE_SECONDS = 30  # how long the other processes wait for process 0 to say a problem


# DDP would otherwise send process 0's buffers (the causal masks) to the others before every
# forward pass; they never change, and every process built the same. (Recent PyTorch, 2.13 here,
# calls the option forward_sync_buffers and warns about the old name; older versions know only
# broadcast_buffers.)
_NO_BUFFER_SYNC_BEFORE_FORWARD = ({"forward_sync_buffers": False}
                                  if "forward_sync_buffers" in inspect.signature(DistributedDataParallel).parameters
                                  else {"broadcast_buffers": False})


class RunError(Exception):
    """Something the student can fix, said in one line, and every process exits with status 2.

    Most problems every process meets alike (the same notebook, the same options): process 0
    alone says them. A problem only some processes meet says who speaks (`speaker`)."""

    def __init__(self, message, speaker=None):
        super().__init__(message)
        self.speaker = speaker  # True or False for this process; None: process 0

    def said_by(self, process):
        return process.is_main if self.speaker is None else self.speaker


@dataclasses.dataclass(frozen=True)
class Process:
    """Who this process is among those torchrun started (its environment variables say)."""

    rank: int = 0  # 0 .. world_size - 1, over all machines
    local_rank: int = 0  # on this machine: which GPU it drives
    world_size: int = 1
    launched: bool = False  # started by torchrun (False: a plain `python -m`, one process)

    @property
    def is_main(self):
        return self.rank == 0

    @classmethod
    def from_environment(cls):
        env = os.environ
        if "RANK" not in env:
            return cls()
        return cls(int(env["RANK"]), int(env.get("LOCAL_RANK", 0)), int(env["WORLD_SIZE"]), launched=True)


# ------------------------------------------------------------------------------------------
# The command line
# ------------------------------------------------------------------------------------------

class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line from process 0, not a usage text from every process
        raise RunError(f"{message} (--help lists the options)")


def parse_args(argv=None):
    parser = _Parser(prog="python -m gptcourse.ddp_pretrain", description=__doc__.split("\n\n")[0])
    parser.add_argument("--notebook", required=True,
                        help="your saved chapter 05 notebook (05_pretraining.ipynb): its GPTModel is trained")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                        help="cuda: one GPU per process (NCCL); cpu: gloo; auto: cuda when there is a GPU")
    parser.add_argument("--steps", type=int, default=None,
                        help="optimizer steps in all (default: the notebook's run for this device, all its epochs)")
    parser.add_argument("--batch-size", type=int, default=None,
                        help="the GLOBAL batch: windows per step over all processes (default: the notebook's run)")
    parser.add_argument("--out", default=DEFAULT_OUT,
                        help=f"folder of the checkpoint; a run with a checkpoint there resumes (default: {DEFAULT_OUT})")
    parser.add_argument("--data", default=None,
                        help="a data set of gptcourse.data (default: the notebook's run: the-verdict on a CPU)")
    parser.add_argument("--seed", type=int, default=123, help="the model's weights and the shuffle order")
    parser.add_argument("--config", type=_json_object, default={},
                        help='JSON that changes the model configuration, e.g. \'{"n_layers": 2, "drop_rate": 0.0}\'')
    parser.add_argument("--lr", type=float, default=None,
                        help="AdamW's constant learning rate (default: half the notebook run's peak rate)")
    parser.add_argument("--eval-every", type=int, default=None,
                        help="print the losses every N steps, 0: only at the end (default: the notebook's run)")
    parser.add_argument("--eval-batches", type=int, default=None, help="validation batches per evaluation")
    parser.add_argument("--save-every", type=int, default=100, help="save a checkpoint every N steps, 0: only at the end")
    parser.add_argument("--fast-path", choices=("auto", "on", "off"), default="auto",
                        help="the fast training step of chapter 05's section 9 (auto: on a GPU only)")
    parser.add_argument("--summary", default=None, help="process 0 writes the run's figures there as JSON")
    return parser.parse_args(argv)


def _json_object(text):
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON ({error})") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("give a JSON object, {...}")
    return value


def main(argv=None):
    """The program: train, or say in one line (from process 0) why not; returns the exit status."""
    process = Process.from_environment()
    try:
        train(parse_args(argv), process)
    except RunError as error:
        if error.said_by(process):
            print(f"ddp_pretrain: {error}", flush=True)
        elif process.launched and error.speaker is None:
            # torchrun stops every process as soon as one has ended: leave process 0, which
            # meets the same problem, the time to say it (torchrun then stops this one).
            time.sleep(SPEAKER_GRACE_SECONDS)
        return EXIT_RUN_ERROR
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()
    return 0


# ------------------------------------------------------------------------------------------
# The run
# ------------------------------------------------------------------------------------------

@dataclasses.dataclass
class Plan:
    """What this run trains, on what, how long: the same in every process."""

    cfg: dict
    data: str
    batch_size: int  # global
    steps: int | None  # None: `epochs` epochs, once the data says how many steps an epoch has
    epochs: int
    lr: float
    weight_decay: float
    eval_every: int
    eval_batches: int
    save_every: int
    seed: int
    settings: SpeedSettings

    def identity(self):
        """What a checkpoint must share with this run to be resumed by it (the learning rate,
        the step count and how often to evaluate may change)."""
        return {"config": self.cfg, "data": self.data, "batch_size": self.batch_size, "seed": self.seed}


def train(args, process):
    device = device_for(args.device, process)
    GPTModel = gpt_model_class(args.notebook, process)
    plan = plan_for(args, device)
    per_process = share_of_batch(plan.batch_size, process.world_size)
    train_windows, val_windows = text_windows(plan.data, plan.cfg["context_length"])
    steps_per_epoch = len(train_windows) // plan.batch_size
    if steps_per_epoch == 0:
        raise RunError(f"{plan.data} has {len(train_windows)} training windows of {plan.cfg['context_length']} "
                       f"tokens: fewer than one global batch of {plan.batch_size}. Use a smaller --batch-size")
    plan.steps = plan.steps or plan.epochs * steps_per_epoch

    model = checked_model(GPTModel, plan.cfg, plan.seed)
    # Dropout's masks: each process draws its own, from a seed of its own (with one seed they
    # would drop the same positions of their different windows). With dropout, a run therefore
    # differs from another number of processes' in its masks, and a resumed run from an
    # uninterrupted one; without dropout (the CPU run), only by rounding.
    torch.manual_seed(plan.seed + 1 + process.rank)
    join_the_other_processes(device, process)
    say = Reporter(process)
    out = Path(args.out)
    checkpoint = read_checkpoint(out / CHECKPOINT_NAME, plan)
    start = agreed_start(checkpoint["step"] if checkpoint else 0, out)
    say(f"{process.world_size} process{'es' if process.world_size > 1 else ''} on {device.type}, "
        f"global batch {plan.batch_size} ({per_process} per process), {plan.steps} steps on {plan.data}"
        + (f"; resuming after step {start} from {out / CHECKPOINT_NAME}" if checkpoint else ""))
    if start >= plan.steps:
        say(f"nothing to do: the checkpoint is from step {start}, and --steps is {plan.steps}")
        return
    step = ddp_training_step(model, checkpoint, plan, device)
    if process.is_main:
        out.mkdir(parents=True, exist_ok=True)
        (out / (CHECKPOINT_NAME + ".tmp")).unlink(missing_ok=True)  # left by a run killed while saving

    loader = share_of_each_batch(train_windows, per_process, process, plan.seed, device)
    figures = training_loop(step, loader, val_windows, plan, start, out, say)
    dist.barrier()  # every process ends once process 0 has saved
    if process.is_main and args.summary:
        Path(args.summary).write_text(json.dumps(dict(figures, world_size=process.world_size, device=device.type,
                                                      batch_size=plan.batch_size,
                                                      context_length=plan.cfg["context_length"]), indent=1))


def ddp_training_step(model, checkpoint, plan, device):
    """The training step (gptcourse.speedups.TrainingStep) of the model wrapped in DDP, with the
    checkpoint's weights and AdamW state when there is one. Its `.model.module` is the model."""
    if checkpoint:
        model.load_state_dict(checkpoint["model_state_dict"])  # before the fast path changes its layout
    model = with_speedups(model, plan).to(device)
    ddp_model = DistributedDataParallel(model, device_ids=[device.index] if device.type == "cuda" else None,
                                        **_NO_BUFFER_SYNC_BEFORE_FORWARD)
    step = TrainingStep(ddp_model, plan.settings, device, lr=plan.lr, weight_decay=plan.weight_decay)
    if checkpoint:
        step.optimizer.load_state_dict(optimizer_state_for(model, checkpoint["optimizer_state_dict"]))
    return step


def share_of_each_batch(windows, per_process, process, seed, device):
    """This process's data loader: `per_process` windows per step, its share of every global
    batch. The sampler shuffles with `seed` (the same order in every process) and gives this
    process every world_size-th window of that order, from the rank-th on."""
    sampler = DistributedSampler(windows, num_replicas=process.world_size, rank=process.rank, shuffle=True,
                                 seed=seed, drop_last=True)
    return DataLoader(windows, batch_size=per_process, sampler=sampler, drop_last=True,
                      pin_memory=device.type == "cuda")


def training_loop(step, loader, val_windows, plan, start, out, say):
    """Train from step `start` to plan.steps; process 0 evaluates, saves and times. Returns
    {"steps", "val_loss", "timed_steps", "seconds", "tokens_per_second"} (all filled on process 0)."""
    model, device = step.model.module, step.device  # the model inside DDP; its device
    losses, val_loss = [], None
    clock = StepClock(start, plan.steps, device)
    bar = progress_bar(total=plan.steps, initial=start, desc="training (process 0)", unit="step",
                       disable=not say.is_main, file=sys.stdout)
    for done, (inputs, targets) in enumerate(batches_from(loader, start, plan.steps), start=start + 1):
        losses.append(step(inputs.to(device, non_blocking=True), targets.to(device, non_blocking=True)))
        bar.update(1)
        clock.step_done(done)
        if done == plan.steps or (plan.eval_every and done % plan.eval_every == 0):
            val_loss = report_losses(losses, model, val_windows, plan, loader.batch_size, device, done, say)
            losses = []
        if done == plan.steps or (plan.save_every and done % plan.save_every == 0):
            if say.is_main:
                save_checkpoint_atomically(out / CHECKPOINT_NAME, model, step.optimizer, done, plan)
                say(f"saved step {done} to {out / CHECKPOINT_NAME}")
    bar.close()
    figures = dict(clock.figures(plan.batch_size * plan.cfg["context_length"]), steps=plan.steps, val_loss=val_loss)
    if figures["tokens_per_second"]:
        say(f"{figures['tokens_per_second']:,.0f} tokens per second over steps {clock.first + 1} to {clock.last} "
            f"(all processes together)")
    return figures


class StepClock:
    """Times the training steps after the first few (torch.compile compiles in them) up to the
    last one: evaluations and saves between them count, those after the last step do not."""

    def __init__(self, start, steps, device):
        self.first = start + min(TIMING_SKIP_STEPS, steps - start - 1)  # the clock starts once this step is done
        self.last, self.device = steps, device
        self.started = self.seconds = None

    def step_done(self, done):
        if done not in (self.first, self.last):
            return
        synchronize(self.device)  # the GPU runs behind the Python code: wait for this step
        now = time.perf_counter()
        if done == self.first:
            self.started = now
        elif self.started is not None:
            self.seconds = now - self.started

    def figures(self, tokens_per_step):
        timed = self.last - self.first
        speed = timed * tokens_per_step / self.seconds if self.seconds else None
        return {"timed_steps": timed if self.seconds else 0, "seconds": self.seconds, "tokens_per_second": speed}


def batches_from(loader, start, steps):
    """The batches of steps start+1 .. steps: epoch after epoch, each shuffled anew, beginning
    where a run that stopped after step `start` left off (the same batches it would have had)."""
    epoch, skip = divmod(start, len(loader))
    remaining = steps - start
    while remaining > 0:
        loader.sampler.set_epoch(epoch)  # this epoch's order: the same in every process, new every epoch
        for batch in itertools.islice(loader, skip, skip + remaining):
            yield batch
            remaining -= 1
        epoch, skip = epoch + 1, 0


def report_losses(losses, model, val_windows, plan, batch_size, device, done, say):
    """Every process: the mean training loss since the last report, over all processes. Process 0
    then measures the validation loss, prints both and returns it (the others return None)."""
    train_loss = mean_over_processes(torch.stack(losses).mean(), device)
    if not say.is_main:
        return None
    val_loss = validation_loss(model, val_windows, batch_size, plan.eval_batches, device, plan.settings)
    say(f"step {done}/{plan.steps}: training loss {train_loss:.3f} (the last {len(losses)} steps, all processes), "
        f"validation loss {val_loss:.3f}")
    return val_loss


# ------------------------------------------------------------------------------------------
# The pieces: device, processes, plan, data, model, checkpoints
# ------------------------------------------------------------------------------------------

def device_for(requested, process):
    """cpu, or this process's own GPU: cuda:<local rank>."""
    if requested == "auto":
        requested = "cuda" if torch.cuda.is_available() else "cpu"
    if requested == "cpu":
        return torch.device("cpu")
    if not torch.cuda.is_available():
        raise RunError("--device cuda, but PyTorch sees no CUDA GPU on this machine: use --device cpu")
    count = torch.cuda.device_count()
    if process.local_rank >= count:  # only the processes beyond the GPUs meet this: the first of them says it
        raise RunError(f"this machine has {count} GPU{'s' if count > 1 else ''}: start at most {count} processes "
                       f"on it (--nproc_per_node={count})", speaker=process.local_rank == count)
    torch.cuda.set_device(process.local_rank)
    return torch.device("cuda", process.local_rank)


def join_the_other_processes(device, process):
    """Start the process group: gloo between CPU processes, NCCL between GPUs. torchrun told
    every process where to meet (MASTER_ADDR, MASTER_PORT); a plain `python -m` is a group of one."""
    backend = "nccl" if device.type == "cuda" else "gloo"
    # Naming the GPU lets NCCL set up at once (PyTorch 2.3 and later know the option).
    gpu = {"device_id": device} if device.type == "cuda" and "device_id" in inspect.signature(
        dist.init_process_group).parameters else {}
    if process.launched:
        dist.init_process_group(backend, **gpu)
    else:  # a group of one, with a store in this process's memory: no port to open
        dist.init_process_group(backend, store=dist.HashStore(), rank=0, world_size=1, **gpu)


def agreed_start(start, out):
    """The step every process resumes after. Every process reads the checkpoint itself (each
    needs AdamW's state); on several machines --out must therefore be a folder they share, or
    some would start afresh while others resume, and their copies of the model would differ."""
    found = torch.tensor([start, -start], dtype=torch.float64)
    if dist.get_backend() == "nccl":
        found = found.cuda()
    dist.all_reduce(found, op=dist.ReduceOp.MAX)  # the largest start, and minus the smallest
    latest, earliest = int(found[0]), -int(found[1])
    if latest != earliest:
        raise RunError(f"the processes found different checkpoints in {out} (after steps {earliest} and {latest}): "
                       f"on several machines, --out must be a folder that all of them share")
    return start


def plan_for(args, device):
    """The notebook's run for this device (gptcourse.pretrain.pick_run), changed by the options."""
    run = pick_run(device)
    fast = args.fast_path == "on" or (args.fast_path == "auto" and device.type == "cuda")
    settings = speed_ladder(runtime_profile(device))[-1].settings if fast else SpeedSettings()
    plan = Plan(cfg=dict(run.cfg, **args.config), data=args.data or run.data,
                batch_size=args.batch_size or run.batch_size, steps=args.steps, epochs=run.num_epochs,
                lr=args.lr or run.peak_lr / 2,
                weight_decay=run.weight_decay, eval_every=run.eval_freq if args.eval_every is None else args.eval_every,
                eval_batches=args.eval_batches or run.eval_iter, save_every=args.save_every, seed=args.seed,
                settings=settings)
    if plan.steps is not None and plan.steps < 1:
        raise RunError(f"--steps {plan.steps}: train at least one step")
    return plan


def share_of_batch(batch_size, world_size):
    """Windows per process and step: the global batch split evenly."""
    if batch_size < 1 or batch_size % world_size:
        raise RunError(f"a global batch of {batch_size} cannot be split evenly over {world_size} processes: "
                       f"give --batch-size a multiple of {world_size}")
    return batch_size // world_size


def text_windows(data, context_length):
    """(training, validation) data sets of (inputs, targets) windows, as the notebook makes them:
    the first 90 % of the text's characters for training, windows of context_length tokens that
    touch without overlapping, the targets shifted by one token."""
    text = read_text(data)
    split = int(TRAIN_SHARE * len(text))
    return windows(text[:split], context_length), windows(text[split:], context_length)


def windows(text, context_length):
    ids = torch.tensor(get_encoding().encode(text, allowed_special={"<|endoftext|>"}))
    if len(ids) <= context_length:
        return TensorDataset(torch.empty(0, context_length, dtype=torch.long), torch.empty(0, context_length, dtype=torch.long))
    # Rows of context_length + 1 tokens, one every context_length tokens: each row is a window
    # and the token after it, so that neighbouring windows touch.
    rows = ids.unfold(0, context_length + 1, context_length)
    return TensorDataset(rows[:, :-1], rows[:, 1:])


def gpt_model_class(notebook, process):
    """Your GPTModel, from the saved notebook's carry-over or paste cell. Process 0 prints what
    the carry-over cells said about it."""
    path = Path(notebook)
    if not path.is_file():
        raise RunError(f"no notebook at {notebook}: give --notebook the path of your saved chapter 05 notebook "
                       f"(05_pretraining.ipynb)")
    try:
        namespace, printed = setup_and_carried_names(str(path))
    except CellFailed as failure:
        raise RunError(f"{path.name} could not bring in {GPT_MODEL_TASK}: {failure}. Fix it and save the notebook") from None
    except (ValueError, KeyError, TypeError) as error:  # not JSON, or JSON without cells
        raise RunError(f"{notebook} is not a notebook that can be read ({type(error).__name__}: {error})") from None
    said = [line.strip() for line in printed.splitlines() if "GPTModel" in line]
    if "GPTModel" not in namespace:
        raise RunError(f"{GPT_MODEL_TASK} is not in {path.name}: its carry-over cells said: {' / '.join(said)} "
                       f"Keep 04_gpt_model.ipynb (and 03_multihead_attention.ipynb) beside it, or paste your "
                       f"GPTModel into its paste cell, and save the notebook")
    if process.is_main:  # where it came from, and what its check said ("Brought GPTModel from ...; its self-check passed.")
        for line in said:
            if "self-check" in line:
                print(f"{path.name}: {line}", flush=True)
    return namespace["GPTModel"]


def checked_model(GPTModel, cfg, seed):
    """GPTModel(cfg), built from `seed`, after a forward pass that shows it returns logits."""
    torch.manual_seed(seed)  # every process builds the same weights (DDP would copy process 0's anyway)
    try:
        model = GPTModel(cfg)
    except Exception as error:  # noqa: BLE001 - your class may raise anything
        raise RunError(f"{GPT_MODEL_TASK} could not be built with {cfg}: it raised {_described(error)}") from None
    ids = torch.zeros(2, 4, dtype=torch.long)  # a batch of 2 texts of 4 tokens
    model.eval()  # no dropout: the check draws no random numbers
    try:
        with torch.no_grad():
            logits = model(ids)
    except Exception as error:  # noqa: BLE001
        raise RunError(f"{GPT_MODEL_TASK} failed on a batch of token ids of shape (2, 4): it raised "
                       f"{_described(error)}") from None
    finally:
        model.train()
    wanted = (2, 4, cfg["vocab_size"])
    if not isinstance(logits, torch.Tensor) or tuple(logits.shape) != wanted:
        got = tuple(logits.shape) if isinstance(logits, torch.Tensor) else type(logits).__name__
        raise RunError(f"{GPT_MODEL_TASK} returned {got} for token ids of shape (2, 4), not logits of shape {wanted}")
    return model


def _described(error):
    """'NameError at line 3 of <04_gpt_model.ipynb, cell task-4-5>: name ... is not defined'."""
    where, tb = "", error.__traceback__
    while tb is not None:  # the innermost line of a notebook cell
        filename = tb.tb_frame.f_code.co_filename
        if ".ipynb, cell" in filename:
            where = f" at line {tb.tb_lineno} of {filename}"
        tb = tb.tb_next
    if not str(error) and isinstance(error, NotImplementedError):
        return f"NotImplementedError{where} (a stub: is the task finished?)"
    return f"{type(error).__name__}{where}" + (f": {error}" if str(error) else "")


def with_speedups(model, plan):
    """The model with the fast path's changes to it (flash attention, a padded output head),
    when the plan's settings have them; their weights are the model's own."""
    set_tf32(plan.settings.tf32)  # a switch for the whole process
    if plan.settings.flash_attention:
        your_attention = type(model.trf_blocks[0].att)  # your MultiHeadAttention, as section 9 finds it
        use_flash_attention(model, plan.cfg, your_attention)
    if plan.settings.padded_vocab:
        pad_vocabulary(model)
    return model


# Checkpoints: Task 5.5's dictionary, in the layout of a plain GPTModel whatever the fast path
# changed, so that your load_checkpoint (with the book's key names) reads it into GPTModel(cfg).

def save_checkpoint_atomically(path, model, optimizer, step, plan):
    """Save to a temporary file, then rename it: a run killed while saving leaves the previous
    checkpoint whole (a rename within a folder is atomic), never half a file."""
    model_state, optimizer_state = plain_state_dicts(model, optimizer)
    checkpoint = {"model_state_dict": model_state, "optimizer_state_dict": optimizer_state, "step": step,
                  "run": plan.identity()}
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "wb") as f:
        torch.save(checkpoint, f)
        f.flush()
        os.fsync(f.fileno())  # on the disk before the rename, even if the machine stops
    os.replace(temporary, path)


def read_checkpoint(path, plan):
    """The checkpoint a resumed run starts from, or None when there is none yet."""
    if not path.is_file():
        return None
    try:
        checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as error:  # noqa: BLE001 - not a file torch wrote, or not ours
        raise RunError(f"{path} cannot be read as a checkpoint ({type(error).__name__}): give --out another "
                       f"folder, or delete it to start afresh") from None
    saved = checkpoint.get("run", {})
    different = [key for key, value in plan.identity().items() if saved.get(key) != value]
    if different:
        raise RunError(f"{path} is from a run with another {', '.join(different)}: give --out another folder, "
                       f"or delete it to start afresh")
    return checkpoint


def plain_state_dicts(model, optimizer):
    """(model state, optimizer state) as a plain GPTModel's: a padded output head's weight, and
    AdamW's averages of it, cut back to the real vocabulary and named out_head.weight."""
    model_state, optimizer_state = model.state_dict(), optimizer.state_dict()
    head = getattr(model, "out_head", None)
    if isinstance(head, PaddedOutputHead):
        rows = head.vocab_size
        model_state["out_head.weight"] = model_state.pop("out_head.linear.weight")[:rows].clone()
        index = _parameter_index(model, head.linear.weight)
        averages = optimizer_state["state"].get(index, {})
        optimizer_state["state"][index] = {key: value[:rows].clone() if _is_an_average(value) else value
                                           for key, value in averages.items()}
    return model_state, optimizer_state


def optimizer_state_for(model, optimizer_state):
    """A checkpoint's optimizer state for `model`: with a padded output head, AdamW's averages
    of the head get zero rows for the padding (those rows never have a gradient, so their
    averages are zero in an uninterrupted run too)."""
    head = getattr(model, "out_head", None)
    if not isinstance(head, PaddedOutputHead):
        return optimizer_state
    index = _parameter_index(model, head.linear.weight)
    padding = head.linear.weight.shape[0] - head.vocab_size
    averages = optimizer_state["state"].get(index, {})
    optimizer_state["state"][index] = {
        key: torch.cat([value, value.new_zeros(padding, value.shape[1])]) if _is_an_average(value) else value
        for key, value in averages.items()}
    return optimizer_state


def _parameter_index(model, parameter):
    """The optimizer's number for `parameter`: its place in model.parameters()."""
    return next(i for i, p in enumerate(model.parameters()) if p is parameter)


def _is_an_average(value):
    """AdamW's state of a weight matrix: its two running averages (exp_avg, exp_avg_sq) have the
    matrix's shape; its step count is a number."""
    return isinstance(value, torch.Tensor) and value.dim() == 2


def mean_over_processes(value, device):
    """The mean over all processes of a number (a 0-d tensor) each one has."""
    total = value.detach().to(device=device, dtype=torch.float64).reshape(1)
    dist.all_reduce(total)  # the sum over processes, in place, in every process
    return total.item() / dist.get_world_size()


def validation_loss(model, val_windows, batch_size, num_batches, device, settings):
    """The mean loss over the first `num_batches` validation batches, in eval mode, without
    gradients (process 0 alone: `model` is the module inside DDP, whose forward talks to nobody)."""
    loader = DataLoader(val_windows, batch_size=batch_size)
    model.eval()
    losses = []
    with torch.no_grad(), autocast(device, settings.autocast_dtype):
        for inputs, targets in itertools.islice(loader, num_batches):
            losses.append(next_token_loss(model(inputs.to(device)), targets.to(device)).item())
    model.train()
    return sum(losses) / len(losses) if losses else float("nan")


class Reporter:
    """print() for process 0, out of the way of its progress bar; the other processes stay quiet."""

    def __init__(self, process):
        self.is_main = process.is_main

    def __call__(self, text):
        if self.is_main:
            tqdm.write(text, file=sys.stdout)
            sys.stdout.flush()


# ------------------------------------------------------------------------------------------
# Starting it from a notebook
# ------------------------------------------------------------------------------------------

def this_notebook(name):
    """The running notebook as a file the processes can read: `name` in the current folder
    (Jupyter runs a notebook in its own folder), or on Colab, where the notebook lives in the
    browser and on Drive, a copy of it as it is now in a new temporary folder. None when neither
    works (then save the notebook under `name` in the current folder)."""
    if Path(name).is_file():
        return Path(name)
    try:  # Colab's own request for the open notebook (its private API: it may change)
        from google.colab import _message
        contents = _message.blocking_request("get_ipynb", timeout_sec=30)["ipynb"]
    except Exception:  # noqa: BLE001 - not Colab, or Colab without this request
        return None
    path = Path(tempfile.mkdtemp(prefix="gptcourse_")) / name
    path.write_text(json.dumps(contents), encoding="utf-8")
    return path


def torchrun_command(nproc, notebook, *options):
    """The command that starts `nproc` processes of this program on this machine: torchrun, as
    `python -m torch.distributed.run` of this Python. --standalone: the processes meet at a free
    port that torchrun picks itself."""
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}",
            "-m", "gptcourse.ddp_pretrain", "--notebook", str(notebook), *map(str, options)]


def launch(command, threads_per_process=None):
    """Run `command` (a torchrun_command), showing what process 0 prints as it prints it;
    returns the exit status.

    torchrun reports a failed process with a long traceback of its own internals on stderr;
    the process's one-line message on stdout already says what went wrong, so stderr is shown
    (its last lines) only when the run failed without one. Interrupting the notebook's kernel
    stops torchrun, which stops its processes."""
    env = dict(os.environ)
    if threads_per_process:  # torchrun would set 1 and warn; say it ourselves
        env["OMP_NUM_THREADS"] = str(threads_per_process)
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    errors = []
    reader = threading.Thread(target=lambda: errors.extend(child.stderr.read().decode(errors="replace").splitlines()))
    reader.start()
    try:
        shown = _show_as_it_comes(child.stdout)
    except KeyboardInterrupt:
        child.send_signal(signal.SIGINT)
        child.wait()
        reader.join()
        print("\nstopped: the same command, with the same --out, resumes from the last checkpoint")
        return child.returncode
    status = child.wait()
    reader.join()
    if status != 0:
        if "ddp_pretrain:" not in shown:
            print("\n".join(errors[-15:]))
        print(f"torchrun stopped with exit status {status}")
    return status


def _show_as_it_comes(stream):
    """Copy a child's output to ours in pieces as they come (a progress bar rewrites its line
    with '\\r', which Jupyter understands); returns all of it."""
    decoder, seen = codecs.getincrementaldecoder("utf-8")(errors="replace"), []
    while chunk := os.read(stream.fileno(), 4096):
        text = decoder.decode(chunk)
        seen.append(text)
        sys.stdout.write(text)
        sys.stdout.flush()
    return "".join(seen)


if __name__ == "__main__":
    sys.exit(main())
