"""GdbTarget: the engine's Target port (engine/target/Target.h) over GDB's Python API.

Sample stops use GDB's cheapest stop: the sample signal is set to `nostop noprint nopass` and a
`catch signal` catchpoint has the condition $_strobe_stop(). GDB evaluates that condition inside its
own handling of the signal, before it would announce a stop; the function samples every thread
through the engine and returns 0, so GDB discards the signal and resumes without printing,
notifying or refreshing anything. Every other stop while armed arrives through gdb.events and is
reported to the engine, then shown by GDB as usual."""
import contextlib
import os
import re
import signal

import gdb

from . import _strobe
from .modules import read_modules

StopKind, Verdict = _strobe.StopKind, _strobe.Verdict
_STOP_FUNCTION = "_strobe_stop"
_INFO_SYMBOL = re.compile(r"(.+?)(?: \+ (\d+))? in section ")


def gdb_signal_name(signo):
    """GDB's name for a Linux signal: SIGSEGV, or SIG63 for a real-time one."""
    if signo < signal.SIGRTMIN:
        with contextlib.suppress(ValueError):
            return signal.Signals(signo).name
    return f"SIG{signo}"


def signal_number(name):
    """The Linux number of a signal GDB names (strobe samples processes on this host)."""
    m = re.fullmatch(r"SIG(\d+)", name)
    return int(m.group(1)) if m else int(signal.Signals.__members__.get(name, 0))


