# expect: wrong
# mistake: separates the sections with one newline, no blank line before the headers.
# keywords: separated by a blank line
def format_input(entry):
    lines = [
        "Below is an instruction that describes a task. Write a response that appropriately completes the request.",
        "### Instruction:",
        entry["instruction"],
    ]
    if entry["input"]:
        lines += ["### Input:", entry["input"]]
    return "\n".join(lines)
