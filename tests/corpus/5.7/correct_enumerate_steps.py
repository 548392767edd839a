# expect: correct
# mistake: none (the step number from enumerate: epoch * len(train_loader) + i; the cosine written as min_lr + 0.5 * (peak_lr - min_lr) * (1 + cos); zero_grad after the step)
def lr_at_step(step, total_steps, warmup_steps, peak_lr, initial_lr, min_lr):
    if step >= warmup_steps:
        decay_steps = total_steps - warmup_steps
        progress = (step - warmup_steps) / decay_steps
        return min_lr + 0.5 * (peak_lr - min_lr) * (1 + math.cos(math.pi * progress))
    return initial_lr + (peak_lr - initial_lr) * step / warmup_steps


def train_model(model, train_loader, val_loader, optimizer, device, num_epochs, eval_freq, eval_iter,
                start_context, tokenizer, warmup_steps, initial_lr=3e-05, min_lr=1e-6):
    peak_lr = optimizer.param_groups[0]["lr"]
    steps_per_epoch = len(train_loader)
    total_steps = steps_per_epoch * num_epochs
    train_losses, val_losses, track_tokens_seen, lrs = [], [], [], []
    tokens_seen = 0
    for epoch in range(num_epochs):
        model.train()
        for i, (input_batch, target_batch) in enumerate(train_loader):
            step = epoch * steps_per_epoch + i
            lr = lr_at_step(step, total_steps, warmup_steps, peak_lr, initial_lr, min_lr)
            for group in optimizer.param_groups:
                group["lr"] = lr
            lrs.append(lr)
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()
            if step >= warmup_steps:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
            optimizer.step()
            optimizer.zero_grad()
            tokens_seen += input_batch.numel()
            if step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)
                val_losses.append(val_loss)
                track_tokens_seen.append(tokens_seen)
        generate_and_print_sample(model, tokenizer, device, start_context)
    return train_losses, val_losses, track_tokens_seen, lrs
