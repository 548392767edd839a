# expect: wrong
# mistake: caches the prompt in the entry (entry["prompt"] = ...) before returning it, which changes the data set's entry.
# keywords: was changed
def format_input(entry):
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              f"request.\n\n### Instruction:\n{entry['instruction']}")
    if entry["input"]:
        prompt += f"\n\n### Input:\n{entry['input']}"
    entry["prompt"] = prompt
    return prompt
