"""Progress bars appear once a loop has been running for a moment (gptcourse.progress): a cell
that stops at once on a task you have not finished shows its one-line message alone, not an
empty bar above it."""
import time

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from gptcourse import progress_bar
from gptcourse.finetune import FinetuneRun, train_classifier
from gptcourse.pretrain import TrainingProgress


def tiny_loader():
    return DataLoader(TensorDataset(torch.zeros(6, 3, dtype=torch.long), torch.zeros(6, dtype=torch.long)),
                      batch_size=2)


def unfinished(*args, **kwargs):
    raise NotImplementedError()


def test_a_training_loop_that_stops_at_once_draws_no_bar(capsys):
    progress = TrainingProgress(tiny_loader(), num_epochs=2)
    with pytest.raises(NotImplementedError):
        for batch in progress:
            unfinished(batch)
    progress.close()
    assert capsys.readouterr().err == ""


def test_fine_tuning_with_an_unfinished_loss_draws_no_bar(capsys):
    model = torch.nn.Linear(3, 2)
    run = FinetuneRun("a test run", num_epochs=1, lr=0.1, eval_freq=1, eval_iter=1)
    with pytest.raises(NotImplementedError):
        train_classifier(model, tiny_loader(), tiny_loader(), torch.optim.SGD(model.parameters(), lr=0.1), "cpu",
                         run, unfinished, unfinished)
    assert capsys.readouterr().err == ""


def test_a_loop_that_takes_a_while_still_gets_its_bar(capsys):
    for _ in progress_bar(range(8), desc="waiting"):
        time.sleep(0.1)
    assert "waiting" in capsys.readouterr().err
