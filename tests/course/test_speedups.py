"""gptcourse.speedups: each step from the plain training step to the fast one computes what
the plain step computes (correctness on the CPU; their speed is measured by
benchmarks/gpu_pretrain_bench.py on a GPU)."""
import copy

import pytest
import torch
import torch.nn.functional as F

from fake_gpus import pretend_gpu
from gptcourse import speedups
from gptcourse.runtime import runtime_profile
from grader.reference.ch03_multihead_attention import MultiHeadAttention
from grader.reference.ch04_gpt_model import GPTModel

TINY = {"vocab_size": 1000, "context_length": 16, "emb_dim": 16, "n_heads": 2, "n_layers": 2, "drop_rate": 0.0,
        "qkv_bias": False}
FlashMultiHeadAttention = speedups.flash_attention_class(MultiHeadAttention)


def attention_pair(dropout=0.0, qkv_bias=True):
    """Your attention (the reference here) and the flash subclass with the same weights, float64."""
    torch.manual_seed(0)
    plain = MultiHeadAttention(6, 8, 10, dropout, 2, qkv_bias=qkv_bias).double()
    flash = FlashMultiHeadAttention(6, 8, 10, dropout, 2, qkv_bias=qkv_bias).double()
    flash.load_state_dict(plain.state_dict())
    return plain, flash


@pytest.mark.parametrize("batch, num_tokens", [(1, 10), (3, 4)])
def test_flash_attention_gives_your_attention_s_outputs_and_gradients(batch, num_tokens):
    plain, flash = attention_pair()
    assert isinstance(flash, MultiHeadAttention)  # a subclass: every attribute of yours is still there
    x = torch.randn(batch, num_tokens, 6, dtype=torch.float64, requires_grad=True)
    outputs = []
    for module in (plain.eval(), flash.eval()):
        out = module(x)
        (gx,) = torch.autograd.grad(out.pow(2).sum(), x)
        outputs.append((out.detach(), gx))
    assert torch.allclose(outputs[0][0], outputs[1][0], atol=1e-12)
    assert torch.allclose(outputs[0][1], outputs[1][1], atol=1e-12)


def test_flash_attention_drops_attention_weights_in_train_mode_only():
    x = torch.randn(2, 5, 6, dtype=torch.float64)
    plain, flash = attention_pair(dropout=0.0)
    assert torch.allclose(plain.train()(x), flash.train()(x), atol=1e-12)  # p = 0: nothing dropped
    plain, flash = attention_pair(dropout=1.0)
    # Every weight dropped: the context is zero and the output is out_proj's bias, for both.
    bias = plain.out_proj.bias.expand(2, 5, 8)
    assert torch.allclose(plain.train()(x), bias) and torch.allclose(flash.train()(x), bias)
    plain, flash = attention_pair(dropout=0.5)
    assert torch.allclose(plain.eval()(x), flash.eval()(x), atol=1e-12)  # eval mode: no dropout
    # Train mode drops other weights than your class does (its own random numbers): the
    # outputs differ from eval mode's, and from each other.
    flash.train()
    assert not torch.allclose(flash(x), plain.eval()(x))


def test_a_model_with_flash_attention_and_a_padded_head_gives_the_same_logits_and_loss():
    torch.manual_seed(1)
    model = GPTModel(TINY).double().eval()
    fast = speedups.pad_vocabulary(speedups.use_flash_attention(copy.deepcopy(model), TINY, MultiHeadAttention))
    for block in fast.trf_blocks:
        assert isinstance(block.att, MultiHeadAttention) and type(block.att).__name__ == "FlashMultiHeadAttention"
    assert fast.out_head.linear.weight.shape == (1024, 16)  # 1,000 rounded up to a multiple of 64
    ids = torch.randint(0, 1000, (2, 16))
    logits, fast_logits = model(ids), fast(ids)
    assert fast_logits.shape == (2, 16, 1000)  # the padded logits never leave the head
    assert torch.allclose(logits, fast_logits, atol=1e-12)
    targets = torch.randint(0, 1000, (2, 16))
    loss = F.cross_entropy(fast_logits.flatten(0, 1), targets.flatten())
    assert torch.allclose(loss, F.cross_entropy(logits.flatten(0, 1), targets.flatten()))
    loss.backward()
    padding = fast.out_head.linear.weight[1000:]
    assert torch.equal(padding, torch.zeros_like(padding)) and not fast.out_head.linear.weight.grad[1000:].any()


