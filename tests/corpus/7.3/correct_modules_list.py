# expect: correct
# mistake: none (freezes with a loop over parameters, then unfreezes the parameters of a list of modules, the new head included)
def add_classification_head(model, num_classes, emb_dim):
    for param in model.parameters():
        param.requires_grad_(False)
    model.out_head = torch.nn.Linear(emb_dim, num_classes, bias=True)
    for module in (model.trf_blocks[len(model.trf_blocks) - 1], model.final_norm, model.out_head):
        for param in module.parameters():
            param.requires_grad = True
    return model
