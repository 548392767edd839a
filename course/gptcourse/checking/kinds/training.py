"""The kind that runs a student's training function, and the spies it puts on the model and
the optimizer to see how the loop drives them.

| kind         | exercises                              | observations                              |
|--------------|----------------------------------------|-------------------------------------------|
| TrainingLoop | a training function on a small model   | returned, optimizer_calls, forward_calls, |
|              |                                        | training_mode_after, lr_per_step,         |
|              |                                        | grad_norm_per_step, param/<name>          |
"""
import contextlib
import io

import torch

from .base import Kind


class TrainingLoop(Kind):
    """A training function run on a small model the kind builds from the case.

    build(probe) -> dict of objects with at least "model" and "optimizer" (and loaders...);
    call(probe, fn, objects) calls the student's function and returns its result. Recorded:
    the returned value, how often optimizer.step() and .zero_grad() were called, whether
    the model is left in train mode, and every parameter afterwards. Torch's random numbers
    are seeded from the case first, so the reference and a student who draws the same
    numbers in the same order agree exactly.

    spy: a hook on the model notes the mode (train/eval) and the gradient mode of every
    forward call: `forward_calls` counts each combination (owned: training calls must be as
    many as the reference's, evaluation calls in eval mode without gradients, how many is
    free). name: the graded name to call (default: the task's first). optimizer_view: at
    every optimizer.step() the learning rate of the first parameter group and the norm of all
    gradients (what clipping changes) are noted: `lr_per_step`, `grad_norm_per_step`; with
    several parameter groups also every group's rate, `lr_per_group_per_step` (a schedule sets
    them all).
    """

    TRAINING, EVALUATION = "train mode, gradients on", "eval mode, gradients off"
    returned = ("returned",)
    EVAL_WITH_GRAD, TRAIN_WITHOUT_GRAD = "eval mode, gradients on", "train mode, gradients off"

    def __init__(self, build, call, spy=False, optimizer_view=False, name=None):
        self.build = build
        self.call = call
        self.name = name  # the graded name to call (default: the task's first)
        self.spy = spy
        self.optimizer_view = optimizer_view

    def probe(self, probe):
        probe.step = "building the small model the test trains"
        objects = self.build(probe)
        model, optimizer = objects["model"], objects["optimizer"]
        steps = _watch_steps(optimizer, model) if self.optimizer_view else None
        counts = _count_calls(optimizer, ("step", "zero_grad"))
        calls = _spy_forward_calls(model) if self.spy else None
        torch.manual_seed(probe.ctx.seed % 2**31)
        fn = probe.name(self.name) if self.name else probe.obj
        probe.step = f"calling {getattr(fn, '__name__', 'your training function')}(...)"
        with contextlib.redirect_stdout(io.StringIO()):  # the loop's progress lines are not feedback
            result = self.call(probe, fn, objects)
        # The judge reads the observations in this order: what went wrong in the loop (calls,
        # modes, rates, clipping) before what follows from it (the returned losses, the weights).
        probe.record_value("optimizer_calls", dict(counts), "the optimizer calls")
        if calls is not None:
            probe.record_value("forward_calls", self._count_modes(calls), "the model's forward calls by mode")
        probe.record_value("training_mode_after", bool(model.training), "the model's mode afterwards")
        if steps is not None:
            probe.record_value("lr_per_step", steps["lr"], "the learning rate at each optimizer step")
            if len(optimizer.param_groups) > 1:
                probe.record_value("lr_per_group_per_step", steps["lr_per_group"],
                               "the learning rate of every parameter group at each optimizer step")
            probe.record_value("grad_norm_per_step", steps["grad_norm"], "the gradient norm at each optimizer step")
        probe.record_value("returned", result, "the returned value")
        for name, param in sorted(model.named_parameters()):
            probe.record(f"param/{name}", param, f"parameter {name}")

    def _count_modes(self, calls):
        names = {(True, True): self.TRAINING, (False, False): self.EVALUATION,
                 (False, True): self.EVAL_WITH_GRAD, (True, False): self.TRAIN_WITHOUT_GRAD}
        counts = dict.fromkeys(names.values(), 0)
        for mode in calls:
            counts[names[mode]] += 1
        return counts

    def owns(self, key):
        return key in ("forward_calls", "optimizer_calls")

    def judge_key(self, key, got, expected, case):
        have, want = got.get(key), expected[key]
        if not isinstance(have, dict):
            return f"{key.replace('_', ' ')} could not be observed"
        if key == "optimizer_calls":
            return self._optimizer_calls_problem(have, want)
        return self._forward_calls_problem(have, want)

    @staticmethod
    def _optimizer_calls_problem(have, want):
        """step() exactly as often as the reference; zero_grad() at least as often (an extra
        call, before the first batch say, changes nothing)."""
        steps, zeroed = have.get("step", 0), have.get("zero_grad", 0)
        if steps != want["step"]:
            return (f"optimizer.step() was called {steps} times, expected {want['step']}: one step per batch, "
                    f"after loss.backward()")
        if zeroed < want["zero_grad"]:
            return (f"optimizer.zero_grad() was called {zeroed} times, expected {want['zero_grad']}: without it "
                    f"each batch's gradients add up to the previous ones; call it once per batch, before "
                    f"loss.backward()")
        return None

    def _forward_calls_problem(self, have, want):
        trained, wanted = have.get(self.TRAINING, 0), want[self.TRAINING]
        if have.get(self.EVAL_WITH_GRAD, 0) and trained < wanted:
            return (f"{have[self.EVAL_WITH_GRAD]} training steps ran with the model in eval mode: after "
                    f"evaluating, switch back with model.train() before the next batch (dropout must be "
                    f"on while training)")
        if have.get(self.EVAL_WITH_GRAD, 0):
            return (f"{have[self.EVAL_WITH_GRAD]} evaluation calls of the model ran with gradients on: "
                    f"evaluate inside `with torch.no_grad():`, which builds no graph and saves memory")
        if have.get(self.TRAIN_WITHOUT_GRAD, 0):
            return (f"{have[self.TRAIN_WITHOUT_GRAD]} evaluation calls of the model ran in train mode: call "
                    f"model.eval() before evaluating (it turns dropout off), and model.train() afterwards")
        if trained != wanted:
            return (f"the model ran {trained} times with gradients in train mode, expected {wanted}: one "
                    f"forward pass per batch, for every batch of every epoch")
        if want.get(self.EVALUATION, 0) and not have.get(self.EVALUATION, 0):
            return "the model was never evaluated (in eval mode, without gradients)"
        return None


