# expect: correct
# mistake: none (collects the pieces, newlines included, in a list and joins them with "")
def format_input(entry):
    pieces = ["Below is an instruction that describes a task.", " ",
              "Write a response that appropriately completes the request.",
              "\n\n", "### Instruction:", "\n", entry["instruction"]]
    if entry["input"]:
        pieces += ["\n\n", "### Input:", "\n", entry["input"]]
    return "".join(pieces)
