"""gptcourse: the student package of the GPT-from-scratch course.

    from gptcourse import check, get_device, get_encoding, fetch, read_text, progress_bar, show_text

The package has two parts, by who uses them:

- here, at the top: what a notebook calls. Data and tokenizer (data, tokenizer), the device
  and what it can do (device, runtime), plots, progress bars, the training and decoding
  helpers of chapters 05-09 (pretrain, speedups, kvcache, gpt2_weights, finetune, instruct,
  evaluate), the carry-over cell (carry) and the one-line messages for unfinished tasks
  (notebook), and how every course message is broken between words for the page (messages).
  `links` says where the course is published; `lab_settings`, the JupyterLab settings the course
  sets where it starts JupyterLab (`make lab`, the hub); `busy_kernels`, the course hub's server
  extension that keeps a server whose kernel runs a cell from being stopped as idle;
  `validate_in_background`, its server extension that runs nbgrader's Validate in a process of its
  own, so the server keeps answering; `chat`, the
  chat panel that talks to the student's own model in the notebook (chapters 06 and 09);
  `challenge`, the rules, the entry check and the dry run of chapter 05's class challenge. `ddp_pretrain` is a program, not a
  helper: chapter 05's training on several GPUs, started with torchrun.
- `gptcourse.checking`: the machinery behind `check(...)` and the grader, which a student
  never needs to read (see its __init__).

The names below are loaded on first use, so that `import gptcourse.checking.worker_host` (the
grader's worker processes) or `gptcourse.data` does not pay for importing torch before it
needs to.
"""
import importlib

__all__ = ["check", "SelfCheckFailed", "fetch", "read_text", "get_device", "get_encoding", "progress_bar", "show_text"]
__version__ = "0.1.0"

_HOME = {"check": "checking.selfcheck", "SelfCheckFailed": "checking.selfcheck", "fetch": "data", "read_text": "data",
         "get_device": "device", "get_encoding": "tokenizer", "progress_bar": "progress", "show_text": "messages"}


def __getattr__(name):
    if name not in _HOME:
        raise AttributeError(f"module 'gptcourse' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_HOME[name]}", __name__), name)
    globals()[name] = value  # next time a plain lookup
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
