"""What every kind shares: the `Kind` base class and how feedback names a call.

A kind subclasses `Kind` and overrides `probe`; the other members have defaults that mean
"nothing special": no device pass, no fixed messages, no hints, no observation judged by
the kind itself. See the package's docstring (kinds/__init__.py) for the vocabulary.
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
        text = repr(value) if not isinstance(value, torch.Tensor) else f"a tensor of shape {tuple(value.shape)}"
        return text if len(text) <= 40 else text[:37] + "..."

    return ", ".join([show(v) for v in positional] + [f"{k}={show(v)}" for k, v in keywords.items()])
