"""Chapter 08's checks that need more than the corpus: what the grader and the self-check
observe of a LoRA layer's random initialisation."""
import torch

from factory import corpus_items, load
from gptcourse.probes import ProbeContext, run_probe
from grader.chapters import chapter_module as hidden_module
from grader.reference import reference_earlier


def initialisation_case():
    return next(case for case in hidden_module("08_lora").public_cases("8.1") if case.kind == "init")


def test_what_a_wrong_initialisation_shows_does_not_depend_on_earlier_random_draws():
    """A is drawn when the layer is built. Unseeded, the figures of the message (A's smallest and
    largest value) changed with whatever the worker process had drawn before, e.g. with the
    order in which it imported the course's modules."""
    item = next(item for item in corpus_items() if item.id == "8.1__wrong_kaiming_a_5")
    names = dict(zip(("LoRALayer",), load(item.source, "8.1")))
    case = initialisation_case()

    def observe():
        return run_probe(names, case, ProbeContext(earlier=reference_earlier("8.1")))["A_statistics"]

    torch.manual_seed(1)
    first = observe()
    torch.rand(1000)  # what some other code might have drawn in between
    assert observe() == first
    assert first["largest"] < 0.25  # the mistake itself: a=5 gives a narrower bound than 1/sqrt(rank)
