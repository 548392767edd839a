# expect: wrong
# mistake: saves only model.state_dict() and loads only the model: the optimizer's state (AdamW's moments) is lost.
# keywords: optimizer's state, optimizer.state_dict()
def save_checkpoint(model, optimizer, path):
    torch.save(model.state_dict(), path)


def load_checkpoint(path, model, optimizer=None):
    model.load_state_dict(torch.load(path, map_location="cpu", weights_only=True))
    return model, optimizer
