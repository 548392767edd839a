"""gptcourse.ddp_pretrain: a student's GPTModel trained by several processes with DDP.

The slow tests start real torchrun processes (`python -m torch.distributed.run`, gloo on the
CPU) with a tiny model. They use --standalone: torchrun's rendezvous store listens on port 0,
so the operating system gives every run a port of its own, and the training processes reuse
that store instead of opening a second port; the one- and two-process runs below run at the
same time and would collide otherwise. Every test stops what it started, by process group.
The fast tests call the module's pieces in this process.
"""
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch
from torch.utils.data import DataLoader, DistributedSampler, TensorDataset

from factory import benchmark, manifest, release_notebook, write_notebook
from gptcourse import ddp_pretrain
from gptcourse.checking.tasks import carried_tasks, get_task
from gptcourse.ddp_pretrain import (CHECKPOINT_NAME, RunError, batches_from, checked_model, gpt_model_class,
                                    launch, optimizer_state_for, plain_state_dicts, share_of_batch,
                                    share_of_each_batch)
from gptcourse.speedups import pad_vocabulary

CH05 = "05_pretraining.ipynb"
# A model small enough for seconds of training: 18 steps per epoch of the-verdict at batch 4,
# no dropout, so that runs with different numbers of processes can agree to float tolerance.
# Its checkpoints are still 20 MB (the embedding and the head have 50,257 rows): three per run.
TINY = {"emb_dim": 16, "n_heads": 2, "n_layers": 1, "context_length": 64, "drop_rate": 0.0}
STEPS, BATCH, SAVE_EVERY = 60, 4, 20
RUN_OPTIONS = ["--device", "cpu", "--steps", STEPS, "--batch-size", BATCH, "--save-every", SAVE_EVERY,
               "--config", json.dumps(TINY), "--eval-every", 20, "--eval-batches", 1]
RUN_SECONDS = 240  # a hang guard: a run takes 10 to 20 s here

# Runs ddp_pretrain with an audit hook that notes every file the process creates, writes,
# renames or removes under WRITE_SPY_WATCH, in WRITE_SPY_LOG.<rank>: proof of who writes.
WRITE_SPY = textwrap.dedent('''\
    import os, runpy, sys

    watched = os.path.realpath(os.environ["WRITE_SPY_WATCH"])
    log = open(os.environ["WRITE_SPY_LOG"] + "." + os.environ["RANK"], "w")
    WRITES = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC

    def under_watch(path):
        return isinstance(path, (str, bytes, os.PathLike)) and os.path.realpath(os.fsdecode(path)).startswith(watched)

    def hook(event, args):
        if event == "open" and under_watch(args[0]) and ((args[2] or 0) & WRITES or any(c in str(args[1]) for c in "wax+")):
            log.write(f"open {os.path.basename(os.fsdecode(args[0]))}\\n")
        elif event in ("os.rename", "os.remove", "os.mkdir", "os.rmdir") and under_watch(args[0]):
            log.write(f"{event} {os.path.basename(os.fsdecode(args[0]))}\\n")
        else:
            return
        log.flush()

    sys.addaudithook(hook)
    runpy.run_module("gptcourse.ddp_pretrain", run_name="__main__", alter_sys=True)
''')


# Runs ddp_pretrain with process 0 three seconds late: the others meet a shared problem first.
LATE_PROCESS_0 = textwrap.dedent('''\
    import os, runpy, time

    if os.environ["RANK"] == "0":
        time.sleep(3)
    runpy.run_module("gptcourse.ddp_pretrain", run_name="__main__", alter_sys=True)
''')


