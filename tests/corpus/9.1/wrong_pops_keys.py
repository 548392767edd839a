# expect: wrong
# mistake: reads the fields with entry.pop(...), which removes them from the caller's entry.
# keywords: was changed
def format_input(entry):
    instruction = entry.pop("instruction")
    user_input = entry.pop("input", "")
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              f"request.\n\n### Instruction:\n{instruction}")
    if user_input:
        prompt += f"\n\n### Input:\n{user_input}"
    return prompt
