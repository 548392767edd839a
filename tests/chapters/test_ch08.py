"""Chapter 08's checks that need more than the corpus: what the grader and the self-check
observe of a LoRA layer's random initialisation; and the reference package against the book's
values for chapter 08."""
import torch

from factory import corpus_items, load
from gptcourse.checking.probes import ProbeContext, run_probe
from grader.chapters import public_cases
from grader.reference import ch04_gpt_model as ch04
from grader.reference import reference_earlier


def initialisation_case():
    return next(case for case in public_cases("8.1") if case.kind == "init")


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


# ------------------------------------------------------------------------------------------
# The book's values, computed by the reference package (grader/reference)
# ------------------------------------------------------------------------------------------

def test_lora_on_gpt2_small_with_a_2_class_head_trains_2_666_528_parameters():
    from grader.reference import ch07_classification as ch07
    from grader.reference import ch08_lora as ch08
    cfg = dict(ch04.GPT_CONFIG_124M, qkv_bias=True)
    with torch.device("meta"):
        model = ch04.GPTModel(cfg)
        ch07.add_classification_head(model, num_classes=2, emb_dim=768)
        for param in model.parameters():
            param.requires_grad = False
        ch08.replace_linear_with_lora(model, rank=16, alpha=16)
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    frozen = sum(p.numel() for p in model.parameters() if not p.requires_grad)
    assert trainable == 2_666_528
    assert frozen == 124_441_346  # GPT-2 small with its 2-class head, as in the book


def test_a_new_lora_layer_changes_nothing_and_a_merged_one_computes_the_same():
    from grader.reference import ch08_lora as ch08
    torch.manual_seed(123)
    linear = torch.nn.Linear(6, 4)
    wrapped = ch08.LinearWithLoRA(linear, rank=2, alpha=8)
    x = torch.randn(3, 6)
    assert torch.equal(wrapped(x), linear(x)) and wrapped.linear is linear
    assert wrapped.lora.A.shape == (6, 2) and wrapped.lora.A.abs().max() <= 1 / 2 ** 0.5
    with torch.no_grad():
        wrapped.lora.B.normal_()
        merged = torch.nn.Linear(6, 4)
        merged.weight.copy_(linear.weight + 8 * (wrapped.lora.A @ wrapped.lora.B).T)
        merged.bias.copy_(linear.bias)
        torch.testing.assert_close(merged(x), wrapped(x))


def test_lora_on_the_offline_small_model_trains_a_fraction_of_what_chapter_07_trains():
    """The settings chapter 08 takes for the small model (gptcourse.finetune.pick_lora_settings);
    how accurate they are is pinned on the notebook's own run (tests/notebooks/test_masters_run.py)."""
    from gptcourse.finetune import pick_lora_settings
    from gptcourse.pretrain import count_trainable, cpu_run
    from grader.reference import ch07_classification as ch07
    from grader.reference import ch08_lora as ch08

    cfg, lora = cpu_run().cfg, pick_lora_settings("small")
    with torch.device("meta"):
        chapter_07 = ch07.add_classification_head(ch04.GPTModel(cfg), num_classes=2, emb_dim=cfg["emb_dim"])
        with_lora = ch07.add_classification_head(ch04.GPTModel(cfg), num_classes=2, emb_dim=cfg["emb_dim"])
        for param in with_lora.parameters():
            param.requires_grad = False
        ch08.replace_linear_with_lora(with_lora, rank=lora.rank, alpha=lora.alpha)
    assert count_trainable(with_lora) < count_trainable(chapter_07) / 4
    assert pick_lora_settings("gpt2").rank == 16 and pick_lora_settings("gpt2").alpha == 16  # the book's
