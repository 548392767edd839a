"""gptcourse.runtime: what the course decides from the device, checked on a CPU by pretending
to have each of the GPUs students and clouds hand out (tests/fake_gpus.py)."""
import copy
import dataclasses
from types import SimpleNamespace

import pytest
import torch

from fake_gpus import CARDS, GIB, pretend_gpu
from gptcourse import runtime
from gptcourse.finetune import pick_finetune_run
from gptcourse.instruct import pick_instruction_run
from gptcourse.pretrain import QUICK_ENV_VAR, cpu_run, pick_run
from gptcourse.runtime import GPUProperties, card_of, runtime_profile

# What each card should get, from its data sheet and the rules in gptcourse.runtime, written
# out by hand: (autocast dtype, gradient scaler, TF32, compile with Triton installed,
# peak FLOP/s and the format it is for, chapter 05's run: its autocast dtype and batch).
EXPECTED = {
    "T4": (torch.float16, True, False, False, 65e12, "fp16", None, 8),
    "L4": (torch.bfloat16, False, True, True, 121e12, "bf16", torch.bfloat16, 16),
    "A10G": (torch.bfloat16, False, True, True, 125e12, "bf16", torch.bfloat16, 16),
    "A100": (torch.bfloat16, False, True, True, 312e12, "bf16", torch.bfloat16, 16),
    "H100": (torch.bfloat16, False, True, True, 989e12, "bf16", torch.bfloat16, 16),
    "H200": (torch.bfloat16, False, True, True, 989e12, "bf16", torch.bfloat16, 16),
}


@pytest.fixture(autouse=True)
def _full_runs(monkeypatch):
    monkeypatch.delenv(QUICK_ENV_VAR, raising=False)
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)


@pytest.mark.parametrize("card", sorted(CARDS))
def test_each_gpu_gets_its_number_format_compile_peak_and_run_size(monkeypatch, card):
    dtype, scaler, tf32, compiles, flops, flops_dtype, run_dtype, batch = EXPECTED[card]
    pretend_gpu(monkeypatch, card)
    profile = runtime_profile("cuda")
    assert (profile.autocast_dtype, profile.grad_scaler, profile.tf32, profile.compile) == (dtype, scaler, tf32, compiles)
    assert profile.fused_adamw and profile.is_gpu and profile.card == card
    assert (profile.peak.flops, profile.peak.dtype) == (flops, flops_dtype)
    run = pick_run("cuda")
    assert run.cfg["emb_dim"] == 768 and run.cfg["context_length"] == 512
    assert (run.autocast_dtype, run.batch_size, run.compile) == (run_dtype, batch, compiles)
    assert profile.name in run.describe()
    # Chapters 07 and 09 fine-tune GPT-2 the book's way on every one of these cards.
    assert pick_finetune_run("cuda", "gpt2").name == "GPT-2 124M, the book's run"
    assert pick_instruction_run("cuda", "gpt2").name == "GPT-2, the book's run"


def test_a_t4_trains_in_fp16_with_a_scaler_whatever_torch_says_about_bf16(monkeypatch):
    # Recent torch answers True on a T4, where bf16 is emulated and slow.
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *args, **kwargs: True)
    pretend_gpu(monkeypatch, "T4")
    profile = runtime_profile("cuda")
    assert profile.autocast_dtype is torch.float16 and profile.grad_scaler and not profile.tf32
    text = profile.describe()
    assert "Tesla T4 (15 GiB, compute capability 7.5): fp16 autocast with a gradient scaler" in text
    assert "peak 65 TFLOP/s (fp16, dense)" in text
    # train_model has no gradient scaler, so chapter 05's own run stays in float32 there, and says so.
    assert "float32, since fp16 needs a gradient scaler" in pick_run("cuda").describe()


def test_without_triton_nothing_is_compiled(monkeypatch):
    pretend_gpu(monkeypatch, "H100", triton=False)
    profile = runtime_profile("cuda")
    assert not profile.compile and "no Triton" in profile.describe()
    assert not pick_run("cuda").compile


def test_an_old_small_gpu_trains_in_float32_and_gets_the_cpu_run(monkeypatch):
    pretend_gpu(monkeypatch, GPUProperties("Quadro P1000", (6, 1), 4 * GIB))
    profile = runtime_profile("cuda")
    assert profile.autocast_dtype is None and not profile.grad_scaler and not profile.compile
    assert profile.peak is None and "no MFU figure" in profile.describe()
    run = pick_run("cuda")
    assert run.cfg == cpu_run().cfg and "too small for GPT-2's shape" in run.describe()


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_the_cpu_and_apple_gpus_train_in_float32_without_compiling(device):
    profile = runtime_profile(device)
    assert (profile.autocast_dtype, profile.grad_scaler, profile.tf32, profile.fused_adamw, profile.compile) == (
        None, False, False, False, False)
    assert profile.peak is None and profile.total_memory is None
    assert profile.largest_batch(cpu_run().cfg, half_precision=False) is None


def test_the_profile_reads_torch_s_device_properties(monkeypatch):
    fake = SimpleNamespace(name="NVIDIA L4", major=8, minor=9, total_memory=22 * GIB)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: fake)
    profile = runtime_profile("cuda")
    assert (profile.name, profile.capability, profile.total_memory) == ("NVIDIA L4", (8, 9), 22 * GIB)


