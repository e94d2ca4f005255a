"""Let the packer tests run where the plugin is not built.

The packer and the .pte reader need neither the plugin nor a GPU, but
importing the package activates the plugin. When that activation fails
(a source tree with no build), the package is replaced by a bare one over
the same folder so its pure-Python modules still import; tests that need the
plugin check for it themselves and skip.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types

PACKAGE = "torch_tensorrt_executorch_runtime"


def _import_without_activation() -> None:
    try:
        importlib.import_module(PACKAGE)
        return
    except ImportError as error:
        activation_error = error
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise activation_error
    bare = types.ModuleType(PACKAGE)
    bare.__path__ = list(spec.submodule_search_locations)
    bare.__file__ = spec.origin
    bare.PLUGIN_UNAVAILABLE = str(activation_error)
    sys.modules[PACKAGE] = bare


_import_without_activation()
