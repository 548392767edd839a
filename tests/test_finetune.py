"""gptcourse.finetune: the fine-tuning run chapter 07 picks for its base model and device."""
from gptcourse.finetune import pick_finetune_run
from gptcourse.pretrain import QUICK_ENV_VAR


def test_the_small_model_and_gpt2_on_a_gpu_get_the_book_s_five_full_epochs(monkeypatch):
    monkeypatch.delenv(QUICK_ENV_VAR, raising=False)
    for run in (pick_finetune_run("cpu", "small"), pick_finetune_run("cuda", "gpt2")):
        assert run.num_epochs == 5 and run.train_batches is None and run.accuracy_batches is None
        assert "5 epochs over every training batch" in run.describe()
    assert pick_finetune_run("cuda", "gpt2").lr == 5e-5  # the book's rate for GPT-2


def test_gpt2_on_a_cpu_fine_tunes_on_a_subset_and_says_so(monkeypatch):
    monkeypatch.delenv(QUICK_ENV_VAR, raising=False)
    run = pick_finetune_run("cpu", "gpt2")
    assert run.train_batches and run.accuracy_batches and run.num_epochs == 1
    assert "subset" in run.describe() and f"the first {run.train_batches} batches of each epoch" in run.describe()


def test_a_quick_run_is_one_short_epoch_whatever_the_base(monkeypatch):
    monkeypatch.setenv(QUICK_ENV_VAR, "1")
    for base in ("small", "gpt2"):
        run = pick_finetune_run("cpu", base)
        assert (run.num_epochs, run.train_batches) == (1, 10)
        assert f"because {QUICK_ENV_VAR} is set" in run.describe()
