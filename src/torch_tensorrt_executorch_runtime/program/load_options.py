"""The load options of `load(options=...)`, from the plugin's own table.

The plugin parses TensorRTBackend's options with one table (name, the value
types taken, what a value must be, the default, one line of documentation);
`load_options()` reads it through the C API, so what Python, the CLI's
`--option` and its help say is what the plugin does. `parse_option_text`
turns the text of `--option KEY=VALUE` into the value the table's types take.
"""

from __future__ import annotations

import dataclasses
import functools

from .. import _activation, _native
from .._native import abi

# The value types of ExecuTorch's options (TteOptionType bits in accepted_types).
_PYTHON_TYPES = ((abi.TTE_OPTION_BOOL, bool), (abi.TTE_OPTION_INT, int), (abi.TTE_OPTION_STRING, str))


@dataclasses.dataclass(frozen=True)
class LoadOption:
    """One load option of TensorRTBackend (`load(options={name: value})`)."""

    name: str
    # The Python types a value may have (bool, int, str), in that order.
    accepts: tuple[type, ...]
    # For tables and help: "bool", "int", "str", "int or decimal str".
    type: str
    # What a value must be, as the plugin's refusal says it.
    must_be: str
    # What applies when the option is not given.
    default: str
    doc: str
    # True for the Program API's own option (max_concurrent_runs), which the
    # stock ExecuTorch runtime's TensorRTBackend ignores.
    program_only: bool


@functools.cache
def load_options() -> tuple[LoadOption, ...]:
    """Every load option the plugin reads, in its table's order (loads the plugin)."""
    _activation.require()
    options = []
    for row in _native.load_option_rows():
        options.append(
            LoadOption(
                name=row["name"],
                accepts=tuple(python for bit, python in _PYTHON_TYPES if row["accepted_types"] & (1 << bit)),
                type=row["type"],
                must_be=row["must_be"],
                default=row["fallback"],
                doc=row["doc"],
                program_only=row["program_only"],
            )
        )
    return tuple(options)


def parse_option_text(text: str) -> tuple[str, bool | int | str]:
    """(name, value) of `KEY=VALUE` for a TensorRTBackend load option: `true`/`false` for an option
    taking bools, a decimal integer for one taking ints, else the text for one taking strings.
    ValueError says what is wrong, naming the option and what it must be."""
    name, equals, value = text.partition("=")
    name = name.strip()
    if not equals or not name:
        raise ValueError(f"expected KEY=VALUE, got '{text}'")
    options = {option.name: option for option in load_options()}
    option = options.get(name)
    if option is None:
        raise ValueError(f"unknown load option '{name}' (known: {', '.join(options)})")
    if bool in option.accepts and value.lower() in ("true", "false"):
        return name, value.lower() == "true"
    if int in option.accepts:
        try:
            return name, int(value, 10)
        except ValueError:
            pass
    if str in option.accepts:
        return name, value
    raise ValueError(f"load option '{name}' must be {option.must_be}, got '{value}'")
