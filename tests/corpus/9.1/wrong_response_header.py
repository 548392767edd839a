# expect: wrong
# mistake: ends the prompt with the "\n\n### Response:\n" header, as the book's later prompts do (the caller adds it).
# keywords: '### response:' header
def format_input(entry):
    instruction_text = (
        "Below is an instruction that describes a task. "
        "Write a response that appropriately completes the request."
        f"\n\n### Instruction:\n{entry['instruction']}"
    )
    input_text = f"\n\n### Input:\n{entry['input']}" if entry["input"] else ""
    return instruction_text + input_text + "\n\n### Response:\n"
