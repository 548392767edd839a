# expect: wrong
# mistake: cleans the fields with strip() before using them (the test for the section is on the unstripped input).
# keywords: don't strip()
def format_input(entry):
    instruction = entry["instruction"].strip()
    user_input = entry["input"]
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              f"request.\n\n### Instruction:\n{instruction}")
    if user_input:
        prompt += f"\n\n### Input:\n{user_input.strip()}"
    return prompt
