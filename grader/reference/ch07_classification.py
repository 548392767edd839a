"""Reference solutions of 07_classification: GENERATED from solutions/07_classification.ipynb by
`make release` (python -m grader.authoring.build). Do not edit; edit the master instead."""


# %% setup
import math

import pandas as pd
import tiktoken
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from gptcourse import check, get_device, get_encoding
from gptcourse.notebook import explain_unfinished_tasks

# From here on, a cell that needs a task you have not finished says which, in one line.
explain_unfinished_tasks("07_classification")

# The GPT-2 tokenizer (works offline: the course ships its two files).
tokenizer = get_encoding()


# %% carried over from an earlier chapter
from grader.reference.ch01_text_data import create_dataloader_v1


# %% carried over from an earlier chapter
from grader.reference.ch03_multihead_attention import MultiHeadAttention


# %% carried over from an earlier chapter
from grader.reference.ch04_gpt_model import GPTModel


# %% carried over from an earlier chapter
from grader.reference.ch05_pretraining import text_to_token_ids, token_ids_to_text


# %% carried over from an earlier chapter
from grader.reference.ch05_pretraining import load_weights_into_gpt


# %% carried over from an earlier chapter
from grader.reference.ch05_pretraining import lr_at_step, train_model


# %% task 7.1: create_balanced_dataset, random_split
def create_balanced_dataset(df):
    """As many ham messages as spam ones: a seeded random sample of the ham rows, and every spam row."""
    num_spam = int((df["Label"] == "spam").sum())
    ham_subset = df[df["Label"] == "ham"].sample(num_spam, random_state=123)  # seeded: the grader's draw
    return pd.concat([ham_subset, df[df["Label"] == "spam"]])


def random_split(df, train_frac, validation_frac):
    """Shuffle the rows (seed 123) and cut them into training, validation and test DataFrames."""
    df = df.sample(frac=1, random_state=123).reset_index(drop=True)  # a shuffled copy, numbered 0, 1, 2, ...
    train_end = int(len(df) * train_frac)
    validation_end = train_end + int(len(df) * validation_frac)
    return df[:train_end], df[train_end:validation_end], df[validation_end:]  # the test set takes the rest


# %% task 7.2: SpamDataset
class SpamDataset(Dataset):
    """The messages of a CSV file (columns Label and Text) as token ids of one common length."""

    def __init__(self, csv_file, tokenizer, max_length=None, pad_token_id=50256):
        self.data = pd.read_csv(csv_file)
        encoded_texts = [tokenizer.encode(text) for text in self.data["Text"]]  # tokenized once, here
        if max_length is None:
            max_length = max(len(ids) for ids in encoded_texts)  # the longest message sets the length
        self.max_length = max_length
        encoded_texts = [ids[:max_length] for ids in encoded_texts]  # keep the first max_length tokens
        self.encoded_texts = [ids + [pad_token_id] * (max_length - len(ids)) for ids in encoded_texts]

    def __getitem__(self, index):
        token_ids = torch.tensor(self.encoded_texts[index], dtype=torch.long)
        label = torch.tensor(self.data["Label"].iloc[index], dtype=torch.long)
        return token_ids, label

    def __len__(self):
        return len(self.data)


# %% task 7.3: add_classification_head
def add_classification_head(model, num_classes, emb_dim):
    """Turn a GPTModel into a classifier in place: a new num_classes-way output head; only the head,
    the last transformer block and the final norm stay trainable."""
    for param in model.parameters():
        param.requires_grad = False
    model.out_head = nn.Linear(emb_dim, num_classes)  # new, so trainable
    for param in model.trf_blocks[-1].parameters():
        param.requires_grad = True
    for param in model.final_norm.parameters():
        param.requires_grad = True
    return model


# %% task 7.4: calc_accuracy_loader, calc_loss_batch_cls
def calc_loss_batch_cls(input_batch, target_batch, model, device):
    """The mean cross-entropy of the last token's logits against the class labels."""
    input_batch, target_batch = input_batch.to(device), target_batch.to(device)
    logits = model(input_batch)[:, -1, :]  # the last token is the only one that has seen the whole message
    return nn.functional.cross_entropy(logits, target_batch)


def calc_accuracy_loader(data_loader, model, device, num_batches=None):
    """The fraction of messages classified right (from the last token) in the first num_batches batches."""
    model.eval()  # no dropout while predicting
    num_batches = len(data_loader) if num_batches is None else min(num_batches, len(data_loader))
    correct, seen = 0, 0
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i >= num_batches:
            break
        input_batch, target_batch = input_batch.to(device), target_batch.to(device)
        with torch.no_grad():
            logits = model(input_batch)[:, -1, :]
        predicted = torch.argmax(logits, dim=-1)
        correct += (predicted == target_batch).sum().item()
        seen += predicted.shape[0]
    return correct / seen


# %% task 7.5: classify_text
def classify_text(text, model, tokenizer, device, max_length, pad_token_id=50256):
    """"spam" or "not spam" for one message, from the last token's logits of a classifier GPT."""
    model.eval()
    input_ids = tokenizer.encode(text)
    length = min(max_length, model.pos_emb.weight.shape[0])  # never past the model's context
    input_ids = input_ids[:length]
    input_ids = input_ids + [pad_token_id] * (length - len(input_ids))
    input_tensor = torch.tensor(input_ids, device=device).unsqueeze(0)  # a batch of one
    with torch.no_grad():
        logits = model(input_tensor)[:, -1, :]
    predicted = torch.argmax(logits, dim=-1).item()
    return "spam" if predicted == 1 else "not spam"
