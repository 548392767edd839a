# expect: correct
# mistake: none (Module.requires_grad_ on the whole model, the last block and final_norm; the head is created after freezing; returns None)
def add_classification_head(model, num_classes, emb_dim):
    model.requires_grad_(False)
    model.out_head = nn.Linear(in_features=emb_dim, out_features=num_classes)
    model.trf_blocks[-1].requires_grad_(True)
    model.final_norm.requires_grad_(True)
