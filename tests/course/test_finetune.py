"""gptcourse.finetune: the fine-tuning run chapter 07 picks for its base model and device."""
from factory import one_line
from fake_gpus import pretend_gpu
from gptcourse.finetune import pick_finetune_run
from gptcourse.messages import SHOWN_WIDTH
from gptcourse.pretrain import QUICK_ENV_VAR


def test_the_small_model_and_gpt2_on_a_gpu_get_the_book_s_five_full_epochs(monkeypatch):
    monkeypatch.delenv(QUICK_ENV_VAR, raising=False)
    pretend_gpu(monkeypatch, "T4")
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


def test_train_classifier_trains_and_times_each_epoch_with_the_functions_it_is_given():
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    from gptcourse.checking.chapters.toys import ToyClassifier
    from gptcourse.finetune import FinetuneRun, train_classifier
    from grader.reference.ch07_classification import calc_accuracy_loader, calc_loss_batch_cls

    torch.manual_seed(0)
    ids = torch.randint(0, 50, (24, 5))
    labels = (ids[:, -1] % 2).long()  # learnable from the last token
    loader = DataLoader(TensorDataset(ids, labels), batch_size=4)
    model = ToyClassifier(context_length=5, emb_dim=8, num_classes=2)
    before = calc_accuracy_loader(loader, model, "cpu")
    run = FinetuneRun("test", num_epochs=3, lr=0.05, eval_freq=2, eval_iter=1)
    history = train_classifier(model, loader, loader, torch.optim.AdamW(model.parameters(), lr=run.lr), "cpu", run,
                               calc_loss_batch_cls, calc_accuracy_loader)
    train_losses, val_losses, train_accs, val_accs, examples, seconds = history
    assert len(train_accs) == len(val_accs) == len(seconds) == 3 and all(s > 0 for s in seconds)
    assert len(train_losses) == len(val_losses) == len(examples) == 9  # 18 steps, every 2nd evaluated
    assert examples[0] == 4 and examples[-1] == 4 * 17
    assert train_accs[-1] > before


def test_spam_loaders_cut_the_messages_to_the_model_s_context_and_say_so(tmp_path, capsys):
    import pandas as pd

    from gptcourse import get_encoding
    from gptcourse.finetune import spam_loaders
    from grader.reference.ch07_classification import SpamDataset

    tokenizer = get_encoding()
    texts = {"train": ["one two three four five six", "hi"], "validation": ["one two three four five six seven"],
             "test": ["ok"]}
    for name, part in texts.items():
        pd.DataFrame({"Label": [1] * len(part), "Text": part}).to_csv(tmp_path / f"{name}.csv", index=None)
    longest = len(tokenizer.encode(texts["train"][0]))

    *loaders, padded_length = spam_loaders(SpamDataset, tmp_path, tokenizer, context_length=longest, batch_size=1)
    assert padded_length == longest and capsys.readouterr().out == ""  # it fits: the book's padding
    assert [len(loader.dataset) for loader in loaders] == [2, 1, 1]
    assert {tuple(loader.dataset[0][0].shape) for loader in loaders} == {(longest,)}

    *loaders, padded_length = spam_loaders(SpamDataset, tmp_path, tokenizer, context_length=4, batch_size=1)
    said = capsys.readouterr().out
    assert one_line(said) == (f"The longest training message has {longest} tokens, more than the model's "
                              "context of 4: every message is cut to its first 4 tokens.")
    assert max(len(line) for line in said.splitlines()) <= SHOWN_WIDTH  # broken between words for the page
    assert padded_length == 4 and {tuple(loader.dataset[0][0].shape) for loader in loaders} == {(4,)}
    assert loaders[0].dataset[0][0].tolist() == tokenizer.encode(texts["train"][0])[:4]  # the first tokens
    train_batch, _ = next(iter(loaders[0]))
    assert train_batch.shape == (1, 4)
