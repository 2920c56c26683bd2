"""strobe in GDB: the `strobe` command over strobe's engine. Loaded by strobe.py."""
import gdb

from . import _strobe
from .command import StrobeCommand
from .target import GdbTarget, StopFunction

_target = None


def load():
    """Registers `strobe` and $_strobe_stop and connects GDB's stop events; once per GDB."""
    global _target
    if _target is not None:
        return
    _use_all_stop_target()
    _target = GdbTarget()
    session = _strobe.Session(_target)
    StopFunction(_target)
    StrobeCommand(_target, session, _strobe.subcommands())
    gdb.events.new_thread.connect(_target.on_new_thread)
    gdb.events.stop.connect(_target.on_stop_event)
    gdb.events.exited.connect(_target.on_exited)
    gdb.events.clear_objfiles.connect(_target.on_program_replaced)
    # Where a step must go through GDB depends on every breakpoint location; what the module
    # knows of the process's modules, on the modules.
    for event in ("breakpoint_created", "breakpoint_modified", "breakpoint_deleted"):
        getattr(gdb.events, event).connect(_target.invalidate_step_guard)
    for event in ("new_objfile", "clear_objfiles", "free_objfile", "exited"):
        if hasattr(gdb.events, event):  # free_objfile: GDB 13 and later
            getattr(gdb.events, event).connect(lambda _event: _forget(session))


def _forget(session):
    _target.invalidate_step_guard()
    session.forget_process()


def _use_all_stop_target():
    """A sample reads every thread inside the catchpoint's condition, before GDB has stopped the
    other threads for a stop it reports. GDB 13 drives native processes in non-stop mode under the
    hood (the user still sees all-stop), where those threads would still be running; asking for an
    all-stop target makes the kernel-level stop of one thread stop them all. This can only change
    while no process runs, and is left alone when the user chose it."""
    setting = gdb.execute("maint show target-non-stop", to_string=True)
    if gdb.selected_inferior().pid == 0 and " auto " in setting:
        gdb.execute("maint set target-non-stop off")
