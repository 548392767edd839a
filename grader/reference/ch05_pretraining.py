"""Reference solutions of 05_pretraining: GENERATED from solutions/05_pretraining.ipynb by
`make release` (python -m grader.authoring.build). Do not edit; edit the master instead."""


# %% setup
import math

import tiktoken
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset  # what a pasted create_dataloader_v1 (chapter 01) uses

from gptcourse import check, get_device, get_encoding, show_text  # show_text: a long text broken between words
from gptcourse.notebook import explain_unfinished_tasks

# From here on, a cell that needs a task you have not finished says which, in one line.
explain_unfinished_tasks("05_pretraining")

# GPT-2 small ("124M") as in chapter 04, with a context of 256 tokens: shorter, so it trains faster.
GPT_CONFIG_124M = {
    "vocab_size": 50257,
    "context_length": 256,
    "emb_dim": 768,
    "n_heads": 12,
    "n_layers": 12,
    "drop_rate": 0.1,
    "qkv_bias": False,
}

# The GPT-2 tokenizer (works offline: the course ships its two files).
tokenizer = get_encoding()


# %% carried over from an earlier chapter
from grader.reference.ch01_text_data import create_dataloader_v1


# %% carried over from an earlier chapter
from grader.reference.ch04_gpt_model import GPTModel


# %% carried over from an earlier chapter
from grader.reference.ch04_gpt_model import generate_text_simple


# %% task 5.1: text_to_token_ids, token_ids_to_text
def text_to_token_ids(text, tokenizer):
    """Text -> a (1, num_tokens) tensor of token ids: a batch of one."""
    encoded = tokenizer.encode(text, allowed_special={"<|endoftext|>"})
    # dtype=torch.long: torch.tensor of an empty list would be float32
    return torch.tensor(encoded, dtype=torch.long).unsqueeze(0)  # add the batch dimension


def token_ids_to_text(token_ids, tokenizer):
    """A (1, num_tokens) tensor of token ids -> text."""
    flat = token_ids.squeeze(0)  # remove the batch dimension
    return tokenizer.decode(flat.tolist())


# %% task 5.2: calc_loss_batch
def calc_loss_batch(input_batch, target_batch, model, device):
    """The mean cross-entropy of the model's next-token predictions over one batch."""
    input_batch = input_batch.to(device)
    target_batch = target_batch.to(device)
    logits = model(input_batch)  # (batch, num_tokens, vocab_size)
    # cross_entropy wants (N, classes) and (N,): flatten batch and tokens into one dimension
    return torch.nn.functional.cross_entropy(logits.flatten(0, 1), target_batch.flatten())


# %% task 5.3: calc_loss_loader
def calc_loss_loader(data_loader, model, device, num_batches=None):
    """The mean of the batch losses over the first num_batches batches (all by default)."""
    if len(data_loader) == 0:
        return float("nan")
    if num_batches is None:
        num_batches = len(data_loader)
    else:
        num_batches = min(num_batches, len(data_loader))  # never ask for more than there are
    total_loss = 0.0
    for i, (input_batch, target_batch) in enumerate(data_loader):
        if i >= num_batches:
            break
        loss = calc_loss_batch(input_batch, target_batch, model, device)
        total_loss += loss.item()
    return total_loss / num_batches


# %% task 5.4: train_model_simple
def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    """Training and validation loss over eval_iter batches each, in eval mode, without gradients."""
    model.eval()  # dropout off
    with torch.no_grad():  # no graph: evaluation never calls backward
        train_loss = calc_loss_loader(train_loader, model, device, num_batches=eval_iter)
        val_loss = calc_loss_loader(val_loader, model, device, num_batches=eval_iter)
    model.train()
    return train_loss, val_loss


