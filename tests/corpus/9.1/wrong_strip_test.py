# expect: wrong
# mistake: tests entry["input"].strip(), so an input of only whitespace gets no section (the text itself is used unchanged).
# keywords: without strip()
def format_input(entry):
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              f"request.\n\n### Instruction:\n{entry['instruction']}")
    if entry["input"].strip():
        prompt += f"\n\n### Input:\n{entry['input']}"
    return prompt