@pytest.mark.parametrize("name, card", [
    ("Tesla T4", "T4"), ("NVIDIA A100-SXM4-80GB", "A100"), ("NVIDIA A100 80GB PCIe", "A100"),
    ("NVIDIA H100 80GB HBM3", "H100"), ("NVIDIA H100 PCIe", "H100 PCIe"), ("NVIDIA L4", "L4"),
    ("NVIDIA L40S", None), ("NVIDIA GeForce RTX 4090", None), ("NVIDIA H200", "H200"),
])
def test_cards_are_found_by_the_words_of_their_names(name, card):
    assert card_of(name) == card


def test_the_parameter_count_is_the_model_s():
    from grader.reference.ch04_gpt_model import GPT_CONFIG_124M, GPTModel

    for cfg in (GPT_CONFIG_124M, dict(GPT_CONFIG_124M, qkv_bias=True, context_length=256, n_layers=3)):
        with torch.device("meta"):
            model = GPTModel(cfg)
        assert runtime.gpt_parameter_count(cfg) == sum(p.numel() for p in model.parameters())


def test_the_memory_estimate_counts_weights_activations_and_logits():
    cfg = {"vocab_size": 100, "context_length": 10, "emb_dim": 8, "n_heads": 2, "n_layers": 1, "qkv_bias": False}
    # By hand: 2,544 parameters x 16 bytes; 10 tokens x 1 block x (17 x 8 + 2.5 x 2 heads x 10) numbers
    # x 4 bytes; 10 x 100 logits x (4 + 4 + 4) bytes.
    assert runtime.gpt_parameter_count(cfg) == 2544
    assert runtime.training_memory_bytes(cfg, 1, half_precision=False) == 2544 * 16 + 10 * 186 * 4 + 1000 * 12
    big = dict(cfg, context_length=512, emb_dim=768, n_heads=12, n_layers=12, vocab_size=50257)
    sizes = [runtime.training_memory_bytes(big, b) for b in (1, 2, 4)]
    assert sizes == sorted(sizes) and sizes[2] - sizes[1] == 2 * (sizes[1] - sizes[0])  # linear in the batch
    assert runtime.training_memory_bytes(big, 4, flash_attention=True) < sizes[2]
    assert runtime.training_memory_bytes(big, 4, half_precision=False) > sizes[2]


@pytest.mark.parametrize("card", sorted(CARDS))
def test_a_training_step_and_a_generation_step_run_under_each_card_s_settings(monkeypatch, card):
    """Every change the card gets (its number format, the gradient scaler with fp16, fused
    AdamW, flash attention, the padded head) in one training step of a small GPTModel, on the
    CPU: CPU kernels, not the card's, but the same code path. TF32 is a switch of the CUDA
    matrix products, and torch.compile is left out (compiling on two CPU cores takes longer
    than this test may). Then greedy generation with the static cache on the trained model,
    in float32 as the benchmark generates; and chapter 05's run at its full size on the meta
    device (shapes only)."""
    from gptcourse.kvcache import StaticCachedGPT, generate_greedy_cached
    from gptcourse.speedups import TrainingStep, prepare_model, random_batch, speed_ladder
    from grader.reference.ch03_multihead_attention import MultiHeadAttention
    from grader.reference.ch04_gpt_model import GPTModel, generate_text_simple

    pretend_gpu(monkeypatch, card)
    profile = runtime_profile("cuda")
    settings = dataclasses.replace(speed_ladder(profile)[-1].settings, tf32=False, compile=False)
    assert settings.autocast_dtype is profile.autocast_dtype and settings.fused_adamw
    cfg = {"vocab_size": 300, "context_length": 16, "emb_dim": 16, "n_heads": 2, "n_layers": 2, "drop_rate": 0.0,
           "qkv_bias": False}
    model = prepare_model(GPTModel, cfg, settings, "cpu", MultiHeadAttention)
    before = copy.deepcopy(model.state_dict())
    step = TrainingStep(model, settings, "cpu", lr=1e-2)
    loss = step(*random_batch(2, 16, 300, "cpu"))
    assert torch.isfinite(loss) and 5 < loss.item() < 7  # about ln 300 = 5.7 for random weights
    assert step.scaler.is_enabled() == (profile.autocast_dtype is torch.float16)
    assert not torch.equal(before["trf_blocks.0.att.W_query.weight"], model.trf_blocks[0].att.W_query.weight)

    model.eval()
    prompt = torch.randint(0, 300, (2, 4))
    expected = generate_text_simple(model, prompt, 6, context_size=16)
    assert torch.equal(generate_greedy_cached(StaticCachedGPT(model, cfg, batch_size=2), prompt, 6), expected)

    run = pick_run("cuda")
    with torch.device("meta"):
        full = GPTModel(run.cfg)
        ids = torch.zeros(run.batch_size, run.cfg["context_length"], dtype=torch.long)
        logits = full(ids)
        torch.nn.functional.cross_entropy(logits.flatten(0, 1), ids.flatten()).backward()
    assert logits.shape == (run.batch_size, 512, 50257) and full.out_head.weight.grad.shape == (50257, 768)
