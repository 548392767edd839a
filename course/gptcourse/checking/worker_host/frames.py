"""The bytes on the host's pipes.

The grader and the host exchange frames on the host's stdin and stdout: an 8-byte big-endian
length, then that many bytes of JSON. A child writes its one message to a pipe of its own, read
as it comes (read_available) so that a child that writes more than a pipe holds is not stuck.
"""
import os
import struct

_HEADER = struct.Struct(">Q")


class ChannelClosed(Exception):
    """The other end closed the channel (or sent a frame larger than allowed)."""


def write_frame(fd, payload: bytes):
    data = _HEADER.pack(len(payload)) + payload
    while data:
        written = os.write(fd, data)
        data = data[written:]


def read_exactly(fd, size):
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise ChannelClosed("end of stream")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(fd, max_bytes):
    (size,) = _HEADER.unpack(read_exactly(fd, _HEADER.size))
    if size > max_bytes:
        raise ChannelClosed(f"a frame of {size} bytes is larger than the limit of {max_bytes}")
    return read_exactly(fd, size)


def read_available(reader, received, room):
    """Append to `received` what the (non-blocking) pipe holds now, at most `room` bytes more;
    return how many bytes."""
    got = 0
    while got < room:
        try:
            chunk = os.read(reader, min(1 << 20, room - got))
        except BlockingIOError:
            break
        if not chunk:
            break
        received.append(chunk)
        got += len(chunk)
    return got
