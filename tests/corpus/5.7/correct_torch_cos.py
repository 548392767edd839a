# expect: correct
# mistake: none (torch.cos on a float64 tensor, the warmup as a linear interpolation, clipping with `>=`, the loss computed before the rate is set)
def lr_at_step(step, total_steps, warmup_steps, peak_lr, initial_lr, min_lr):
    if step < warmup_steps:
        fraction = step / warmup_steps
        return initial_lr + fraction * (peak_lr - initial_lr)
    progress = torch.tensor((step - warmup_steps) / (total_steps - warmup_steps), dtype=torch.float64)
    cosine = 0.5 * (1.0 + torch.cos(torch.pi * progress))
    return float(min_lr + (peak_lr - min_lr) * cosine)


def train_model(model, train_loader, val_loader, optimizer, device, num_epochs, eval_freq, eval_iter,
                start_context, tokenizer, warmup_steps, initial_lr=3e-05, min_lr=1e-6):
    train_losses, val_losses, tokens, lrs = [], [], [], []
    peak_lr = optimizer.param_groups[0]["lr"]
    total_steps = num_epochs * len(train_loader)
    tokens_seen, global_step = 0, -1
    for epoch in range(num_epochs):
        model.train()
        for input_batch, target_batch in train_loader:
            global_step += 1
            optimizer.zero_grad()
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            lr = lr_at_step(global_step, total_steps, warmup_steps, peak_lr, initial_lr, min_lr)
            for group in optimizer.param_groups:
                group["lr"] = lr
            lrs.append(lr)
            loss.backward()
            if global_step >= warmup_steps:
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            tokens_seen += input_batch.numel()
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)
                val_losses.append(val_loss)
                tokens.append(tokens_seen)
        generate_and_print_sample(model, tokenizer, device, start_context)
    return train_losses, val_losses, tokens, lrs