def generate_and_print_sample(model, tokenizer, device, start_context):
    """Print 50 greedy tokens after start_context, to watch the model learn. (Given.)"""
    model.eval()
    context_size = model.pos_emb.weight.shape[0]
    encoded = text_to_token_ids(start_context, tokenizer).to(device)
    with torch.no_grad():
        token_ids = generate_text_simple(model, encoded, max_new_tokens=50, context_size=context_size)
    text = token_ids_to_text(token_ids, tokenizer)
    from gptcourse import show_text  # here, so that the function works wherever it is pasted

    show_text(text.replace("\n", " "))  # one sample, broken between words
    model.train()


def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                       eval_freq, eval_iter, start_context, tokenizer):
    """Train for num_epochs; return (train_losses, val_losses, tokens_seen) of every evaluation."""
    train_losses, val_losses, track_tokens_seen = [], [], []
    tokens_seen, global_step = 0, -1
    for epoch in range(num_epochs):
        model.train()
        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()  # forget the previous batch's gradients
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()
            optimizer.step()
            tokens_seen += input_batch.numel()
            global_step += 1
            if global_step % eval_freq == 0:  # steps 0, eval_freq, 2 * eval_freq, ...
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)
                val_losses.append(val_loss)
                track_tokens_seen.append(tokens_seen)
                print(f"Ep {epoch + 1} (step {global_step:06d}): "
                      f"train loss {train_loss:.3f}, val loss {val_loss:.3f}")
        generate_and_print_sample(model, tokenizer, device, start_context)
    return train_losses, val_losses, track_tokens_seen


# %% task 5.5: save_checkpoint, load_checkpoint
def save_checkpoint(model, optimizer, path):
    """Save the model's and the optimizer's state in one file."""
    torch.save({"model_state_dict": model.state_dict(),
                "optimizer_state_dict": optimizer.state_dict()}, path)


def load_checkpoint(path, model, optimizer=None):
    """Restore what save_checkpoint saved; weights_only=True refuses anything but tensors and plain data."""
    checkpoint = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(checkpoint["model_state_dict"])
    if optimizer is not None:
        optimizer.load_state_dict(checkpoint["optimizer_state_dict"])
    return model, optimizer


# %% task 5.6: load_weights_into_gpt
def assign(param, values, name):
    """A new Parameter holding `values`, after checking they fit where they go."""
    if param.shape != values.shape:
        raise ValueError(f"shape mismatch for {name}: the model expects {tuple(param.shape)}, "
                         f"the checkpoint has {tuple(values.shape)}")
    return nn.Parameter(values.detach().clone().to(param.dtype))


