"""Bugs that only a GPU showed (2026-11-26, an H100), each checked here without one.

A task that adds layers to a model (7.3's head, 8.3's LoRA layers) makes them on the CPU, as
the book does: the notebook moves the model to the device afterwards. The probes must do the
same before running the model, or every correct submission fails on CUDA. And a tensor on
"cuda:0" is on the device "cuda" asked for, though torch.device("cuda:0") != torch.device("cuda").
The meta device stands in for the GPU here.
"""
import pytest
import torch

from gptcourse.checking.probes import Probe, ProbeContext


def _probe_on_meta(task_id, kind_name, case):
    from gptcourse.checking.chapters import task_spec
    from grader.reference import reference_earlier, reference_objects

    kind = task_spec(task_id).probes[kind_name]
    names = reference_objects(task_id)
    ctx = ProbeContext(earlier=reference_earlier(task_id)).for_case(case.on("meta"), names)
    probe = Probe(case.on("meta"), ctx)
    try:
        kind.probe(probe)
    except RuntimeError as error:  # meta has no values (allclose, item): only devices matter here
        assert "device" not in str(error), error
    return probe


@pytest.mark.parametrize("task_id, kind_name", [("7.3", "head"), ("8.3", "replace")])
def test_the_model_is_moved_to_the_case_device_before_it_runs(task_id, kind_name):
    from grader.chapters import public_cases

    case = next(c for c in public_cases(task_id) if c.kind == kind_name)
    probe = _probe_on_meta(task_id, kind_name, case)
    devices = {param.device.type for param in probe.kept["model"].parameters()}
    assert devices == {"meta"}, devices


def test_a_tensor_on_cuda_0_is_on_the_device_cuda():
    from gptcourse.checking.chapters.ch09_instruction import same_device

    assert same_device(torch.device("cuda", 0), torch.device("cuda"))
    assert same_device(torch.device("cuda", 1), torch.device("cuda", 1))
    assert not same_device(torch.device("cuda", 0), torch.device("cuda", 1))
    assert not same_device(torch.device("cpu"), torch.device("cuda"))
    assert not same_device(torch.device("cpu"), torch.device("meta"))
