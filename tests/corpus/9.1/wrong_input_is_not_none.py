# expect: wrong
# mistake: tests entry["input"] is not None, which is true for the empty string too, so an empty input gets a section.
# keywords: add it only when
def format_input(entry):
    text = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
            "request.\n\n### Instruction:\n" + entry["instruction"])
    if entry["input"] is not None:
        text += "\n\n### Input:\n" + entry["input"]
    return text