def test_the_padded_rows_stay_zero_through_training_steps():
    settings = speedups.SpeedSettings(padded_vocab=True)
    model = speedups.prepare_model(GPTModel, TINY, settings, "cpu")
    step = speedups.TrainingStep(model, settings, "cpu", lr=1e-2)
    before = model.out_head.linear.weight[:1000].clone()
    for seed in range(3):
        step(*speedups.random_batch(2, 16, 1000, "cpu", seed=seed))
    assert not model.out_head.linear.weight[1000:].any()  # weight decay of zero is zero
    assert not torch.equal(model.out_head.linear.weight[:1000], before)  # the real rows learn


def gradient_norm_after_a_step(dtype, max_norm):
    settings = speedups.SpeedSettings(autocast_dtype=dtype)
    model = speedups.prepare_model(GPTModel, TINY, settings, "cpu")
    step = speedups.TrainingStep(model, settings, "cpu", max_norm=max_norm)
    step(*speedups.random_batch(2, 16, TINY["vocab_size"], "cpu"))
    assert step.scaler.is_enabled() == (dtype is torch.float16)
    return torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()])).item()


def test_the_gradient_scaler_hands_clipping_and_the_optimizer_the_true_gradients():
    """With fp16 the loss is multiplied by the scale (65,536 at first) before backward; the
    gradients must be divided by it again before they are clipped: clipped at half their true
    norm, they end at half their true norm (not at that divided by the scale)."""
    true_norm = gradient_norm_after_a_step(None, max_norm=1e9)  # float32, nothing clipped
    assert gradient_norm_after_a_step(None, max_norm=true_norm / 2) == pytest.approx(true_norm / 2, rel=1e-4)
    assert gradient_norm_after_a_step(torch.float16, max_norm=true_norm / 2) == pytest.approx(true_norm / 2, rel=0.02)


def test_the_largest_batch_is_found_by_doubling_until_a_step_does_not_fit():
    tried = []

    def fits(batch):
        tried.append(batch)
        return batch <= 24

    assert speedups.largest_batch_that_fits(fits, start=4, limit=64) == 16 and tried == [8, 16, 32]
    assert speedups.largest_batch_that_fits(fits, start=4, limit=8) == 8
    assert speedups.largest_batch_that_fits(lambda batch: False, start=4, limit=64) == 4


def test_a_step_that_runs_out_of_gpu_memory_does_not_fit_and_other_errors_are_raised():
    def out_of_memory(inputs, targets):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 4.00 GiB")

    def broken(inputs, targets):
        raise ValueError("a real bug")

    assert speedups.step_fits(lambda inputs, targets: None, 2, 8, 50, "cpu")
    assert not speedups.step_fits(out_of_memory, 2, 8, 50, "cpu")
    with pytest.raises(ValueError, match="a real bug"):
        speedups.step_fits(broken, 2, 8, 50, "cpu")


