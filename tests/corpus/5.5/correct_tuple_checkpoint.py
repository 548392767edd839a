# expect: correct
# mistake: none (a (model_state, optimizer_state) tuple instead of a dict; torch.load with weights_only=True and no map_location)
def save_checkpoint(model, optimizer, path):
    torch.save((model.state_dict(), optimizer.state_dict()), path)


def load_checkpoint(path, model, optimizer=None):
    model_state, optimizer_state = torch.load(path, weights_only=True)
    model.load_state_dict(model_state)
    if optimizer is not None:
        optimizer.load_state_dict(optimizer_state)
