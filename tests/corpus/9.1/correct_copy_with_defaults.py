# expect: correct
# mistake: none (works on a copy of the entry, {**entry}, so assigning a default into it leaves the caller's entry alone)
def format_input(entry):
    entry = {"input": "", **entry}
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              "request.\n\n### Instruction:\n" + entry["instruction"])
    return prompt + ("\n\n### Input:\n" + entry["input"] if entry["input"] else "")
