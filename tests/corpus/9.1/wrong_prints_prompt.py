# expect: wrong
# mistake: prints the prompt instead of returning it (the function returns None).
# keywords: return the string
def format_input(entry):
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              f"request.\n\n### Instruction:\n{entry['instruction']}")
    if entry["input"]:
        prompt += f"\n\n### Input:\n{entry['input']}"
    print(prompt)
