# expect: wrong
# mistake: appends the learning rate to track_lrs only at the steps that evaluate, so the returned rates hold one entry per evaluation instead of one per step.
# keywords: one per optimizer step, every step
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
                track_lrs.append(lr)
                print(f"Ep {epoch + 1} (step {global_step:06d}): "
                      f"train loss {train_loss:.3f}, val loss {val_loss:.3f}, lr {lr:.2e}")
        generate_and_print_sample(model, tokenizer, device, start_context)
    return train_losses, val_losses, track_tokens_seen, track_lrs
