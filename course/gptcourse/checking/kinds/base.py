"""What every kind shares: the `Kind` base class and how feedback names a call.

A kind subclasses `Kind` and overrides `probe`; the other members have defaults that mean
"nothing special": no device pass, no fixed messages, no hints, no observation judged by
the kind itself.

- probe(probe): runs one case. `probe` is a `probes.Probe`: the case, the context (`probe.ctx`:
  graded names, scratch folder, seed, tokenizer) and the student's object (`probe.obj`);
  `probe.step` says what is being done, for the message if it fails; observations are recorded
  with `probe.record` and `probe.record_value`.
- device_pass: True when the kind's cases run once more on PyTorch's meta device (probes.py).
- messages: {key: the fixed sentence for a wrong observation under that key}.
- hints: functions (key, got, expected, case) -> a sentence that explains why an observation is
  wrong, "" when it does not apply; the judge tries the task's TaskSpec.hints first.
- owns(key), judge_key(key, got, expected, case) -> message or None: the owned observations,
  random outputs that cannot equal the reference's, which the kind judges itself.

The words mean what docs/authoring.md's vocabulary says.
"""
import torch


class Kind:
    device_pass = False
    messages = {}
    hints = ()
    returned = ()  # the observations that hold what the graded function returned (None is then said first)

    def probe(self, probe):
        raise NotImplementedError

    def owns(self, key):
        return False

    def judge_key(self, key, got, expected, case):
        return None


def _describe_call(probe, positional, keywords):
    """'attn_scores, d_k=2': inputs by their case name, other values by a short repr."""
    names = {id(given): name for name, (_, given) in probe.inputs.items()}

    def show(value):
        if id(value) in names:
            return names[id(value)]
        if isinstance(value, torch.Tensor):
            return f"a tensor of shape {tuple(value.shape)}"
        if isinstance(value, torch.nn.Module) and not type(value).__module__.startswith("torch."):
            return "model"  # a small test model of the check's own: its class and repr say nothing to a student
        text = repr(value)
        if "\n" in text or len(text) > 40:
            if isinstance(value, torch.nn.Module):
                return f"an nn.{type(value).__name__}"
            return f"a {type(value).__name__}" if type(value).__module__.split(".")[0] in ("builtins", "torch",
                                                                                     "pandas", "numpy") else "..."
        return text

    return ", ".join([show(v) for v in positional] + [f"{k}={show(v)}" for k, v in keywords.items()])
