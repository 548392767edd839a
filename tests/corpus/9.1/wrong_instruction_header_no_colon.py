# expect: wrong
# mistake: writes the header as "### Instruction" without its colon.
# keywords: header line
def format_input(entry):
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              "request.\n\n### Instruction\n" + entry["instruction"])
    if entry["input"]:
        prompt += "\n\n### Input:\n" + entry["input"]
    return prompt
