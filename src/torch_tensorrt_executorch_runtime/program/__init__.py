"""ExecuTorch programs through the plugin's C API: `load()`, `Program`, and
what a program says about its methods (`ValueInfo`, `MethodInfo`,
`DelegateInfo`).

`program` holds `Program` and `load`; `metadata` the method and delegate
descriptions; `tensors` the user libraries' side of DLPack (inputs, streams,
results); `data_files` the search for the .ptd files a program needs;
`load_options` the plugin's table of load options.
"""

from __future__ import annotations

from .load_options import LoadOption, load_options
from .metadata import DelegateInfo, MethodInfo, ValueInfo
from .program import Program, load

__all__ = ["DelegateInfo", "LoadOption", "MethodInfo", "Program", "ValueInfo", "load", "load_options"]
