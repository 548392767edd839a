# expect: correct
# mistake: none (no evaluate_model: evaluates inline under torch.inference_mode() between model.eval() and model.train(); the given generate_and_print_sample kept)
def generate_and_print_sample(model, tokenizer, device, start_context):
    """Print 50 greedy tokens after start_context, to watch the model learn. (Given.)"""
    model.eval()
    context_size = model.pos_emb.weight.shape[0]
    encoded = text_to_token_ids(start_context, tokenizer).to(device)
    with torch.no_grad():
        token_ids = generate_text_simple(model, encoded, max_new_tokens=50, context_size=context_size)
    text = token_ids_to_text(token_ids, tokenizer)
    print(text.replace("\n", " "))  # one line per sample
    model.train()


def train_model_simple(model, train_loader, val_loader, optimizer, device, num_epochs,
                       eval_freq, eval_iter, start_context, tokenizer):
    train_losses, val_losses, track_tokens_seen = [], [], []
    tokens_seen = 0
    global_step = -1
    for epoch in range(num_epochs):
        model.train()
        for inputs, targets in train_loader:
            optimizer.zero_grad()
            calc_loss_batch(inputs, targets, model, device).backward()
            optimizer.step()
            tokens_seen += inputs.numel()
            global_step += 1
            if global_step % eval_freq != 0:
                continue
            model.eval()
            with torch.inference_mode():
                train_loss = calc_loss_loader(train_loader, model, device, eval_iter)
                val_loss = calc_loss_loader(val_loader, model, device, eval_iter)
            model.train()
            train_losses.append(train_loss)
            val_losses.append(val_loss)
            track_tokens_seen.append(tokens_seen)
            print(f"epoch {epoch + 1}, step {global_step}: train {train_loss:.3f}, val {val_loss:.3f}")
        generate_and_print_sample(model, tokenizer, device, start_context)
    return train_losses, val_losses, track_tokens_seen