def load_weights_into_gpt(gpt, state_dict):
    """Copy a GPT-2 checkpoint in the Hugging Face layout into our GPTModel."""
    sd = state_dict
    gpt.tok_emb.weight = assign(gpt.tok_emb.weight, sd["wte.weight"], "wte.weight")
    gpt.pos_emb.weight = assign(gpt.pos_emb.weight, sd["wpe.weight"], "wpe.weight")
    for b, block in enumerate(gpt.trf_blocks):
        h = f"h.{b}."
        att = block.att
        # c_attn holds query, key and value side by side, stored (in, out): split, then transpose
        q_w, k_w, v_w = torch.chunk(sd[h + "attn.c_attn.weight"], 3, dim=-1)
        q_b, k_b, v_b = torch.chunk(sd[h + "attn.c_attn.bias"], 3, dim=-1)
        att.W_query.weight = assign(att.W_query.weight, q_w.T, h + "attn.c_attn.weight (query)")
        att.W_key.weight = assign(att.W_key.weight, k_w.T, h + "attn.c_attn.weight (key)")
        att.W_value.weight = assign(att.W_value.weight, v_w.T, h + "attn.c_attn.weight (value)")
        att.W_query.bias = assign(att.W_query.bias, q_b, h + "attn.c_attn.bias (query)")
        att.W_key.bias = assign(att.W_key.bias, k_b, h + "attn.c_attn.bias (key)")
        att.W_value.bias = assign(att.W_value.bias, v_b, h + "attn.c_attn.bias (value)")
        att.out_proj.weight = assign(att.out_proj.weight, sd[h + "attn.c_proj.weight"].T, h + "attn.c_proj.weight")
        att.out_proj.bias = assign(att.out_proj.bias, sd[h + "attn.c_proj.bias"], h + "attn.c_proj.bias")
        ff = block.ff.layers
        ff[0].weight = assign(ff[0].weight, sd[h + "mlp.c_fc.weight"].T, h + "mlp.c_fc.weight")
        ff[0].bias = assign(ff[0].bias, sd[h + "mlp.c_fc.bias"], h + "mlp.c_fc.bias")
        ff[2].weight = assign(ff[2].weight, sd[h + "mlp.c_proj.weight"].T, h + "mlp.c_proj.weight")
        ff[2].bias = assign(ff[2].bias, sd[h + "mlp.c_proj.bias"], h + "mlp.c_proj.bias")
        block.norm1.scale = assign(block.norm1.scale, sd[h + "ln_1.weight"], h + "ln_1.weight")
        block.norm1.shift = assign(block.norm1.shift, sd[h + "ln_1.bias"], h + "ln_1.bias")
        block.norm2.scale = assign(block.norm2.scale, sd[h + "ln_2.weight"], h + "ln_2.weight")
        block.norm2.shift = assign(block.norm2.shift, sd[h + "ln_2.bias"], h + "ln_2.bias")
    gpt.final_norm.scale = assign(gpt.final_norm.scale, sd["ln_f.weight"], "ln_f.weight")
    gpt.final_norm.shift = assign(gpt.final_norm.shift, sd["ln_f.bias"], "ln_f.bias")
    # GPT-2 ties the output head to the token embedding: the same numbers predict and embed
    gpt.out_head.weight = assign(gpt.out_head.weight, sd["wte.weight"], "wte.weight (output head)")


# %% task 5.7: lr_at_step, train_model
def lr_at_step(step, total_steps, warmup_steps, peak_lr, initial_lr, min_lr):
    """The learning rate of step `step` (0-based): linear warmup, then cosine decay to min_lr."""
    if step < warmup_steps:
        return initial_lr + step * (peak_lr - initial_lr) / warmup_steps
    progress = (step - warmup_steps) / (total_steps - warmup_steps)  # 0 -> 1 after warmup
    return min_lr + (peak_lr - min_lr) * 0.5 * (1 + math.cos(math.pi * progress))


def train_model(model, train_loader, val_loader, optimizer, device, num_epochs, eval_freq, eval_iter,
                start_context, tokenizer, warmup_steps, initial_lr=3e-05, min_lr=1e-6):
    """train_model_simple with warmup, cosine decay and gradient clipping; also returns the rates."""
    train_losses, val_losses, track_tokens_seen, track_lrs = [], [], [], []
    tokens_seen, global_step = 0, -1
    peak_lr = optimizer.param_groups[0]["lr"]  # the optimizer's rate is the peak
    total_steps = len(train_loader) * num_epochs
    for epoch in range(num_epochs):
        model.train()
        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()
            global_step += 1
            lr = lr_at_step(global_step, total_steps, warmup_steps, peak_lr, initial_lr, min_lr)
            for param_group in optimizer.param_groups:
                param_group["lr"] = lr
            track_lrs.append(lr)
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()
            if global_step >= warmup_steps:  # clip only once warmup is over
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            tokens_seen += input_batch.numel()
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)
                val_losses.append(val_loss)
                track_tokens_seen.append(tokens_seen)
                print(f"Ep {epoch + 1} (step {global_step:06d}): "
                      f"train loss {train_loss:.3f}, val loss {val_loss:.3f}, lr {lr:.2e}")
        generate_and_print_sample(model, tokenizer, device, start_context)
    return train_losses, val_losses, track_tokens_seen, track_lrs
