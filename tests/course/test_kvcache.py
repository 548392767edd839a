"""gptcourse.kvcache's static cache: allocated once, written in place, the same outputs and
ids as Task 6.5's cache and as no cache at all. (The simple cache's own tests are in
tests/chapters/test_ch06.py.)"""
import copy

import pytest
import torch

from gptcourse.kvcache import StaticCachedGPT, add_kv_cache, generate_greedy_cached
from grader.reference.ch04_gpt_model import GPTModel
from grader.reference.ch06_sampling import KVCacheMultiHeadAttention, generate

CFG = {"vocab_size": 500, "context_length": 48, "emb_dim": 32, "n_heads": 4, "n_layers": 2, "drop_rate": 0.0,
       "qkv_bias": True}


def random_model(dtype=torch.float32):
    torch.manual_seed(0)
    return GPTModel(CFG).to(dtype).eval()


@pytest.mark.parametrize("batch", [1, 8])
def test_greedy_ids_are_those_of_the_simple_cache_and_of_no_cache(batch):
    model = random_model()
    prompt = torch.randint(0, 500, (batch, 6))
    without_cache = generate(model, prompt, 40, CFG["context_length"])
    simple = generate_greedy_cached(add_kv_cache(copy.deepcopy(model), CFG, KVCacheMultiHeadAttention), prompt, 40)
    static = StaticCachedGPT(copy.deepcopy(model), CFG, batch_size=batch)
    assert torch.equal(generate_greedy_cached(static, prompt, 40), without_cache)
    assert torch.equal(simple, without_cache)
    # Generating again starts over (reset_cache): the same ids.
    assert torch.equal(generate_greedy_cached(static, prompt, 40), without_cache)


def test_chunks_give_the_logits_of_the_whole_sequence_and_the_cache_never_moves():
    model = random_model(torch.float64)
    ids = torch.randint(0, 500, (2, 20))
    with torch.no_grad():
        whole = model(ids)
        static = StaticCachedGPT(copy.deepcopy(model), CFG, batch_size=2)
        cache = static.model.trf_blocks[0].att.cache_k
        assert cache.shape == (2, 4, 48, 8)  # context_length positions from the start
        address = cache.data_ptr()
        pieces, start = [], 0
        for size in (7, 1, 1, 5, 6):
            pieces.append(static(ids[:, start:start + size]))
            start += size
    assert torch.allclose(torch.cat(pieces, dim=1), whole, atol=1e-12)
    assert static.model.trf_blocks[0].att.cache_k.data_ptr() == address  # written in place, not reallocated
    assert static.position.tokens == 20 and static.position.tensor.item() == 20


def test_the_static_cache_refuses_what_does_not_fit():
    static = StaticCachedGPT(random_model(), CFG, batch_size=2)
    with torch.no_grad():
        static(torch.zeros(2, 40, dtype=torch.long))
        with pytest.raises(ValueError, match="context length of 48"):
            static(torch.zeros(2, 9, dtype=torch.long))
        with pytest.raises(ValueError, match="holds 2 sequences, not 3"):
            static(torch.zeros(3, 1, dtype=torch.long))
        static.reset_cache()
        static(torch.zeros(2, 48, dtype=torch.long))  # room again after a reset


def test_a_cuda_graph_needs_a_cuda_device():
    static = StaticCachedGPT(random_model(), CFG, batch_size=1)
    with pytest.raises(ValueError, match="needs a CUDA device"):
        static.capture_decode_step()


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
@pytest.mark.parametrize("batch", [1, 8])
def test_the_captured_decode_step_gives_the_same_ids_on_a_gpu(batch):
    model = random_model().to("cuda")
    prompt = torch.randint(0, 500, (batch, 6), device="cuda")
    eager = generate_greedy_cached(StaticCachedGPT(copy.deepcopy(model), CFG, batch), prompt, 40)
    captured = StaticCachedGPT(copy.deepcopy(model), CFG, batch).capture_decode_step()
    assert captured.graph is not None
    replayed = []
    original_replay = captured.graph.replay
    captured.graph.replay = lambda: replayed.append(1) or original_replay()
    assert torch.equal(generate_greedy_cached(captured, prompt, 40), eager)
    assert len(replayed) == 39  # every token after the first came from the recorded step
    assert torch.equal(eager, generate(model, prompt, 40, CFG["context_length"]))


def test_the_generation_benchmark_runs_every_way_in_smoke_mode(tmp_path, capsys):
    """benchmarks/generate_bench.py --smoke: a tiny model, 20 tokens, batch 1 and 3, on the
    CPU: every run takes its turns and gives no cache's ids (its times mean nothing here)."""
    import json

    from factory import benchmark

    bench = benchmark("generate_bench")
    out = tmp_path / "figures.json"
    assert bench.main(["--smoke", "--device", "cpu", "--batch", "1", "3", "--out-json", str(out)]) == 0
    runs = json.loads(out.read_text())["runs"]
    assert [(r["batch"], r["run"]) for r in runs] == [
        (b, name) for b in (1, 3) for name in ("no cache", "simple cache (Task 6.5)", "static cache")]
    assert all(r["identical_ids"] and r["seconds"] > 0 for r in runs)
    assert "time per token (ms) at position" in capsys.readouterr().out
