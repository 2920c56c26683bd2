"""Loads strobe into GDB: `source /path/to/strobe.py` (or that line in ~/.gdbinit).

The strobe_gdb package and its _strobe module sit beside this file, in the build tree and where
`cmake --install` puts them alike."""


def _load():
    import os
    import sys

    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import strobe_gdb

    strobe_gdb.load()


_load()
del _load
