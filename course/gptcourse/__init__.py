"""gptcourse: the student package of the GPT-from-scratch course.

    from gptcourse import check, get_device, get_encoding, fetch, read_text
"""
from .data import fetch, read_text
from .device import get_device
from .selfcheck import SelfCheckFailed, check
from .tokenizer import get_encoding

__all__ = ["check", "SelfCheckFailed", "fetch", "read_text", "get_device", "get_encoding"]
__version__ = "0.1.0"
