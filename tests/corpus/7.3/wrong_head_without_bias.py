# expect: wrong
# mistake: copies the GPT's output layer's bias=False into the new head, nn.Linear(emb_dim, num_classes, bias=False).
# keywords: bias
def add_classification_head(model, num_classes, emb_dim):
    for param in model.parameters():
        param.requires_grad = False
    model.out_head = nn.Linear(emb_dim, num_classes, bias=False)
    for param in model.trf_blocks[-1].parameters():
        param.requires_grad = True
    for param in model.final_norm.parameters():
        param.requires_grad = True
    return model
