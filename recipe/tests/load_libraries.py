"""Load installed libraries with every symbol bound now (RTLD_NOW), through
their own rpaths only, so a dependency missing from the environment fails
here. Usage: python load_libraries.py LIB... (paths relative to $PREFIX)."""

import ctypes
import os
import sys

prefix = os.environ["PREFIX"]
os.environ.pop("LD_LIBRARY_PATH", None)
for relative in sys.argv[1:]:
    path = os.path.join(prefix, relative)
    library = ctypes.CDLL(path, mode=os.RTLD_NOW)
    line = f"loaded {relative}"
    if hasattr(library, "tte_c_api_version"):
        library.tte_c_api_version.restype = ctypes.c_uint32
        line += f" (C API version {library.tte_c_api_version()})"
    print(line)
