# expect: wrong
# mistake: forgets the factor 0.5 of the cosine, so right after warmup the rate is min_lr + 2 * (peak_lr - min_lr), about twice the peak.
# keywords: 0.5, half, peak rate
# absent: progress 0
def lr_at_step(step, total_steps, warmup_steps, peak_lr, initial_lr, min_lr):
    if step < warmup_steps:
        lr_increment = (peak_lr - initial_lr) / warmup_steps
        return initial_lr + step * lr_increment
    progress = (step - warmup_steps) / (total_steps - warmup_steps)
    return min_lr + (peak_lr - min_lr) * (1 + math.cos(math.pi * progress))


def train_model(model, train_loader, val_loader, optimizer, device, num_epochs, eval_freq, eval_iter,
                start_context, tokenizer, warmup_steps, initial_lr=3e-05, min_lr=1e-6):
    train_losses, val_losses, track_tokens_seen, track_lrs = [], [], [], []
    tokens_seen, global_step = 0, -1

    peak_lr = optimizer.param_groups[0]["lr"]
    total_training_steps = len(train_loader) * num_epochs

    for epoch in range(num_epochs):
        model.train()
        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()
            global_step += 1

            lr = lr_at_step(global_step, total_training_steps, warmup_steps, peak_lr, initial_lr, min_lr)
            for param_group in optimizer.param_groups:
                param_group["lr"] = lr
            track_lrs.append(lr)

            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()

            if global_step >= warmup_steps:
                torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)

            optimizer.step()
            tokens_seen += input_batch.numel()

            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                train_losses.append(train_loss)
                val_losses.append(val_loss)
                track_tokens_seen.append(tokens_seen)
                print(f"Ep {epoch+1} (Iter {global_step:06d}): "
                      f"Train loss {train_loss:.3f}, Val loss {val_loss:.3f}")

        generate_and_print_sample(model, tokenizer, device, start_context)

    return train_losses, val_losses, track_tokens_seen, track_lrs
