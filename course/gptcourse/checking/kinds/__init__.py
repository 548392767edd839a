"""Kinds of probe: small, reusable ways of exercising a student's code.

A public chapter module (chapters/chNN_name.py) gives each of its tasks a kind per case kind, by
picking one of these and filling in what is specific to the task: how to build the
constructor's or the call's arguments from a case, which attributes the contract pins down, how
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

Words
-----
Task, case, case kind, kind, probe, observation, owned observation, hint, message, device pass:
each means what the vocabulary in docs/authoring.md ("Words, as the code uses them") says, the
one list of the course's words.

Chapter modules use these as `from gptcourse.checking import kinds` then
`kinds.ModuleForward(...)`: every name they use is imported here.
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
