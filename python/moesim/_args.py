"""Keyword arguments in their natural Python types, checked before any work (docs/python.md, "Argument types").

Each function takes an argument's name and value and returns what the C++ side takes (the CLI's spelling of
the option, or a number that fits the C++ field), or raises TypeError (a wrong type) or ValueError (a value
the type allows but the argument cannot hold: NaN, a negative count, a number too large for its field, a NUL
in a text) naming the argument. What the CLI's own checks refuse (an unknown policy, a budget larger than the
model) stays theirs: moesim.UsageError with the CLI's message.
"""

import json
import math
import numbers
import os

U32 = 2**32 - 1
U64 = 2**64 - 1


def _kind(v):
    return type(v).__name__


def _no_nul(name, s):
    if "\x00" in s:
        raise ValueError(f"{name}: {s!r} holds a NUL character (a text or path cannot)")
    return s


def _is_bool(v):
    # numpy's bool_ is no bool subclass, and bool is an int subclass: neither may pass as the other.
    return isinstance(v, bool) or _kind(v) == "bool_"


def text(name, v):
    """A str (a name, a policy spec, a CLI value)."""
    if not isinstance(v, str):
        one = " (this option takes one value)" if isinstance(v, (list, tuple)) else ""
        raise TypeError(f"{name}: expected a str{one}, got {_kind(v)} {v!r}")
    return _no_nul(name, v)


def path(name, v):
    """A file or folder (or a preset's name): a str or an os.PathLike, as open() takes it."""
    if isinstance(v, (str, bytes, os.PathLike)):
        return _no_nul(name, os.fsdecode(os.fspath(v)))
    raise TypeError(f"{name}: expected a path (a str or an os.PathLike such as pathlib.Path), got {_kind(v)} {v!r}")


def flag(name, v):
    if not _is_bool(v):
        raise TypeError(f"{name}: expected True or False, got {_kind(v)} {v!r}")
    return bool(v)


def integer(name, v, lo=0, hi=U32):
    """A whole number in [lo, hi] (an int or a numpy integer; not a bool, not a float)."""
    if _is_bool(v) or not isinstance(v, numbers.Integral):
        raise TypeError(f"{name}: expected an int, got {_kind(v)} {v!r}")
    v = int(v)
    if not lo <= v <= hi:
        raise ValueError(f"{name}: {v} is out of range (a whole number from {lo} to {hi})")
    return v


def real(name, v):
    """A finite number (an int or a float); the C++ side checks its range with the CLI's message."""
    if _is_bool(v) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name}: expected a number (an int or a float), got {_kind(v)} {v!r}")
    f = float(v)
    if not math.isfinite(f):
        raise ValueError(f"{name}: {v!r} is not a finite number")
    return f


def _whole(name, v, what, lo, hi, hint, example):
    """An int, or a float holding a whole number, in [lo, hi], as the CLI's decimal text."""
    if _is_bool(v) or not isinstance(v, numbers.Real):
        raise TypeError(f"{name}: expected {what} (an int) or the CLI's text such as {example!r}, got {_kind(v)} {v!r}")
    if not isinstance(v, numbers.Integral):
        f = float(v)
        if not math.isfinite(f) or f != math.floor(f):
            raise ValueError(f"{name}: {v!r} is not {what} (a whole number from {lo} to {hi}; {hint})")
        v = int(f)
    v = int(v)
    if not lo <= v <= hi:
        raise ValueError(f"{name}: {v} is out of range: {what} is a whole number from {lo} to {hi} ({hint})")
    return str(v)


def budget(name, v):
    """A cache budget: the CLI's text ("8", "8GiB") or a number of experts per layer (8, 8.0)."""
    if isinstance(v, str):
        return text(name, v)
    return _whole(name, v, "a count of experts per layer", 1, U64, "a size in bytes is a str with a unit, '8GiB'",
                  "8GiB")


def size(name, v, lo=1):
    """A size in bytes: the CLI's text ("8GiB") or a number of bytes, at least lo."""
    if isinstance(v, str):
        return text(name, v)
    return _whole(name, v, "a size in bytes", lo, U64, "or a str with a unit, '16GiB'", "16GiB") + "B"


def seconds(name, v):
    """A time: the CLI's text ("30m", "1.5s") or a number of seconds."""
    if isinstance(v, str):
        return text(name, v)
    f = real(name, v)
    if f <= 0:
        raise ValueError(f"{name}: {v!r} is out of range (a time in seconds greater than 0, or a str such as '30m')")
    return str(int(v)) if isinstance(v, numbers.Integral) else repr(f)


def strings(name, v, item=text):
    """A multi-valued option: None, one value or a list (a tuple) of values, each converted by `item`."""
    if v is None:
        return []
    if isinstance(v, (list, tuple)):
        return [item(f"{name}[{i}]", x) for i, x in enumerate(v)]
    try:
        return [item(name, v)]
    except TypeError:
        raise TypeError(f"{name}: expected a str or a list of them, got {_kind(v)} {v!r}") from None


def joined(name, v):
    """A list option that the C++ side takes as one comma-separated text ("global,layer")."""
    return ",".join(strings(name, v))


def spec_json(name, spec):
    """A spec given as a dict, as JSON text. Every value must be JSON: a NaN or an infinity, a key that is no
    str or an object JSON cannot hold is refused naming its path in the spec ("grid.ratio[1]"); paths
    (os.PathLike) become their text."""

    def walk(v, where):
        at = f"{name}: {where or 'the spec'}"
        if isinstance(v, dict):
            out = {}
            for k, x in v.items():
                if not isinstance(k, str):
                    raise TypeError(f"{at}: key {k!r} is a {_kind(k)}; JSON object keys are str")
                out[k] = walk(x, f"{where}.{k}" if where else k)
            return out
        if isinstance(v, (list, tuple)):
            return [walk(x, f"{where}[{i}]") for i, x in enumerate(v)]
        if v is None or _is_bool(v):
            return None if v is None else bool(v)
        if isinstance(v, str):
            return _no_nul(at, v)
        if isinstance(v, numbers.Integral):
            return int(v)
        if isinstance(v, numbers.Real):
            if not math.isfinite(float(v)):
                raise ValueError(f"{at}: {v!r} is not a finite number (JSON has no NaN or infinity)")
            return float(v)
        if isinstance(v, os.PathLike):
            return path(at, v)
        raise TypeError(f"{at}: a {_kind(v)} is not a JSON value (dict, list, str, number, bool or None)")

    if not isinstance(spec, dict):
        raise TypeError(f"{name}: expected a dict, got {_kind(spec)}")
    return json.dumps(walk(spec, ""), allow_nan=False)
