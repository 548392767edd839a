# expect: wrong
# mistake: reads the keys as "Instruction" and "Input", capitalised like the headers (KeyError).
# keywords: lowercase
def format_input(entry):
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              f"request.\n\n### Instruction:\n{entry['Instruction']}")
    if entry["Input"]:
        prompt += f"\n\n### Input:\n{entry['Input']}"
    return prompt
