# expect: wrong
# mistake: a textwrap.dedent template opened with """ and a line break but no backslash, so the prompt starts with "\n".
# keywords: extra or missing whitespace
import textwrap


def format_input(entry):
    prompt = textwrap.dedent("""
        Below is an instruction that describes a task. Write a response that appropriately completes the request.

        ### Instruction:
        {instruction}""").format(instruction=entry["instruction"])
    if entry["input"]:
        prompt += "\n\n### Input:\n" + entry["input"]
    return prompt