def _spy_forward_calls(model):
    """A list that gets (model.training, torch.is_grad_enabled()) at every forward call."""
    calls = []
    model.register_forward_pre_hook(lambda module, inputs: calls.append((module.training, torch.is_grad_enabled())))
    return calls


def _watch_steps(optimizer, model):
    """Wrap optimizer.step so that every call notes the first group's learning rate, every
    group's, and the norm of all the model's gradients at that moment (after any clipping)."""
    seen = {"lr": [], "lr_per_group": [], "grad_norm": []}
    original = optimizer.step

    def step(*args, **kwargs):
        seen["lr"].append(float(optimizer.param_groups[0]["lr"]))
        seen["lr_per_group"].append([float(group["lr"]) for group in optimizer.param_groups])
        grads = [param.grad.detach().double().pow(2).sum() for param in model.parameters() if param.grad is not None]
        seen["grad_norm"].append(float(torch.stack(grads).sum().sqrt()) if grads else 0.0)
        return original(*args, **kwargs)

    optimizer.step = step
    return seen


def _count_calls(obj, methods):
    """Wrap obj's methods (on the instance) so that their calls are counted."""
    counts = {name: 0 for name in methods}
    for name in methods:
        original = getattr(obj, name)

        def counted(*args, _name=name, _original=original, **kwargs):
            counts[_name] += 1
            return _original(*args, **kwargs)

        setattr(obj, name, counted)
    return counts
