"""One class-challenge entry, trained in a process of its own (`python -m gptcourse.checking.challenge_runner`).

The grader (grader/outputs/leaderboard.py) starts this in its sandbox and talks to it over two
pipes (file descriptors in GPTCOURSE_CHALLENGE_FDS: read, write), never over stdout, which the
entry's prints may fill. Every message is a 4-byte length and a JSON object; a message that
carries tensors says how many bytes of torch.save data follow it.

    grader -> runner   {"kind": "start", "reference": code, "entry": code, "forbidden": [path parts]}
    runner -> grader   {"kind": "entry", "entry": the challenge_entry dict}  or  {"kind": "raised", ...}
    grader -> runner   {"kind": "go", "batches": N, "checkpoints": [batch numbers], "bytes": n} + the
                       validation batch (the first training batch: no validation text reaches the entry)
                       or {"kind": "stop"}
    runner -> grader   {"kind": "batch", "index": i}   ...  grader: {"kind": "batch", "bytes": n} + data
                                                             or {"kind": "refused"} past the budget
    runner -> grader   {"kind": "checkpoint", "index": i, "bytes": n} + weights, at each checkpoint
    runner -> grader   {"kind": "weights", "bytes": n} + the trained model's state_dict

The grader counts the batches it sends, scores the weights in its own process, and never reads
anything from here but JSON and torch.load(weights_only=True) data. The runner reports an
attempt to open a data file before the entry can catch the refusal (an audit hook, which
Python does not let code remove).
"""
import io
import json
import os
import struct
import sys
import traceback

import torch

from gptcourse import challenge

HEADER = struct.Struct(">I")


class Channel:
    def __init__(self, read_fd, write_fd):
        self._read = os.fdopen(read_fd, "rb", buffering=0)
        self._write = os.fdopen(write_fd, "wb", buffering=0)

    def send(self, message, payload=b""):
        self._write.write(framed(message, payload))

    def receive(self):
        message = json.loads(read_exactly(self._read, HEADER.unpack(read_exactly(self._read, HEADER.size))[0]))
        payload = read_exactly(self._read, message["bytes"]) if message.get("bytes") else b""
        return message, payload


def framed(message, payload=b""):
    """A message as it travels: its JSON's length, the JSON (with the payload's size), the payload."""
    if payload:
        message = dict(message, bytes=len(payload))
    data = json.dumps(message).encode()
    return HEADER.pack(len(data)) + data + payload


def read_exactly(stream, count):
    """`count` bytes of an unbuffered stream; EOFError when it ends first."""
    chunks, left = [], count
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise EOFError("the other end closed the channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def tensors_bytes(value):
    buffer = io.BytesIO()
    torch.save(value, buffer)
    return buffer.getvalue()


def tensors_from(payload):
    return torch.load(io.BytesIO(payload), weights_only=True)


# Events of a process being started: a program could read what the entry may not.
PROCESS_EVENTS = ("subprocess.Popen", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty")


def refuse_data_files(channel, forbidden):
    """Refuse to open any path that contains one of `forbidden` (the data set's name, the data
    mirror and cache folders), as named or where its links lead, and to start any program;
    telling the grader first, so that catching the refusal changes nothing."""
    def refuse(what):
        channel.send({"kind": "read_data", "what": what[-300:]})
        raise PermissionError(f"a challenge entry may not {what}: the grader hands the training batches out")

    def hook(event, arguments):
        if event == "open" and arguments and isinstance(arguments[0], (str, bytes, os.PathLike)):
            path = os.fsdecode(arguments[0])
            if any(part and (part in path or part in os.path.realpath(path)) for part in forbidden):
                refuse(f"open {path!r}")
        elif event in PROCESS_EVENTS:
            refuse(f"start a program ({event})")
    sys.addaudithook(hook)


def cap_memory(limit_mb):
    """At most `limit_mb` more of heap and anonymous memory than this process holds now, for good
    (the hard limit too): a MemoryError for the entry, not a machine out of memory."""
    import resource

    from gptcourse.checking.worker_host.memory_limit import limit_memory

    limit_memory(limit_mb)
    soft, _ = resource.getrlimit(resource.RLIMIT_DATA)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, soft))


def main():
    read_fd, write_fd = (int(fd) for fd in os.environ["GPTCOURSE_CHALLENGE_FDS"].split(","))
    channel = Channel(read_fd, write_fd)
    start, _ = channel.receive()
    torch.set_num_threads(1)
    namespace = {"__name__": "__challenge__"}
    try:
        exec(compile(start["reference"], "<the course's code>", "exec"), namespace)
        cap_memory(challenge.MEMORY_MB)
        refuse_data_files(channel, start["forbidden"])
        exec(compile(start["entry"], "<your challenge cell>", "exec"), namespace)
        entry = json.loads(json.dumps(namespace.get("challenge_entry")))  # plain data from here on
        channel.send({"kind": "entry", "entry": entry})
    except BaseException as exc:  # noqa: BLE001 - whatever the cell raised is the entry's result
        channel.send({"kind": "raised", "message": _last_line(exc)})
        return
    go, validation = channel.receive()
    if go["kind"] != "go":
        return
    # The challenge's runs print no samples (there is no tokenizer in here).
    namespace["generate_and_print_sample"] = lambda *args, **kwargs: None
    checkpoints = set(go["checkpoints"])
    trained = {}

    def fetch(index):
        if index in checkpoints and "model" in trained:
            channel.send({"kind": "checkpoint", "index": index}, tensors_bytes(trained["model"].state_dict()))
        channel.send({"kind": "batch", "index": index})
        reply, payload = channel.receive()
        if reply["kind"] != "batch":
            raise RuntimeError(f"batch {index} is past the budget of {go['batches']} batches")
        return tuple(tensors_from(payload))

    loader = challenge.BudgetLoader(go["batches"], fetch)
    try:
        model = challenge.train_entry(entry, namespace, loader, challenge.ListLoader([tuple(tensors_from(validation))]),
                                      on_model=lambda made: trained.update(model=made))
        channel.send({"kind": "weights"}, tensors_bytes(model.state_dict()))
    except BaseException as exc:  # noqa: BLE001
        channel.send({"kind": "raised", "message": _last_line(exc)})


def _last_line(exc):
    """The exception's type, message and the line of the entry's cell it came from."""
    where = [frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == "<your challenge cell>"]
    line = f" (line {where[-1].lineno} of your challenge cell)" if where else ""
    return f"{type(exc).__name__}: {str(exc)[:300]}{line}"


if __name__ == "__main__":
    try:
        main()
    except EOFError:
        pass
