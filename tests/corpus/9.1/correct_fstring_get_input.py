# expect: correct
# mistake: none (f-strings, the input read with entry.get("input"), a missing key counting as no input)
def format_input(entry):
    preamble = ("Below is an instruction that describes a task. Write a response that appropriately "
                "completes the request.")
    text = f"{preamble}\n\n### Instruction:\n{entry['instruction']}"
    user_input = entry.get("input")
    if user_input:
        text += f"\n\n### Input:\n{user_input}"
    return text
