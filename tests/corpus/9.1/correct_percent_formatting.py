# expect: correct
# mistake: none (old-style % formatting, the two cases as two return statements)
def format_input(entry):
    head = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
            "request.\n\n### Instruction:\n%s")
    if not entry["input"]:
        return head % entry["instruction"]
    return (head + "\n\n### Input:\n%s") % (entry["instruction"], entry["input"])
