# expect: correct
# mistake: none (evaluate_model under the @torch.no_grad() decorator; the loop keeps its history in a dict; no print)
@torch.no_grad()
def evaluate_model(model, train_loader, val_loader, device, eval_iter):
    model.eval()
    losses = [calc_loss_loader(loader, model, device, num_batches=eval_iter)
              for loader in (train_loader, val_loader)]
    model.train()
    return losses[0], losses[1]


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
    history = {"train": [], "val": [], "tokens": []}
    tokens_seen, global_step = 0, -1
    for _ in range(num_epochs):
        model.train()
        for input_batch, target_batch in train_loader:
            optimizer.zero_grad()
            loss = calc_loss_batch(input_batch, target_batch, model, device)
            loss.backward()
            optimizer.step()
            tokens_seen += input_batch.numel()
            global_step += 1
            if global_step % eval_freq == 0:
                train_loss, val_loss = evaluate_model(model, train_loader, val_loader, device, eval_iter)
                history["train"].append(train_loss)
                history["val"].append(val_loss)
                history["tokens"].append(tokens_seen)
        generate_and_print_sample(model, tokenizer, device, start_context)
    return history["train"], history["val"], history["tokens"]