class GdbTarget:
    """The Target port. strobe_gdb.load() connects its on_* methods to GDB."""

    def __init__(self):
        self._arming = None  # the _Arming in force
        self._known = set()  # gdb.InferiorThread: those alive at arm() and those created since
        self._threads = {}  # LWP -> gdb.InferiorThread, from the latest threads()
        self._architecture = None
        self._registers = []  # descriptors of the engine's registers for _architecture
        self._home = None  # (thread, frame) the user had selected before read_thread switched
        self._in_condition = False  # GDB is evaluating the catchpoint's condition
        self._deferred = []  # what GDB forbids inside a breakpoint condition, done after it
        self._own_stop = None  # the sample stop after which $_strobe_stop() asked GDB to stop
        self._last_stop = None  # the latest stop GDB reported
        self._warned_running = False
        # The user's `handle` settings of a signal an arming left silenced, for the next to restore.
        self._user_handling = {}

    # --- inspection ---

    def has_process(self):
        return self.pid() != 0

    def isa(self):
        return gdb.selected_inferior().architecture().name()

    def pid(self):
        return gdb.selected_inferior().pid

    def is_host_process(self):
        program = gdb.selected_inferior().progspace.filename
        try:
            exe = os.stat(f"/proc/{self.pid()}/exe")
            # gdbserver's files read through the remote protocol are named target:PATH
            return program is None or os.path.samestat(
                exe, os.stat(program.removeprefix("target:")))
        except OSError:
            return False

    def threads(self):
        # Not Inferior.threads(): that refreshes GDB's thread list through libthread_db, which
        # can attach to a thread the kernel is still creating and hang GDB when it runs inside the
        # catchpoint's condition. GDB reports every thread it adds (on_new_thread), and a thread
        # object turns invalid when its thread is gone.
        inferior = gdb.selected_inferior()
        self._known = {t for t in self._known if t.is_valid()}
        self._threads = {t.ptid[1]: t for t in self._known if t.inferior is inferior}
        return list(self._threads)

    def read_thread(self, tid, depth):
        thread = self._threads.get(tid)
        if thread is None or not thread.is_valid():
            return None
        try:
            selected = gdb.selected_thread()
            if thread is not selected:
                if self._home is None:
                    self._home = (selected, _selected_frame())
                thread.switch()
            frame = gdb.newest_frame()
            regs = [int(frame.read_register(r)) if r else 0 for r in self._descriptors(frame)]
        except gdb.error as error:
            self._warn_unreadable(error)
            return None
        stack = [frame.pc()]
        with contextlib.suppress(gdb.error):  # an unwinding error ends the stack
            while len(stack) < depth:
                # GDB gives inlined code frames of their own at the same pc; the stack holds
                # return addresses, so step out of the physical function.
                while frame.type() == gdb.INLINE_FRAME:
                    frame = frame.older()
                frame = frame.older()
                if frame is None:
                    break
                stack.append(frame.pc())
        return regs, stack

    def modules(self):
        return read_modules(self.read_memory)

    def symbolize(self, pc):
        function, start, size, inlined = _function_at(pc)
        line = gdb.find_pc_line(pc)
        if line.symtab is None:
            return function, start, size, "", 0, inlined
        return function, start, size, line.symtab.fullname(), line.line, inlined

    def read_memory(self, addr, size):
        try:
            return gdb.selected_inferior().read_memory(addr, size).tobytes()
        except gdb.error:
            return b""

    # --- control ---

    def arm(self, on_stop, signo):
        self._known = set(gdb.selected_inferior().threads())
        self._arming = _Arming(self, on_stop, signo)
        return self._arming

    def run_until_user_stop(self):
        self.restore_selection()  # the stop decides what is selected next, as without strobe
        self._last_stop = None
        # GDB shows the stop that ends this as usual; strobe's own final stop is silent.
        try:
            gdb.execute("continue")
        except gdb.error as error:
            gdb.write(f"{error}\n")
            return self._last_stop or (StopKind.Other, 0, 0, 0, str(error))
        return self._last_stop or (StopKind.Other, 0, 0, 0, "")

    def resume_in_background(self):
        self.restore_selection()
        gdb.execute("continue &", to_string=True)

    def is_running(self):
        thread = gdb.selected_thread()
        return thread is not None and thread.is_running()

    def print(self, text):
        gdb.write(text)

    # --- GDB's side ---

    def on_sample_signal(self):
        """$_strobe_stop(): the sample signal stopped a thread. 0 resumes, 1 stops."""
        arming = self._arming
        if arming is None:
            return 0  # a catchpoint whose deletion waits for the end of this condition
        stop = (StopKind.Signal, gdb.selected_thread().ptid[1], arming.signo, 0,
                f"signal {arming.name}")
        self._in_condition = True
        try:
            verdict = self._report(arming, stop)
        finally:
            self._in_condition = False
        if verdict == Verdict.Resume:
            return 0
        self._own_stop = stop
        return 1

    def on_new_thread(self, event):
        self._known.add(event.inferior_thread)

    def on_stop_event(self, event):
        if self._own_stop is not None:
            self._last_stop, self._own_stop = self._own_stop, None
            # The sample signal is now this thread's stop signal: drop it, or the first
            # `continue` after its `pass` setting is restored would deliver it to the program.
            gdb.execute("queue-signal 0", to_string=True)
        else:
            self._stopped(_describe(event))
        self.run_deferred()

    def on_exited(self, event):
        code = getattr(event, "exit_code", None)
        signo = gdb.convenience_variable("_exitsignal")
        if code is not None:
            stop = (StopKind.Exited, 0, 0, code, f"exited with code {code}")
        elif signo is not None:
            stop = (StopKind.Exited, 0, 0, -int(signo),
                    f"terminated by signal {gdb_signal_name(int(signo))}")
        else:  # no exit status: GDB itself let go of the process
            stop = (StopKind.Other, 0, 0, 0, "GDB killed or detached it")
        self._own_stop = None
        self._stopped(stop)
        self.run_deferred()

    @contextlib.contextmanager
    def selection_kept(self):
        """Runs engine code, then gives the user back the thread and frame read_thread left."""
        try:
            yield
        finally:
            self.restore_selection()

    def restore_selection(self):
        home, self._home = self._home, None
        if home is not None and home[0] is not None and home[0].is_valid():
            home[0].switch()
            if home[1] is not None and home[1].is_valid():
                home[1].select()

    def defer_or_run(self, work):
        if self._in_condition:
            self._deferred.append(work)  # GDB forbids changing breakpoints inside a condition
        else:
            work()

    def run_deferred(self):
        work, self._deferred = self._deferred, []
        for w in work:
            w()

    def _stopped(self, stop):
        if self._arming:
            self._report(self._arming, stop)
        self._last_stop = stop

    def _report(self, arming, stop):
        with self.selection_kept():
            return arming.on_stop(*stop)

    def _descriptors(self, frame):
        architecture = frame.architecture()
        if architecture is not self._architecture:
            found = architecture.registers()
            self._registers = [found.find(name)
                               for name in _strobe.register_names(architecture.name())]
            self._architecture = architecture
        return self._registers

    def _warn_unreadable(self, error):
        if "is running" in str(error) and not self._warned_running:
            self._warned_running = True
            gdb.write("strobe: only the stopped thread can be sampled: GDB runs this process in "
                      "non-stop mode; load strobe before starting or attaching to it\n")


