"""Which devices a cluster run grades on: the workers decide, not the grading machine.

`grade --cluster ADDR --device cuda` from a machine without a GPU must reach the cluster's
workers (which have the GPUs), and `--device auto` runs the CUDA cases when the workers have GPUs,
whatever the grading machine has. Real processes, as in test_cluster.py: a `dask scheduler` and a
`dask worker` on free ports of this machine, and the grade command.

There is no GPU here, so a GPU is faked where the test needs one: a folder with a
`sitecustomize.py` that makes torch report a CUDA device (torch.cuda.is_available() -> True, and
a device name), put first on PYTHONPATH of the process that must see it: the Dask worker (its
preflight then says it has CUDA), or the grade command (the grading machine then "has" a GPU).
Python imports sitecustomize at start-up, so nothing in the course's code knows about the fake.
"""
import json
import os
import subprocess
import sys

import pytest

from factory import REPO, filled_notebook, write_notebook
from grader.cluster.local import LocalCluster

pytestmark = pytest.mark.slow  # two clusters and four grade runs: about a minute

CH1 = "01_text_data"
FAKE_GPU = '''\
import torch

torch.cuda.is_available = lambda: True
torch.cuda.get_device_name = lambda device=None: "a GPU faked by sitecustomize"
'''


@pytest.fixture(scope="module")
def fake_gpu(tmp_path_factory):
    """PYTHONPATH for a process that must believe it has a CUDA GPU."""
    folder = tmp_path_factory.mktemp("fake_gpu")
    (folder / "sitecustomize.py").write_text(FAKE_GPU)
    return os.pathsep.join([str(folder), str(REPO / "course"), str(REPO)])


@pytest.fixture(scope="module")
def submissions(tmp_path_factory):
    """One student whose chapter-01 notebook is the masters' (its jobs are not what is tested)."""
    folder = tmp_path_factory.mktemp("class")
    write_notebook(filled_notebook(CH1, {}), folder / "ada" / f"{CH1}.ipynb")
    return folder


def grade(submissions, out, address, device, env=None):
    command = [sys.executable, "-m", "grader", "grade", str(submissions), "--out", str(out), "--quiet",
               "--seed", "3", "--device", device, "--timeout", "20", "--cluster", address]
    return subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **(env or {})))


def devices_of(out):
    return json.loads((out / "run.json").read_text())["devices"]


def test_workers_with_a_gpu_grade_cuda_for_a_grading_machine_without_one(submissions, fake_gpu, tmp_path):
    import torch

    assert not torch.cuda.is_available()  # the grading process really has no GPU
    with LocalCluster(workers=1, worker_env={"worker-1": {"PYTHONPATH": fake_gpu}}) as cluster:
        asked = grade(submissions, tmp_path / "cuda", cluster.address, "cuda")
        auto = grade(submissions, tmp_path / "auto", cluster.address, "auto")
    assert asked.returncode == 0, asked.stderr
    assert "no CUDA GPU" not in asked.stderr
    assert devices_of(tmp_path / "cuda") == ["cpu", "cuda"]
    assert auto.returncode == 0, auto.stderr
    assert devices_of(tmp_path / "auto") == ["cpu", "cuda"]  # the workers have GPUs: auto grades CUDA


def test_a_grading_machine_s_gpu_does_not_decide_for_workers_without_one(submissions, fake_gpu, tmp_path):
    with LocalCluster(workers=1) as cluster:
        auto = grade(submissions, tmp_path / "auto", cluster.address, "auto", env={"PYTHONPATH": fake_gpu})
        asked = grade(submissions, tmp_path / "cuda", cluster.address, "cuda", env={"PYTHONPATH": fake_gpu})
    assert auto.returncode == 0, auto.stderr
    assert devices_of(tmp_path / "auto") == ["cpu"]
    # --device cuda: the worker refuses (no GPU there), in the cluster's one message, exit 2.
    assert asked.returncode == 2, asked.stderr
    assert "no worker of the Dask cluster" in asked.stderr and "no CUDA GPU is available" in asked.stderr
    assert not (tmp_path / "cuda" / "grades.json").exists()
