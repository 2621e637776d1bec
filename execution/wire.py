"""Messages between the test harness and the sample's process: plain data only.

Used only inside the sandbox's child (imported by `guard.py`); the standard library only.
A message is a 4-byte length and a JSON document. Values cross as data, never as objects:
`encode_value` accepts only exact built-in types (None, bool, int, float, complex, str, bytes,
list, tuple, dict, set, frozenset), and `decode` builds nothing else, so whatever the
sample's process sends, the harness only ever holds plain data. An answer that is an object
whose `__eq__` always says yes cannot cross; it arrives as an error.
"""

import json
import os
import struct

MAX_MESSAGE_BYTES = 16 << 20
_LENGTH = struct.Struct(">I")
_TAGGED = {"tuple": tuple, "set": set, "frozenset": frozenset}


class WireError(Exception):
    """A message that is not one the harness accepts (too long, cut short, not plain data)."""


def encode_value(value, depth=0):
    """A JSON-ready tree for `value`; WireError for anything but plain built-in data."""
    if depth > 100:
        raise WireError("a value nested more than 100 deep")
    kind = type(value)
    if value is None or kind in (bool, int, float, str):
        return value
    if kind is list:
        return [encode_value(item, depth + 1) for item in value]
    if kind in (tuple, set, frozenset):
        return {"t": kind.__name__, "v": [encode_value(item, depth + 1) for item in value]}
    if kind is dict:
        pairs = [[encode_value(k, depth + 1), encode_value(v, depth + 1)] for k, v in value.items()]
        return {"t": "dict", "v": pairs}
    if kind is bytes:
        return {"t": "bytes", "v": value.hex()}
    if kind is complex:
        return {"t": "complex", "v": [value.real, value.imag]}
    raise WireError(f"a value of type {kind.__name__} is not plain data")


def _decode_object(tagged):
    shape = str if tagged.get("t") == "bytes" else list
    if set(tagged) != {"t", "v"} or type(tagged["v"]) is not shape:
        raise WireError("an object that is not a tagged value")
    tag, items = tagged["t"], tagged["v"]
    if tag in _TAGGED:
        return _TAGGED[tag](items)
    if tag == "dict":
        return {key: value for key, value in items}
    if tag == "bytes":
        return bytes.fromhex(items)
    if tag == "complex" and len(items) == 2:
        return complex(*items)
    raise WireError(f"an unknown tag {tag!r}")


def decode(text):
    """The plain data a JSON text encodes (WireError when it is anything else)."""
    try:
        return json.loads(text, object_hook=_decode_object)
    except WireError:
        raise
    except (ValueError, TypeError, RecursionError, MemoryError) as error:
        raise WireError(f"not plain data: {type(error).__name__}") from None


def send(fd, kind, *fields):
    """Write one message `[kind, *fields]` to `fd` (values already `encode_value`d)."""
    data = json.dumps([kind, *fields]).encode("utf-8", "surrogatepass")
    if len(data) > MAX_MESSAGE_BYTES:
        raise WireError(f"a message of {len(data)} bytes (at most {MAX_MESSAGE_BYTES})")
    view = memoryview(_LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view) :]


def frame(value) -> bytes:
    """`value` as JSON in a length-prefixed frame: the setup and the job the tool sends."""
    data = json.dumps(value).encode("utf-8", "surrogatepass")
    return _LENGTH.pack(len(data)) + data


def read_frame(fd) -> bytes:
    """One length-prefixed frame from `fd`, read with os.read so that nothing past it (the
    job, which only the harness reads) is buffered in this process."""
    (size,) = _LENGTH.unpack(read_exactly(fd, _LENGTH.size))
    return read_exactly(fd, size)


def read_exactly(fd, size):
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the channel")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def receive(fd):
    """Read one message: a list `[kind, *fields]` of plain data, kind a string. EOFError when
    the other side is gone, WireError when the bytes are not such a message."""
    (size,) = _LENGTH.unpack(read_exactly(fd, _LENGTH.size))
    if size > MAX_MESSAGE_BYTES:
        raise WireError(f"a message of {size} bytes (at most {MAX_MESSAGE_BYTES})")
    message = decode(read_exactly(fd, size).decode("utf-8", "replace"))
    if type(message) is not list or not message or type(message[0]) is not str:
        raise WireError("a message that is not [kind, ...]")
    return message
