# expect: wrong
# mistake: ends the prompt with a newline.
# keywords: extra or missing whitespace
def format_input(entry):
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              f"request.\n\n### Instruction:\n{entry['instruction']}\n")
    if entry["input"]:
        prompt += f"\n### Input:\n{entry['input']}\n"
    return prompt
