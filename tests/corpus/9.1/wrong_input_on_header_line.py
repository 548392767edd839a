# expect: wrong
# mistake: puts the input on the header's line ("### Input: " followed by the input) instead of on the next line.
# keywords: header line, own
def format_input(entry):
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              f"request.\n\n### Instruction:\n{entry['instruction']}")
    if entry["input"]:
        prompt += f"\n\n### Input: {entry['input']}"
    return prompt
