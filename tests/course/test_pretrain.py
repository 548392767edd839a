"""gptcourse.pretrain: which run a notebook trains, how its speed is reported, its progress bar."""
import pytest
import torch

from fake_gpus import pretend_gpu
from gptcourse import pretrain


def test_the_cpu_gets_the_small_run_and_cuda_the_gpt2_shape(monkeypatch):
    cpu = pretrain.pick_run("cpu")
    assert cpu.data == "the-verdict" and cpu.cfg["emb_dim"] == 128 and cpu.cfg["drop_rate"] == 0.0
    assert cpu.autocast_dtype is None and not cpu.fused_adamw and not cpu.compile
    pretend_gpu(monkeypatch, "H100")
    gpu = pretrain.gpu_run("cuda")
    assert gpu.data == "tinyshakespeare"
    assert {k: gpu.cfg[k] for k in ("emb_dim", "n_heads", "n_layers", "vocab_size")} == {
        "emb_dim": 768, "n_heads": 12, "n_layers": 12, "vocab_size": 50257}
    assert gpu.fused_adamw
    assert "CPU run: 4 blocks, emb_dim 128" in cpu.describe() and "speed-ups" not in cpu.describe()
    assert "fused AdamW" in gpu.describe()


def test_small_asks_for_the_cpu_run_on_any_device(monkeypatch):
    # Chapter 06 decodes with a model that knows the-verdict, on a GPU as well.
    pretend_gpu(monkeypatch, "H100")
    monkeypatch.setattr(pretrain, "gpu_run", lambda *args: pytest.fail("small=True must not build the GPU run"))
    run = pretrain.pick_run("cuda", small=True)
    assert run.data == "the-verdict" and run.cfg == pretrain.cpu_run().cfg
    with pytest.raises(pytest.fail.Exception):
        pretrain.pick_run("cuda")


def test_warmup_is_a_share_of_all_steps_and_at_least_one():
    run = pretrain.cpu_run()
    assert run.warmup_steps(18) == int(0.1 * 18 * run.num_epochs)
    assert run.warmup_steps(0) == 1


def test_the_cpu_run_trains_in_plain_precision_with_its_peak_rate():
    run = pretrain.cpu_run()
    with run.autocast("cpu"):
        assert not torch.is_autocast_enabled("cpu")
    optimizer = pretrain.make_optimizer(torch.nn.Linear(2, 2), run)
    assert optimizer.param_groups[0]["lr"] == run.peak_lr
    assert optimizer.param_groups[0]["weight_decay"] == run.weight_decay


def test_model_flops_per_token_and_mfu():
    cfg = {"n_layers": 12, "context_length": 1024, "emb_dim": 768}
    n = 124_439_808
    assert pretrain.model_flops_per_token(cfg, n) == 6 * n + 12 * 12 * 1024 * 768
    assert pretrain.mfu(1000.0, cfg, n, "cpu") is None  # no peak for a CPU


def test_training_progress_counts_training_steps_only():
    loader = [(torch.zeros(1), torch.zeros(1))] * 3
    progress = pretrain.TrainingProgress(loader, num_epochs=2, desc="test")
    assert len(progress) == 3 and progress.bar.total == 6
    for _ in range(2):
        assert len(list(progress)) == 3  # an epoch of training
        with torch.no_grad():
            list(progress)  # an evaluation over the same loader
    assert progress.bar.n == 6
    progress.close()


@pytest.mark.parametrize("card, expected", [("H100", 989e12), ("T4", 65e12)])
def test_peak_flops_are_looked_up_by_the_gpu_s_name(monkeypatch, card, expected):
    pretend_gpu(monkeypatch, card)
    assert pretrain.peak_flops("cuda") == expected
    assert pretrain.mfu(1e6, {"n_layers": 12, "context_length": 1024, "emb_dim": 768}, 124_439_808, "cuda") == (
        1e6 * (6 * 124_439_808 + 12 * 12 * 1024 * 768) / expected)


def test_a_quick_run_for_tests_that_only_need_the_notebook_to_run(monkeypatch):
    monkeypatch.setenv(pretrain.QUICK_ENV_VAR, "1")
    run = pretrain.pick_run("cpu")
    assert run.num_epochs == 1 and "quick run" in run.describe()
    monkeypatch.delenv(pretrain.QUICK_ENV_VAR)
    assert pretrain.pick_run("cpu").num_epochs == pretrain.cpu_run().num_epochs > 1


def test_nbgrader_gets_the_quick_run_and_no_download(monkeypatch, capsys):
    from gptcourse import gpt2_weights

    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    run = pretrain.pick_run("cpu")
    assert run.num_epochs == 1 and "nbgrader is running this notebook" in run.describe()
    monkeypatch.setattr(gpt2_weights, "load_gpt2_state_dict", lambda: pytest.fail("nothing is downloaded"))
    assert gpt2_weights.try_load_gpt2_state_dict() is None
    assert "not loaded while nbgrader runs" in capsys.readouterr().out


def test_the_progress_loader_times_each_training_step_but_not_evaluations():
    loader = [torch.zeros(1)] * 3
    progress = pretrain.TrainingProgress(loader, num_epochs=2, desc="test")
    for _ in range(2):
        for _ in progress:
            pass
        with torch.no_grad():  # an evaluation reads the same loader
            list(progress)
    progress.close()
    assert len(progress.step_started) == 6 and progress.step_started == sorted(progress.step_started)
    end = progress.step_started[-1] + 1.0
    assert progress.seconds_since_step(3, now=end) == pytest.approx(end - progress.step_started[3])
    assert progress.seconds_since_step(6) is None and progress.seconds_since_step(-1) is None


def test_the_improved_runs_speed_leaves_out_the_first_epoch():
    """On a GPU the first epoch holds torch.compile's compilation: the printed speed and MFU
    are those of the epochs after it (the whole call's time is printed as well)."""
    import json

    from factory import REPO

    nb = json.loads((REPO / "solutions" / "05_pretraining.ipynb").read_text())
    source = next("".join(c["source"]) for c in nb["cells"] if "print(f\"MFU" in "".join(c["source"]))
    assert "seconds_since_step(steps_per_epoch" in source
    assert "tokens_per_second = tokens_trained / fast_seconds" not in source
    assert source.index("steady_seconds") < source.index("mfu(tokens_per_second")
