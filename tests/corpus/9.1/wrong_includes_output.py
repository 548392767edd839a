# expect: wrong
# mistake: formats the whole training example: adds the response section with entry["output"] at the end.
# keywords: '### response:' header, contains the response
def format_input(entry):
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              "request.")
    prompt += "\n\n### Instruction:\n" + entry["instruction"]
    if entry["input"]:
        prompt += "\n\n### Input:\n" + entry["input"]
    prompt += "\n\n### Response:\n" + entry["output"]
    return prompt
