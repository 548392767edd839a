# expect: wrong
# mistake: puts the instruction into the template text and calls .format(input=...) on the whole, so braces in the instruction are read as fields (KeyError, or a changed text).
# keywords: brace
def format_input(entry):
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              "request.\n\n### Instruction:\n" + entry["instruction"])
    if entry["input"]:
        prompt += "\n\n### Input:\n{input}"
    return prompt.format(input=entry["input"])
