# expect: correct
# mistake: none (plain string concatenation with +, the input section added by an if statement)
def format_input(entry):
    prompt = "Below is an instruction that describes a task. Write a response that appropriately completes the request."
    prompt = prompt + "\n\n### Instruction:\n" + entry["instruction"]
    if entry["input"]:
        prompt = prompt + "\n\n### Input:\n" + entry["input"]
    return prompt
