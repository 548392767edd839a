# expect: wrong
# mistake: splits the first line over two string literals and forgets the space between the sentences ("task.Write").
# keywords: one space between them
def format_input(entry):
    instruction_text = (
        "Below is an instruction that describes a task."
        "Write a response that appropriately completes the request."
        f"\n\n### Instruction:\n{entry['instruction']}"
    )
    input_text = f"\n\n### Input:\n{entry['input']}" if entry["input"] else ""
    return instruction_text + input_text
