# expect: wrong
# mistake: the first line lacks its final period ("... completes the request").
# keywords: starts with the sentence, exactly
def format_input(entry):
    prompt = ("Below is an instruction that describes a task. Write a response that appropriately completes the "
              "request")
    prompt += f"\n\n### Instruction:\n{entry['instruction']}"
    if entry["input"]:
        prompt += f"\n\n### Input:\n{entry['input']}"
    return prompt
