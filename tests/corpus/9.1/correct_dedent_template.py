# expect: correct
# mistake: none (textwrap.dedent templates written as triple-quoted strings with a backslash after the opening quotes, filled with str.format, which does not read braces in the values)
import textwrap

PROMPT_TEMPLATE = textwrap.dedent("""\
    Below is an instruction that describes a task. Write a response that appropriately completes the request.

    ### Instruction:
    {instruction}""")

INPUT_TEMPLATE = textwrap.dedent("""

    ### Input:
    {input}""")


def format_input(entry):
    prompt = PROMPT_TEMPLATE.format(instruction=entry["instruction"])
    if entry["input"]:
        prompt += INPUT_TEMPLATE.format(input=entry["input"])
    return prompt