class _Arming:
    """What arm() changed in GDB; close() undoes it (after the condition GDB may be evaluating)."""

    def __init__(self, target, on_stop, signo):
        self.target, self.on_stop, self.signo = target, on_stop, signo
        self.name = gdb_signal_name(signo)
        self.handling = target._user_handling.pop(self.name, None) or _handling(self.name)
        self.silent_kept = False
        gdb.execute(f"handle {self.name} nostop noprint nopass", to_string=True)
        gdb.execute(f"catch signal {self.name}", to_string=True)
        number = int(gdb.convenience_variable("bpnum"))
        self.catchpoint = next(b for b in gdb.breakpoints() if b.number == number)
        self.catchpoint.silent = True  # strobe's final stop of a capture prints nothing
        self.catchpoint.condition = f"${_STOP_FUNCTION}()"

    def keep_signal_silent(self):
        self.silent_kept = True

    def close(self):
        if self.target._arming is self:
            self.target._arming = None
        self.on_stop = None
        self.target.defer_or_run(self._undo)

    def _undo(self):
        if self.catchpoint.is_valid():
            self.catchpoint.delete()
        if self.silent_kept:
            self.target._user_handling[self.name] = self.handling
        else:
            gdb.execute(f"handle {self.name} {self.handling}", to_string=True)


class StopFunction(gdb.Function):
    """$_strobe_stop(): strobe's sample stop. Returns 0 to resume at once, 1 to stop."""

    def __init__(self, target):
        super().__init__(_STOP_FUNCTION)
        self._target = target

    def invoke(self):
        return self._target.on_sample_signal()


def _selected_frame():
    try:
        return gdb.selected_frame()
    except gdb.error:
        return None


def _handling(name):
    """The signal's current `handle` settings, as the words the handle command takes."""
    row = gdb.execute(f"info signals {name}", to_string=True).splitlines()[1].split()
    return " ".join(word if flag == "Yes" else "no" + word
                    for word, flag in zip(("stop", "print", "pass"), row[1:4]))


def _describe(event):
    tid = gdb.selected_thread().ptid[1]
    if isinstance(event, gdb.BreakpointEvent):
        numbers = ", ".join(str(b.number) for b in event.breakpoints)
        return StopKind.Breakpoint, tid, 0, 0, f"breakpoint {numbers}"
    if isinstance(event, gdb.SignalEvent):
        name = event.stop_signal
        return StopKind.Signal, tid, signal_number(name), 0, f"signal {name}"
    return StopKind.Other, tid, 0, 0, "stopped"


def _function_at(pc):
    """(physical function, its start, its size, [inlined functions, innermost first])."""
    try:
        block = gdb.block_for_pc(pc)
    except RuntimeError:
        block = None
    functions = []
    while block is not None and not block.is_static and not block.is_global:
        if block.function is not None:
            functions.append(block)
        block = block.superblock
    if functions:
        outer = functions[-1]
        return (outer.function.name, outer.start, outer.end - outer.start,
                [b.function.name for b in functions[:-1]])
    # No debug information: the minimal (ELF) symbol, whose size GDB does not tell.
    text = gdb.execute(f"info symbol {pc:#x}", to_string=True)
    m = _INFO_SYMBOL.match(text)
    if not m:
        return "", 0, 0, []
    return m.group(1), pc - int(m.group(2) or 0), 0, []
