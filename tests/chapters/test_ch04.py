"""Chapter 04 (the GPT model): the reference package against the book's numbers for GPT-2 small
(GPT_CONFIG_124M)."""
import pytest
import torch

from book import close, count_parameters
from grader.reference import ch01_text_data as ch01
from grader.reference import ch04_gpt_model as ch04


def test_gpt2_small_has_163_million_parameters_124_million_with_weight_tying():
    with torch.device("meta"):  # shapes only: nothing is allocated
        model = ch04.GPTModel(ch04.GPT_CONFIG_124M)
    total = count_parameters(model)
    assert total == 163_009_536
    assert total - model.out_head.weight.numel() == 124_412_160
    assert round(total * 4 / 1024**2, 2) == 621.83  # float32 MB
    assert count_parameters(model.trf_blocks[0].att) == 2_360_064
    assert count_parameters(model.trf_blocks[0].ff) == 4_722_432


@pytest.mark.parametrize("emb_dim, n_layers, n_heads, total", [
    (1024, 24, 16, 406_212_608), (1280, 36, 20, 838_220_800), (1600, 48, 25, 1_637_792_000)])
def test_larger_gpt2_configurations_counted_on_meta(emb_dim, n_layers, n_heads, total):
    cfg = dict(ch04.GPT_CONFIG_124M, emb_dim=emb_dim, n_layers=n_layers, n_heads=n_heads)
    with torch.device("meta"):
        assert count_parameters(ch04.GPTModel(cfg)) == total


def test_layer_norm_gives_mean_0_and_variance_1_and_gelu_is_the_tanh_form():
    torch.manual_seed(123)
    x = torch.randn(2, 5) * 3 + 1
    out = ch04.LayerNorm(5)(x)
    assert torch.allclose(out.mean(-1), torch.zeros(2), atol=1e-6)
    assert torch.allclose(out.var(-1, unbiased=False), torch.ones(2), atol=1e-4)
    grid = torch.linspace(-4, 4, 81, dtype=torch.float64)
    assert torch.allclose(ch04.GELU()(grid), torch.nn.functional.gelu(grid, approximate="tanh"), atol=1e-12)
    assert not torch.allclose(ch04.GELU()(grid), torch.nn.functional.gelu(grid), atol=1e-5)  # not erf
    assert ch04.FeedForward(dict(ch04.GPT_CONFIG_124M, emb_dim=6))(torch.rand(2, 3, 6)).shape == (2, 3, 6)


@pytest.fixture(scope="module")
def untrained_gpt2():
    """GPT-2 small with the book's seed, and its logits on the book's batch, taken right after
    creation (in train mode, as the book prints them): (model, batch, logits)."""
    tokenizer = ch01.get_encoding()
    batch = torch.tensor([tokenizer.encode("Every effort moves you"), tokenizer.encode("Every day holds a")])
    torch.manual_seed(123)
    model = ch04.GPTModel(ch04.GPT_CONFIG_124M)
    with torch.no_grad():
        logits = model(batch)
    model.eval()
    return model, batch, logits


def test_untrained_gpt2_logits_and_greedy_text_match_the_book(untrained_gpt2):
    model, batch, logits = untrained_gpt2
    assert logits.shape == (2, 4, 50257)
    assert close(logits[0, 0, :3], [0.3613, 0.4222, -0.0711])
    tokenizer = ch01.get_encoding()
    start = torch.tensor([tokenizer.encode("Hello, I am")])
    out = ch04.generate_text_simple(model, start, max_new_tokens=6,
                                    context_size=ch04.GPT_CONFIG_124M["context_length"])
    assert out.tolist() == [[15496, 11, 314, 716, 27018, 24086, 47843, 30961, 42348, 7267]]
    assert tokenizer.decode(out[0].tolist()) == "Hello, I am Featureiman Byeswickattribute argue"
    assert torch.equal(start, torch.tensor([[15496, 11, 314, 716]]))  # the input is left alone