def torchrun(nproc, module="gptcourse.ddp_pretrain"):
    return [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={nproc}", "-m", module]


class Run:
    """A command started in a session of its own, stopped with everything it started, by pid.

    torchrun starts each training process in a session of its own too: killing torchrun's
    group alone would leave them training. So the whole tree of processes is killed."""

    def __init__(self, command, cwd, env):
        self.process = subprocess.Popen([str(part) for part in command], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.killed = []

    def finish(self, timeout=RUN_SECONDS):
        try:
            self.stdout, self.stderr = self.process.communicate(timeout=timeout)
        finally:
            self.kill()
        return self

    def kill(self):
        """SIGKILL to torchrun and every process below it, found before any of them dies."""
        self.killed = process_tree(self.process.pid)
        for pid in self.killed:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)

    def all_gone(self):
        self.process.wait(timeout=RUN_SECONDS)
        deadline = time.monotonic() + 30
        while any(map(alive, self.killed)) and time.monotonic() < deadline:
            time.sleep(0.05)
        return not any(map(alive, self.killed))

    @property
    def returncode(self):
        return self.process.returncode


def process_tree(pid):
    """`pid` and its descendants, from /proc."""
    children = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            parent = int(stat.read_text().rsplit(")", 1)[1].split()[1])  # "pid (name) state ppid ..."
            children.setdefault(parent, []).append(int(stat.parent.name))
    tree, pending = [], [pid]
    while pending:
        tree.append(pending.pop())
        pending.extend(children.get(tree[-1], []))
    return tree


def alive(pid):
    """Running, or stopped, but not a zombie that nobody has reaped yet."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def environment(tmp_path, mirror_dir, spy=False):
    env = dict(os.environ, GPTCOURSE_DATA_MIRROR=str(mirror_dir), OMP_NUM_THREADS="1")
    if spy:
        (tmp_path / "write_spy.py").write_text(WRITE_SPY)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
        env.update(WRITE_SPY_WATCH=str(tmp_path), WRITE_SPY_LOG=str(tmp_path / "writes"))
    return env


def weights(out):
    return torch.load(out / CHECKPOINT_NAME, map_location="cpu", weights_only=True)["model_state_dict"]


def largest_difference(a, b):
    return max((a[name] - b[name]).abs().max().item() for name in a)


def colab_notebook(folder, gpt_model_source=None):
    """A chapter 05 notebook as a student on Colab saves it: no earlier notebook beside it,
    GPTModel and the classes it uses pasted into its paste cell (`gpt_model_source` in place of
    the reference's GPTModel), nothing else pasted, no task of the chapter done."""
    sources = {task_id: task["source"] for chapter in manifest().values() for task_id, task in chapter["tasks"].items()}
    if gpt_model_source is not None:
        sources["4.5"] = gpt_model_source
    pasted = "\n\n".join(sources[task.id] for task in [*carried_tasks("4.5"), get_task("4.5")])
    nb = release_notebook("05_pretraining")
    paste = next(cell for cell in nb["cells"] if 'check_pasted("4.5"' in "".join(cell["source"]))
    paste["source"] = pasted + "\n\n" + "".join(paste["source"])
    return write_notebook(nb, folder / CH05)


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    return colab_notebook(tmp_path_factory.mktemp("notebook"))


@pytest.fixture(scope="module")
def runs(tmp_path_factory, notebook, mirror_dir):
    """The same training run in one process and in two, started at the same time, the two
    watched by the write spy: {1: (folder, Run), 2: (folder, Run)}."""
    started = {}
    for nproc in (1, 2):
        folder = tmp_path_factory.mktemp(f"{nproc}_processes")
        command = torchrun(nproc, "write_spy" if nproc == 2 else "gptcourse.ddp_pretrain")
        command += ["--notebook", notebook, "--out", folder / "out", *RUN_OPTIONS]
        started[nproc] = (folder, Run(command, folder, environment(folder, mirror_dir, spy=nproc == 2)))
    for _, run in started.values():
        run.finish()
    for _, run in started.values():
        assert run.returncode == 0, run.stdout + run.stderr
    return started


# ------------------------------------------------------------------------------------------
# Real processes
# ------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_two_processes_reach_the_weights_of_one_with_the_same_global_batch(runs):
    (one, one_run), (two, two_run) = runs[1], runs[2]
    trained_alone, trained_together = weights(one / "out"), weights(two / "out")
    assert "2 processes on cpu, global batch 4 (2 per process), 60 steps" in two_run.stdout
    assert "1 process on cpu, global batch 4 (4 per process), 60 steps" in one_run.stdout
    torch.manual_seed(123)  # the runs' seed: their starting weights
    from grader.reference.ch04_gpt_model import GPTModel
    untrained = GPTModel(dict(manifest_config(), **TINY)).state_dict()
    assert largest_difference(trained_alone, untrained) > 1e-2  # both trained, 60 steps ...
    assert largest_difference(trained_together, trained_alone) < 1e-4  # ... to the same weights


def manifest_config():
    """The notebook run's configuration on a CPU, which TINY changes."""
    from gptcourse.pretrain import cpu_run
    return cpu_run().cfg


@pytest.mark.slow
def test_only_process_0_writes(runs):
    folder, run = runs[2]
    assert sorted(os.listdir(folder / "out")) == [CHECKPOINT_NAME]
    by_process_0 = (folder / "writes.0").read_text().splitlines()
    by_process_1 = (folder / "writes.1").read_text().splitlines()
    saves = STEPS // SAVE_EVERY
    # Process 0 made the folder and wrote every checkpoint to a temporary file, then renamed it.
    assert by_process_0.count(f"open {CHECKPOINT_NAME}.tmp") == saves
    assert by_process_0.count(f"os.rename {CHECKPOINT_NAME}.tmp") == saves
    assert by_process_1 == []  # process 1 created, wrote, renamed and removed nothing there
    # Process 0 alone prints: one line per evaluation, and the progress bar.
    assert run.stdout.count(f"step 20/{STEPS}: training loss") == 1


@pytest.mark.slow
def test_a_killed_run_resumes_from_its_last_checkpoint(tmp_path, notebook, mirror_dir, runs):
    command = torchrun(2) + ["--notebook", notebook, "--out", tmp_path / "out", *RUN_OPTIONS]
    env = environment(tmp_path, mirror_dir)
    checkpoint = tmp_path / "out" / CHECKPOINT_NAME
    first = Run(command, tmp_path, env)
    try:
        deadline = time.monotonic() + RUN_SECONDS
        while not checkpoint.exists() and first.process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
    finally:
        first.kill()  # SIGKILL, at once, to torchrun and both training processes
    first.process.communicate()
    assert first.returncode == -signal.SIGKILL
    assert len(first.killed) >= 3 and first.all_gone()  # torchrun and its two training processes
    killed_at = torch.load(checkpoint, weights_only=True)["step"]
    assert SAVE_EVERY <= killed_at < STEPS

    second = Run(command, tmp_path, env).finish()

    assert second.returncode == 0, second.stdout + second.stderr
    assert f"resuming after step {killed_at} from" in second.stdout
    assert f"step {STEPS}/{STEPS}" in second.stdout
    uninterrupted = weights(runs[2][0] / "out")
    assert largest_difference(weights(tmp_path / "out"), uninterrupted) < 1e-6
    assert os.listdir(tmp_path / "out") == [CHECKPOINT_NAME]


@pytest.mark.slow
def test_a_missing_gptmodel_is_one_line_from_process_0(tmp_path, mirror_dir):
    """The release notebook alone: no 04_gpt_model.ipynb beside it, nothing pasted. Two processes
    meet the same problem; process 0, started late on purpose, says it in one line, both stop.
    (torchrun stops all processes once one has ended: process 1 must wait for process 0.)"""
    path = write_notebook(release_notebook("05_pretraining"), tmp_path / CH05)
    env = environment(tmp_path, mirror_dir)
    (tmp_path / "late_process_0.py").write_text(LATE_PROCESS_0)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    run = Run(torchrun(2, "late_process_0") + ["--notebook", path, "--device", "cpu"], tmp_path, env).finish()

    assert run.returncode != 0
    lines = run.stdout.splitlines()
    assert len(lines) == 1, run.stdout + run.stderr
    assert lines[0].startswith(f"ddp_pretrain: Task 4.5 (GPTModel) is not in {CH05}: its carry-over cells said: "
                               f"No 04_gpt_model.ipynb in this folder")
    assert "paste your GPTModel into its paste cell" in lines[0]
    # torchrun's report: process 0 ended with status 2 (torchrun then stopped process 1, which waited)
    assert re.search(r"rank\s*: 0 \(local_rank: 0\)\s*exitcode\s*: 2\b", run.stderr), run.stderr

    alone = Run([sys.executable, "-m", "gptcourse.ddp_pretrain", "--notebook", path], tmp_path, env).finish()
    assert alone.returncode == ddp_pretrain.EXIT_RUN_ERROR
    assert alone.stdout == run.stdout and "Traceback" not in alone.stderr


# ------------------------------------------------------------------------------------------
# In this process
# ------------------------------------------------------------------------------------------

def test_every_step_the_processes_share_the_batch_that_one_process_takes():
    windows = TensorDataset(torch.arange(37), torch.arange(37))  # window i is the number i
    batch, steps = 6, 13  # 6 steps per epoch: over two epochs and into a third

    def drawn(world_size, rank):
        process = ddp_pretrain.Process(rank, rank, world_size, launched=True)
        loader = share_of_each_batch(windows, batch // world_size, process, seed=5, device=torch.device("cpu"))
        return [set(inputs.tolist()) for inputs, _ in batches_from(loader, 0, steps)]

    alone = drawn(1, 0)
    shares = [drawn(3, rank) for rank in range(3)]
    assert len(alone) == steps and all(len(b) == batch for b in alone)
    for step in range(steps):
        assert set.union(*(share[step] for share in shares)) == alone[step]  # the same windows ...
        assert sum(len(share[step]) for share in shares) == batch  # ... each in one process only
    assert alone[0] != alone[6]  # each epoch shuffled anew


def test_a_resumed_run_gets_the_batches_it_would_have_had():
    windows = TensorDataset(torch.arange(20), torch.arange(20))
    sampler = DistributedSampler(windows, num_replicas=2, rank=1, shuffle=True, seed=0, drop_last=True)
    loader = DataLoader(windows, batch_size=2, sampler=sampler, drop_last=True)  # 5 steps per epoch

    whole = [inputs.tolist() for inputs, _ in batches_from(loader, 0, 12)]
    for start in (3, 5, 7):
        assert [inputs.tolist() for inputs, _ in batches_from(loader, start, 12)] == whole[start:]


def test_a_checkpoint_of_the_fast_path_has_the_layout_of_a_plain_gptmodel():
    """With the padded output head of gptcourse.speedups, the saved model and AdamW state are
    a plain GPTModel's (Task 5.5's load_checkpoint reads them), and a resumed run gets its
    padded state back exactly."""
    from grader.reference.ch04_gpt_model import GPTModel
    cfg = dict(manifest_config(), **TINY)
    torch.manual_seed(0)
    model = pad_vocabulary(GPTModel(cfg))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, cfg["vocab_size"], (2, 8))
    model(ids).sum().backward()
    optimizer.step()
    padded_state = {k: v.clone() for k, v in optimizer.state_dict()["state"][len(optimizer.param_groups[0]["params"]) - 1].items()}

    model_state, optimizer_state = plain_state_dicts(model, optimizer)
    saved = _saved(optimizer_state)  # as a checkpoint holds it (the plain optimizer below changes it in place)

    plain = GPTModel(cfg)
    plain.load_state_dict(model_state)  # strict: every name and shape as in GPTModel
    assert torch.equal(plain.out_head.weight, model.out_head.linear.weight[:cfg["vocab_size"]])
    plain_optimizer = torch.optim.AdamW(plain.parameters(), lr=1e-3)
    plain_optimizer.load_state_dict(optimizer_state)
    head_state = plain_optimizer.state[plain.out_head.weight]
    assert head_state["exp_avg"].shape == plain.out_head.weight.shape
    plain(ids).sum().backward()
    plain_optimizer.step()  # AdamW's averages fit the plain head

    restored = optimizer_state_for(model, torch.load(saved, weights_only=True))
    head = restored["state"][len(optimizer.param_groups[0]["params"]) - 1]
    assert all(torch.equal(head[key], padded_state[key]) for key in padded_state)


def _saved(state):
    import io
    buffer = io.BytesIO()
    torch.save(state, buffer)
    buffer.seek(0)
    return buffer


CELL = r"line \d+ of <05_pretraining\.ipynb, cell paste-4-5>"


@pytest.mark.parametrize("source, message", [
    ("class GPTModel(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n        raise NotImplementedError()\n",
     r"Task 4\.5 \(GPTModel\) could not be built with \{'vocab_size': 50257, .*\}: it raised NotImplementedError at "
     + CELL + r" \(a stub: is the task finished\?\)"),
    ("class GPTModel(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n"
     "        self.emb = nn.Embedding(cfg['vocab_size'], 8)\n\n    def forward(self, ids):\n        return self.emb(idx)\n",
     r"Task 4\.5 \(GPTModel\) failed on a batch of token ids of shape \(2, 4\): it raised NameError at " + CELL
     + ": name 'idx' is not defined"),
    ("class GPTModel(nn.Module):\n    def __init__(self, cfg):\n        super().__init__()\n"
     "        self.emb = nn.Embedding(cfg['vocab_size'], 8)\n\n    def forward(self, ids):\n        return self.emb(ids)\n",
     r"Task 4\.5 \(GPTModel\) returned \(2, 4, 8\) for token ids of shape \(2, 4\), not logits of shape \(2, 4, 50257\)"),
], ids=["raises when built", "raises in forward", "returns the wrong shape"])
def test_a_broken_gptmodel_is_named_with_its_task_and_line(tmp_path, source, message):
    GPTModel = gpt_model_class(colab_notebook(tmp_path, source), ddp_pretrain.Process())
    with pytest.raises(RunError) as raised:
        checked_model(GPTModel, dict(manifest_config(), **TINY), seed=0)
    assert re.fullmatch(message, str(raised.value)), str(raised.value)


def test_a_missing_or_unreadable_notebook_is_one_line(tmp_path):
    with pytest.raises(RunError, match=r"^no notebook at .*nowhere\.ipynb: give --notebook the path of your saved"):
        gpt_model_class(tmp_path / "nowhere.ipynb", ddp_pretrain.Process())
    (tmp_path / "text.ipynb").write_text("not json")
    with pytest.raises(RunError, match=r"text\.ipynb is not a notebook that can be read \(JSONDecodeError"):
        gpt_model_class(tmp_path / "text.ipynb", ddp_pretrain.Process())


def test_a_cell_that_raises_while_bringing_gptmodel_in_is_named(tmp_path):
    path = colab_notebook(tmp_path, "class GPTModel(nn.Module):\n    pass\nundefined_name\n")
    with pytest.raises(RunError, match=r"^05_pretraining\.ipynb could not bring in Task 4\.5 \(GPTModel\): its "
                                       r"carry-over cell raised NameError at line \d+: name 'undefined_name'"):
        gpt_model_class(path, ddp_pretrain.Process())


def test_the_global_batch_must_split_evenly():
    assert share_of_batch(8, 4) == 2
    with pytest.raises(RunError, match="a global batch of 6 cannot be split evenly over 4 processes"):
        share_of_batch(6, 4)


def test_launch_shows_the_output_and_on_failure_the_end_of_stderr(capsys):
    said_why = [sys.executable, "-c", "import sys; print('ddp_pretrain: the reason'); "
                                      "print('internals', file=sys.stderr); sys.exit(3)"]
    assert launch(said_why) == 3
    assert capsys.readouterr().out == "ddp_pretrain: the reason\ntorchrun stopped with exit status 3\n"

    crashed = [sys.executable, "-c", "import sys; print('half way'); print('Boom', file=sys.stderr); sys.exit(1)"]
    assert launch(crashed) == 1
    assert capsys.readouterr().out == "half way\nBoom\ntorchrun stopped with exit status 1\n"

    fine = [sys.executable, "-c", "import sys; print('trained'); print('a warning', file=sys.stderr)"]
    assert launch(fine) == 0
    assert capsys.readouterr().out == "trained\n"


@pytest.mark.slow
def test_the_ddp_benchmark_runs_in_smoke_mode(tmp_path, capsys, mirror_dir, monkeypatch):
    """benchmarks/ddp_bench.py --smoke: the fast path and two torchrun processes with the same
    settings (flash attention and the padded head, on the CPU). Its figures mean nothing here."""
    monkeypatch.setenv("GPTCOURSE_DATA_MIRROR", str(mirror_dir))
    bench = benchmark("ddp_bench")
    out = tmp_path / "figures.json"
    assert bench.main(["--smoke", "--out-json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert figures["fast_path_tokens_per_second"] > 0 and figures["ddp"]["tokens_per_second"] > 0
    assert figures["ddp"]["world_size"] == 2 and figures["ddp"]["timed_steps"] == 3
    assert figures["ratio"] == pytest.approx(figures["ddp"]["tokens_per_second"] / figures["fast_path_tokens_per_second"])
    assert "DDP / fast path:" in capsys.readouterr().out


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_one_gpu_process_trains_with_nccl_and_the_fast_path(tmp_path, notebook, mirror_dir):
    """On a GPU: NCCL, the card's fast path (a padded head among its changes), and a checkpoint
    in the layout of a plain GPTModel."""
    command = torchrun(1) + ["--notebook", notebook, "--out", tmp_path / "out", "--device", "cuda", "--steps", 6,
                             "--batch-size", BATCH, "--config", json.dumps(TINY), "--eval-every", 3]
    run = Run(command, tmp_path, environment(tmp_path, mirror_dir)).finish(timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 process on cuda" in run.stdout and f"step 6/6: training loss" in run.stdout
    from grader.reference.ch04_gpt_model import GPTModel
    GPTModel(dict(manifest_config(), **TINY)).load_state_dict(weights(tmp_path / "out"))  # strict: plain layout


def test_more_processes_than_gpus_is_said_by_the_first_process_without_one(monkeypatch):
    """Only the processes beyond the GPUs meet this problem: process 0 cannot say it."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    said = {}
    for rank in (2, 3):
        with pytest.raises(RunError, match=r"^this machine has 2 GPUs: start at most 2 processes on it") as raised:
            ddp_pretrain.device_for("cuda", ddp_pretrain.Process(rank, rank, 4, launched=True))
        said[rank] = raised.value.said_by(ddp_pretrain.Process(rank, rank, 4, launched=True))
    assert said == {2: True, 3: False}
    shared = RunError("the same for every process")
    assert [shared.said_by(ddp_pretrain.Process(rank, rank, 4, True)) for rank in range(4)] == [True, False, False, False]
