# expect: wrong
# mistake: always adds the "### Input:" section, an empty one when entry["input"] is "".
# keywords: add it only when
def format_input(entry):
    return (
        "Below is an instruction that describes a task. Write a response that appropriately completes the request."
        f"\n\n### Instruction:\n{entry['instruction']}"
        f"\n\n### Input:\n{entry['input']}"
    )