@pytest.mark.parametrize("card, names", [
    ("T4", ["plain", "+ fp16 autocast", "+ fused AdamW", "+ flash attention", "+ padded vocabulary",
            "+ largest batch"]),
    ("H100", ["plain", "+ TF32", "+ bf16 autocast", "+ fused AdamW", "+ flash attention", "+ padded vocabulary",
              "+ torch.compile", "+ largest batch"]),
])
def test_the_ladder_has_the_steps_the_card_supports_each_adding_to_the_last(monkeypatch, card, names):
    pretend_gpu(monkeypatch, card)
    ladder = speedups.speed_ladder(runtime_profile("cuda"))
    assert [rung.name for rung in ladder] == names
    assert ladder[0].settings == speedups.SpeedSettings() and all(rung.why for rung in ladder)
    flags = [sum(bool(getattr(rung.settings, f)) for f in ("tf32", "autocast_dtype", "fused_adamw", "flash_attention",
                                                           "padded_vocab", "compile")) for rung in ladder]
    assert flags == list(range(len(ladder) - 1)) + [len(ladder) - 2]  # one change per rung; the batch last
    assert [rung.largest_batch for rung in ladder] == [False] * (len(ladder) - 1) + [True]


def test_the_fast_path_in_float32_trains_like_the_plain_one():
    """Flash attention and the padded head change no number a training step computes beyond
    rounding: ten steps from the same weights on the same batches give the same losses."""
    plain, fast = speedups.compare_losses(GPTModel, MultiHeadAttention, TINY, speedups.SpeedSettings(),
                                          speedups.SpeedSettings(fused_adamw=True, flash_attention=True,
                                                                 padded_vocab=True), "cpu", batch_size=2, steps=10)
    assert len(plain) == len(fast) == 10 and plain[0] == pytest.approx(6.9, abs=0.3)  # about ln 1000 at first
    assert fast == pytest.approx(plain, rel=1e-5)


@pytest.mark.slow  # the benchmark's whole ladder on the CPU
def test_the_gpu_benchmark_runs_every_rung_and_the_loss_check_in_smoke_mode(tmp_path, capsys):
    """benchmarks/gpu_pretrain_bench.py --smoke: a tiny model on the CPU, one step per rung.
    It checks the script runs and reports; its speed figures mean nothing on a CPU."""
    import json

    from factory import benchmark

    bench = benchmark("gpu_pretrain_bench")
    out = tmp_path / "figures.json"
    assert bench.main(["--smoke", "--out-json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert [rung["name"] for rung in figures["rungs"]] == [
        rung.name for rung in speedups.speed_ladder(bench.smoke_profile())]
    assert all(rung["tokens_per_second"] > 0 for rung in figures["rungs"])
    assert figures["rungs"][-1]["batch"] == 4  # doubled from 2 up to --max-batch: nothing runs out on a CPU
    check = figures["loss_check"]
    assert len(check["plain"]) == len(check["fastest"]) == 3 and check["largest_relative_difference"] <= 0.01
    printed = capsys.readouterr().out
    assert "loss check" in printed and "+ padded vocabulary" in printed and "within the tolerance of 1%" in printed


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_every_change_this_gpu_gets_but_compile_trains_like_the_plain_step():
    """On the real card: its number format (with the scaler on a 7.x card), TF32, fused AdamW,
    flash attention and the padded head, against plain float32, from the same weights on the
    same batches (compile is measured by benchmarks/gpu_pretrain_bench.py)."""
    import dataclasses

    profile = runtime_profile("cuda")
    fast = dataclasses.replace(speedups.speed_ladder(profile)[-1].settings, compile=False)
    plain, fast_losses = speedups.compare_losses(GPTModel, MultiHeadAttention, dict(TINY, context_length=64),
                                                 speedups.SpeedSettings(), fast, "cuda", batch_size=4, steps=5)
    assert fast_losses == pytest.approx(plain, rel=0.01)  # 16-bit rounding: see gpu_pretrain_bench.py
    assert torch.get_float32_matmul_precision() == "highest"  # TF32 switched off again afterwards


def test_the_figures_chapter_05_shows_without_a_gpu_are_those_recorded_in_the_docs():
    from factory import REPO

    docs = (REPO / "docs" / "benchmarks.md").read_text()
    for steps in speedups.RECORDED_LADDERS.values():
        for tokens_per_second, utilisation in steps.values():
            assert tokens_per_second is None or f"| {tokens_per_second:,} |" in docs
            assert f"| {100 * utilisation:.1f} % |" in docs
