"""ExecuTorch programs through the plugin's C API: `load()`, `Program`, and
what a program says about its methods (`ValueInfo`, `MethodInfo`,
`DelegateInfo`).

`program` holds `Program` and `load`; `metadata` the method and delegate
descriptions; `tensors` the user libraries' side of DLPack (inputs, streams,
results); `data_files` the search for the .ptd files a program needs.
"""

from __future__ import annotations

from .metadata import DelegateInfo, MethodInfo, ValueInfo
from .program import Program, load

__all__ = ["DelegateInfo", "MethodInfo", "Program", "ValueInfo", "load"]
