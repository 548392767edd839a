"""Kinds of probe: small, reusable ways of exercising a student's code.

A chapter module (chapters/chNN_name.py) gives each of its tasks a kind per case kind, by
picking one of these and filling in what is specific to the task: how to build the
constructor's or the call's arguments from a case, which attributes the spec pins down, how
to judge a random output. A kind knows nothing about any particular task.

Where the kinds live, by what they exercise
-------------------------------------------
- base.py: `Kind`, the base class, and how feedback names a call's arguments;
- modules.py: nn.Modules, through their constructor and forward (ModuleForward, ModuleDropout,
  ModuleSize, ModuleSteps) and constructors or calls that must refuse (RaisesOnConstruct,
  RaisesOnCall), with the hints for module code;
- functions.py: plain functions and a class's methods (Function, Repeated, Methods);
- data.py: the data pipeline: data sets, loaders, a file written and read back (Dataset,
  Loader, FileRoundTrip);
- training.py: a training function driving a small model (TrainingLoop), with its spies on
  the model and the optimizer;
- sampling.py: a random sampler drawn many times (Sampler);
- statistics.py: the counting statistics Sampler judges with (binomial_acceptance).
Each module's docstring has a table of its kinds and the observations they record.

Words as this code uses them (docs/authoring.md has the whole list)
-------------------------------------------------------------------
- task: one graded function or class a student writes (a row of gptcourse.checking.course).
- case: one way of exercising a task, a `records.Case` of plain data: inputs and weights
  (`arrays`), constructor or call arguments (`args`), and a case kind (`case.kind`: "forward",
  "dropout", "raises", ...) that says which kind runs it.
- kind: an instance of a `Kind` subclass from this package, which a chapter module registers
  in the task's TaskSpec.probes[case kind]; `probes.kind_of(case)` finds it.
- probe: one run of a kind on one case. `Kind.probe(probe)` gets `probe`, a `probes.Probe` holding
  the case, the context (`probe.ctx`: graded names, scratch folder, seed, tokenizer) and the
  student's object (`probe.obj`); `probe.step` says what is being done, for the message if it fails.
- observation: one entry of the flat dict of plain values a probe records (`probe.record`,
  `probe.record_value`) under a key: "out", "grad/x", "item/3". The judge (judge.py) compares the
  student's observations (`got`) with the reference's (`expected`) key by key.
- message: what the student reads about a task; a kind's fixed sentence for one wrong
  observation is its `messages[key]`.
- owned observation: a random output that cannot equal the reference's; the kind judges it
  itself (`owns(key)`, then `judge_key(key, got, expected, case)` -> message or None).
- hint: a function (key, got, expected, case) -> a sentence that explains why an observation
  is wrong ("" when it does not apply); the judge tries the task's TaskSpec.hints, then
  the kind's `hints`.
- device pass: the case run once more on PyTorch's meta device, for kinds with
  `device_pass = True`, to catch tensors created on the wrong device (see probes.py).

Chapter modules use these as `from gptcourse import kinds` then `kinds.ModuleForward(...)`:
every name they use is imported here.
"""
from .base import Kind
from .data import Dataset, FileRoundTrip, Loader
from .functions import Function, Methods, Repeated, as_number
from .modules import ModuleDropout, ModuleForward, ModuleSize, ModuleSteps, RaisesOnCall, RaisesOnConstruct
from .sampling import Sampler
from .statistics import binomial_acceptance
from .training import TrainingLoop

__all__ = [
    "Kind",
    "ModuleForward", "ModuleDropout", "ModuleSize", "ModuleSteps", "RaisesOnConstruct", "RaisesOnCall",
    "Function", "Repeated", "Methods",
    "Dataset", "Loader", "FileRoundTrip",
    "TrainingLoop",
    "Sampler",
    "as_number", "binomial_acceptance",
]
