# expect: wrong
# mistake: writes GPT-2 small's last block number out, model.trf_blocks[11], which does not exist in a model with fewer blocks.
# keywords: trf_blocks[-1], don't write the block number
def add_classification_head(model, num_classes, emb_dim):
    for param in model.parameters():
        param.requires_grad = False
    model.out_head = nn.Linear(emb_dim, num_classes)
    for param in model.trf_blocks[11].parameters():
        param.requires_grad = True
    for param in model.final_norm.parameters():
        param.requires_grad = True
    return model
