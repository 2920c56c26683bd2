"""GdbTarget: the engine's Target port (engine/target/Target.h) over GDB's Python API.

Sample stops use GDB's cheapest stop: the sample signal is set to `nostop noprint nopass` and a
`catch signal` catchpoint has the condition $_strobe_stop(). GDB evaluates that condition inside its
own handling of the signal, before it would announce a stop; the function samples every thread
through the engine and returns 0, so GDB discards the signal and resumes without printing,
notifying or refreshing anything. Every other stop while armed arrives through gdb.events and is
reported to the engine, then shown by GDB as usual.

For a process GDB runs natively, the _strobe module reads registers and the caller and makes
single steps itself (GDB's thread is the tracer); this class is its fallback and does what needs
GDB: remote targets, code without CFI, steps that could arrive at a breakpoint, signals. Through
gdbserver the module steps a trace with gdbserver's packets, which this class sends for it
(packet()), where GDB would have done nothing but the step."""
import contextlib
import re
import signal

import gdb

from . import _strobe
from .modules import read_modules

StopKind, Verdict = _strobe.StopKind, _strobe.Verdict
_STOP_FUNCTION = "_strobe_stop"
# The types of GDB's connections to gdbserver (`target remote` and `target extended-remote`).
_GDBSERVER_CONNECTIONS = ("remote", "extended-remote")
# gdb.format_address: "0x1139 <func_B+4>", with " at FILE:LINE" under `set print symbol-filename`.
_FORMATTED_ADDRESS = re.compile(r"0x[0-9a-f]+ <(.+?)(?:\+(\d+))?(?: at [^>]*)?>")
_INFO_ADDRESS = re.compile(r"Symbol \"[^\"]*\" is (?:at|a function at address) (0x[0-9a-f]+)")
# `maint info breakpoints` rows: "NUM TYPE DISP ENB ADDRESS WHAT" and "NUM.LOC ENB ADDRESS WHAT".
_BREAKPOINT_ROW = re.compile(r"\s*-?\d+\s+(\S.*?)\s+(?:keep|del|dstp|dis)\s")
_LOCATION_ADDRESS = re.compile(r"\s*-?\d+(?:\.\d+)?\s.*?\s(0x[0-9a-f]+)(?:\s|$)")
_MASK64 = (1 << 64) - 1


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
        # The _Armings in force, oldest first: a sample capture, and heap tracking (signal 0).
        # All come from the one engine session, which hears each stop once.
        self._armings = []
        self._known = set()  # gdb.InferiorThread: those alive at arm() and those created since
        self._threads = {}  # LWP -> gdb.InferiorThread, from the latest threads() or _thread_of
        self._architecture = None
        self._registers = []  # descriptors of the engine's registers for _architecture
        self._extended_architecture = None
        self._extended = []  # (name, descriptor or None, bytes) of the extended ones, for that one
        self._halves = {}  # name -> _halves_path() of each 16-byte one, for that one
        self._home = None  # (thread, frame) the user had selected before read_thread switched
        self._callbacks = 0  # depth of GDB callbacks running (catchpoint condition, stop())
        self._deferred = []  # what GDB forbids inside a breakpoint condition, done after it
        # during step_instruction's stepi: each breakpoint's (hit count, ignore count) before it
        self._stepping = None
        self._step_scope = None  # while the engine steps a thread (begin_stepping)
        self._step_guard = None  # native_step_guard()'s answer until breakpoints change
        self._retired = {}  # address -> engine breakpoints deleted in a callback, still in GDB
        self._own_stop = None  # the sample stop after which $_strobe_stop() asked GDB to stop
        self._last_stop = None  # the latest stop GDB reported
        self._exec_stop = None  # the exec GDB is following, until its catchpoint's stop
        self._warned_running = False
        # The user's `handle` settings of a signal an arming left silenced, for the next to restore.
        self._user_handling = {}
        # The user's scheduler-locking mode, which a step into the process's exit left "off".
        self._user_locking = None

    # --- inspection ---

    def has_process(self):
        return self.pid() != 0

    def isa(self):
        return gdb.selected_inferior().architecture().name()

    def pid(self):
        return gdb.selected_inferior().pid

    def identity(self):
        inferior = gdb.selected_inferior()
        return inferior.pid, _selected_tid(), _program(inferior.progspace)

    def threads(self):
        # Not Inferior.threads(): that refreshes GDB's thread list through libthread_db, which
        # can attach to a thread the kernel is still creating and hang GDB when it runs inside the
        # catchpoint's condition. GDB reports every thread it adds (on_new_thread), and a thread
        # object turns invalid when its thread is gone.
        inferior = gdb.selected_inferior()
        self._known = {t for t in self._known if t.is_valid()}
        self._threads = {t.ptid[1]: t for t in self._known if t.inferior is inferior}
        return list(self._threads)

    def current_thread(self):
        thread = self._home[0] if self._home is not None else gdb.selected_thread()
        return thread.ptid[1] if thread is not None and thread.is_valid() else 0

    def read_thread(self, tid, depth):
        try:
            frame = self._newest_frame_of(tid)
            if frame is None:
                return None
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

    def read_extended(self, tid):
        """(values, names of the registers this target lacks, in values as 0), or None."""
        try:
            frame = self._newest_frame_of(tid)
            if frame is None:
                return None
            values, absent = [], []
            for name, register, size in self._extended_descriptors(frame):
                if register is None:  # this target has none (no AVX): 0, as in LLDB
                    values += [0] * (size // 8)
                    absent.append(name)
                    continue
                value = frame.read_register(register)
                if size == 16:
                    if name not in self._halves:  # found once: walking the type cost 15 us
                        self._halves[name] = _halves_path(value.type)
                    if self._halves[name] is False:
                        return None
                    values += _two_words(value, self._halves[name])
                else:
                    values.append(int(value) & _MASK64)
            return values, absent
        except (gdb.error, ValueError) as error:
            self._warn_unreadable(error)
            return None

    def modules(self):
        return read_modules(self.read_memory)

    def resolve(self, location):
        """GDB's reading of a location the module could not resolve from ELF symbol tables."""
        try:
            if location.startswith("*"):  # an expression, as `break *EXPR` reads it
                value = gdb.parse_and_eval(location[1:])
                if value.type.strip_typedefs().code == gdb.TYPE_CODE_FUNC:
                    value = value.address
                return [int(value) & _MASK64]
            if re.fullmatch(r".+:\d+", location):  # FILE:LINE, as `break FILE:LINE` reads it
                sals = gdb.decode_line(location)[1] or ()
                return sorted({sal.pc for sal in sals if sal.pc})
            return _function_addresses(location)
        except gdb.error:
            return []

    def data_address(self, name):
        """(address, size) of the global or static variable GDB knows by this name, or None;
        size 0 when only a symbol without debug information gives the address."""
        try:
            for symbol in _variables_named(name):
                value = symbol.value()
                if value.address is not None:
                    return int(value.address) & _MASK64, value.type.sizeof
            if _debug_symbol(name) is not None:  # a local, a thread-local or a function
                return None
            address = gdb.parse_and_eval(f"&{name}")  # a minimal symbol: `&var` needs no type
            if address.type.strip_typedefs().target().code == gdb.TYPE_CODE_FUNC:
                return None
            return int(address) & _MASK64, 0
        except (gdb.error, ValueError):
            return None

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
        arming = _Arming(self, on_stop, signo)
        self._armings.append(arming)
        return arming

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

    def begin_stepping(self, tid):
        """What a step trace needs of GDB for its duration (SteppingScope); close() undoes it."""
        self._step_scope = _SteppingScope(self)
        return self._step_scope

    def step_instruction(self, tid):
        """One `stepi` of that thread alone, with GDB's printing of a plain step left out."""
        return self._resume_alone(tid, "stepi", ("on", "step"))

    def run_to(self, tid, address):
        """That thread alone runs until its pc is `address` (Target::runTo). A signal GDB passes
        without stopping is delivered on the way, its handler run too."""
        try:
            arrival = gdb.Breakpoint(f"*{address:#x}", internal=True, temporary=True)
        except (gdb.error, RuntimeError) as error:
            return StopKind.Other, tid, 0, 0, f"cannot run to {address:#x}: {error}"
        arrival.silent = True
        try:
            while True:
                stop = self._resume_alone(tid, "continue", ("on",))
                if stop[0] != StopKind.Delivering:
                    return stop
        finally:
            if arrival.is_valid():
                arrival.delete()
            self.invalidate_step_guard()

    def _resume_alone(self, tid, command, locked):
        """`command` resumes that thread alone (scheduler-locking one of `locked` for it), GDB's
        printing of a plain stop left out: the engine's tuple for its stop."""
        thread = self._thread_of(tid)
        if thread is None:
            return StopKind.Other, tid, 0, 0, f"no thread {tid} to resume"
        self._select(thread)
        locking = gdb.parameter("scheduler-locking")
        quiet = gdb.parameter("suppress-cli-notifications")
        if locking not in locked:
            gdb.execute(f"set scheduler-locking {locked[0]}", to_string=True)
        gdb.execute("set suppress-cli-notifications on", to_string=True)
        self._last_stop = None
        self._stepping = {b.number: (b.hit_count, b.ignore_count) for b in gdb.breakpoints()}
        # A write watchpoint's old value, which GDB prints at a trigger, and whether a breakpoint
        # is temporary or silent: gone after the stepi (GDB deletes a temporary one at its stop).
        before = {b.number: _value_text(b.expression) for b in gdb.breakpoints()
                  if b.type in _WATCHPOINT_WORDS and b.enabled}
        headers = {b.number: _stop_header(b) for b in gdb.breakpoints()
                   if b.type == gdb.BP_BREAKPOINT and b.number > 0}
        try:
            gdb.execute(command, to_string=True)
        except gdb.error as error:
            self._last_stop = self._last_stop or (StopKind.Other, tid, 0, 0, str(error))
        finally:
            self._stepping = None
            gdb.execute(f"set suppress-cli-notifications {'on' if quiet else 'off'}",
                        to_string=True)
            if locking not in locked:
                try:
                    gdb.execute(f"set scheduler-locking {locking}", to_string=True)
                except gdb.error:
                    # The step ended the process: without one GDB allows only "off", and sets
                    # it. The user's mode comes back at the next process's first stop.
                    self._user_locking = locking
        stop = self._last_stop or (StopKind.Other, tid, 0, 0, "stopped")
        if stop[0] not in (StopKind.Step, StopKind.Delivering):
            self._home = None  # the user's stop selects its thread, as without strobe
            _show_stop(stop, before, headers)
        return stop

    def insert_breakpoint(self, address, handler):
        retired = self._retired.get(address)
        if retired:
            # One that the engine deleted inside a callback and GDB still holds: a one-shot
            # breakpoint set again at each call (a return address) stays one breakpoint.
            breakpoint = retired.pop()
            breakpoint.revive(handler)
            return breakpoint
        if len(self.read_memory(address, 1)) != 1:
            return None  # GDB would fail at the next resume, in the user's `continue`
        try:
            breakpoint = _EngineBreakpoint(self, address, handler)
        except (gdb.error, RuntimeError):
            return None
        if breakpoint.pending or not breakpoint.is_valid():
            breakpoint.delete()
            return None
        self.invalidate_step_guard()
        return breakpoint

    def native_step_guard(self):
        """None when only GDB may step (watchpoints, a target that is neither native nor
        gdbserver); else every address a breakpoint (the user's, strobe's, GDB's own) has a
        location at."""
        if self._step_guard is None:
            self._step_guard = _step_guard()
        return None if self._step_guard is False else self._step_guard

    def invalidate_step_guard(self, *event):
        self._step_guard = None

    def refresh_registers(self, tid=0):
        """The module stepped threads behind GDB's back: drop what GDB cached of them. `tid`: the
        thread it stepped with gdbserver's packets, now gdbserver's current thread; GDB reads its
        registers, so that GDB tells gdbserver which thread it means from now on."""
        gdb.execute("maint flush register-cache", to_string=True)
        gdb.execute("maint flush dcache", to_string=True)
        if tid:
            with contextlib.suppress(gdb.error):
                frame = self._newest_frame_of(tid)
                if frame is not None:
                    frame.pc()

    def remote_layout(self):
        """Where gdbserver's register block (`g`) holds each register of the engine's tables, and
        how its packets name threads; None when the process is not behind gdbserver or a
        register is missing from the block."""
        inferior = gdb.selected_inferior()
        connection = getattr(inferior, "connection", None)
        # (In non-stop mode a step's stop would come as a notification GDB handles itself.)
        if (connection is None or connection.type not in _GDBSERVER_CONNECTIONS
                or gdb.parameter("non-stop")):
            return None
        try:
            architecture = gdb.newest_frame().architecture().name()
            rows = gdb.execute("maint print remote-registers", to_string=True).splitlines()
            current = self.packet("qC") or ""
        except (gdb.error, RuntimeError):
            return None
        # " Name Nr Rel Offset Size Type Rmt Nr g/G Offset": a register in the block has all eight.
        fields = (row.split() for row in rows[1:])
        block = {f[0]: (int(f[7]), int(f[4])) for f in fields if len(f) == 8 and f[7].isdigit()}
        try:
            regs = [block[name] for name in _strobe.register_names(architecture)]
            extended = [block[name] for name, _ in _strobe.extended_registers(architecture)]
        except (KeyError, ValueError):
            return None
        # qC's reply names the thread as packets must: "QCp<pid>.<tid>" with multiprocess.
        prefix = f"p{inferior.pid:x}." if current.startswith("QCp") else ""
        return prefix, regs, extended

    def packet(self, text):
        """gdbserver's reply to one packet, sent through GDB's connection; None on failure."""
        try:
            out = gdb.execute(f"maint packet {text}", to_string=True)
        except gdb.error:
            return None
        start = out.find('received: "')
        return out[start + 11:out.rindex('"')] if start >= 0 else None

    def remote_signal(self, tid, signo):
        """A signal stopped a step made with gdbserver's packets, before the instruction ran, and
        GDB has not seen it: done as GDB would have, by its `handle` settings. A signal it stops
        for is shown and ends the trace; one it passes waits for the thread's next resume (a
        passed one the step scope watches for is delivered by the next `stepi`, as GDB's own stop
        at it would be). None: GDB is to step the thread."""
        name = gdb_signal_name(signo)
        try:
            row = _signal_row(name)
        except (gdb.error, IndexError):
            return None
        stops, prints, passes = (flag == "Yes" for flag in row[1:4])
        scope = self._step_scope
        watched = scope is not None and name in scope.passed
        if watched:  # the user's settings, not the scope's
            stops, prints = False, scope.passed[name]
        thread = self._thread_of(tid)
        if thread is not None:
            self._select(thread)
        if passes:
            gdb.execute(f"queue-signal {name}", to_string=True)
        if prints:
            gdb.write(f"\nProgram received signal {name}, {' '.join(row[4:])}.\n")
        if stops:
            self._home = None  # the user's stop selects its thread, as without strobe
            stop = (StopKind.Signal, tid, signo, 0, f"signal {name}")
            _show_stop(stop, {}, {})
            return stop
        if watched:
            self._step_guard = False  # GDB's next `stepi` delivers it, into the handler
            return StopKind.Delivering, tid, signo, 0, f"signal {name}"
        return None

    def print(self, text):
        gdb.write(text)

    # --- GDB's side ---

    def on_sample_signal(self):
        """$_strobe_stop(): the sample signal stopped a thread. 0 resumes, 1 stops."""
        arming = next((a for a in reversed(self._armings) if a.signo), None)
        if arming is None:
            return 0  # a catchpoint whose deletion waits for the end of this condition
        stop = (StopKind.Signal, gdb.selected_thread().ptid[1], arming.signo, 0,
                f"signal {arming.name}")
        with self.in_callback():
            verdict = self._report(arming, stop)
        if verdict == Verdict.Resume:
            return 0
        self._own_stop = stop
        return 1

    def on_new_thread(self, event):
        self._known.add(event.inferior_thread)

    def on_stop_event(self, event):
        self.invalidate_step_guard()  # hit counts and temporary breakpoints change at stops
        if self._user_locking is not None:
            try:
                gdb.execute(f"set scheduler-locking {self._user_locking}", to_string=True)
            except gdb.error:
                pass  # a target of another kind, which lacks that mode
            self._user_locking = None
        if self._own_stop is not None:
            self._last_stop, self._own_stop = self._own_stop, None
            # The sample signal is now this thread's stop signal: drop it, or the first
            # `continue` after its `pass` setting is restored would deliver it to the program.
            gdb.execute("queue-signal 0", to_string=True)
        elif self._exec_stop is not None:  # reported to the engine by on_program_replaced
            self._last_stop = self._exec_stop
        elif self._step_scope is not None and (stop := self._step_scope.stop_of(event)):
            self._stopped(stop)
        elif isinstance(event, gdb.BreakpointEvent) and any(
                a.exec_catchpoint in event.breakpoints for a in self._armings):
            # an exec of the same file, which on_program_replaced leaves alone
            self._stopped(_exec_stop(gdb.current_progspace()))
        else:
            self._stopped(_describe(event, self._stepping))
        self._exec_stop = None
        self.run_deferred()

    def on_program_replaced(self, event):
        """clear_objfiles while armed and the process lives: it executed a new program. GDB
        inserts every breakpoint into the new program before it reports the exec, so the engine
        hears of it now and removes what it set in the old one; the exec catchpoint that then
        stops the process stays until that stop."""
        inferior = gdb.selected_inferior()
        # GDB also clears the objfiles when it follows a fork's child: an exec is told by its new
        # file (one that executes its own file again goes on being sampled as before).
        arming = self._armings[-1] if self._armings else None
        if (arming is None or inferior.pid != arming.pid or event.progspace != inferior.progspace
                or event.progspace.filename == arming.program):
            return
        self._exec_stop = _exec_stop(event.progspace)
        self._stopped(self._exec_stop)

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

    @contextlib.contextmanager
    def own_selection(self):
        """Like selection_kept, for a callback inside GDB's own work (a stepi that arrives at an
        engine breakpoint): restores only what the callback changed."""
        outer, self._home = self._home, None
        try:
            yield
        finally:
            self.restore_selection()
            self._home = outer

    def restore_selection(self):
        home, self._home = self._home, None
        if home is not None and home[0] is not None and home[0].is_valid():
            home[0].switch()
            if home[1] is not None and home[1].is_valid():
                home[1].select()

    @contextlib.contextmanager
    def in_callback(self):
        """GDB is evaluating a condition or a breakpoint's stop(): changes to breakpoints wait."""
        self._callbacks += 1
        try:
            yield
        finally:
            self._callbacks -= 1

    def defer_or_run(self, work):
        # GDB forbids changing breakpoints inside a condition or stop(); the work waits for the
        # next stop or command. (Not gdb.post_event: an event still queued when GDB exits, as
        # after the last command of a batch run, crashes GDB 13.)
        if self._callbacks:
            self._deferred.append(work)
        else:
            work()

    def run_deferred(self):
        work, self._deferred = self._deferred, []
        for w in work:
            w()

    def _stopped(self, stop):
        if self._armings:
            self._report(self._armings[-1], stop)
        self._last_stop = stop

    def _report(self, arming, stop):
        with self.selection_kept():
            return arming.on_stop(*stop)

    def _thread_of(self, tid):
        thread = self._threads.get(tid)
        if thread is None or not thread.is_valid():
            # Inferior.threads() asks a remote target for its thread list (a qXfer round trip):
            # a step reads the thread three times, so the answer is kept.
            thread = next((t for t in gdb.selected_inferior().threads() if t.ptid[1] == tid), None)
            if thread is not None:
                self._threads[tid] = thread
        return thread

    def _select(self, thread):
        """Makes `thread` GDB's selected thread, remembering the user's for restore_selection."""
        selected = gdb.selected_thread()
        if thread is not selected:
            if self._home is None:
                self._home = (selected, _selected_frame())
            thread.switch()

    def _newest_frame_of(self, tid):
        thread = self._thread_of(tid)
        if thread is None:
            return None
        self._select(thread)
        return gdb.newest_frame()

    def _descriptors(self, frame):
        architecture = frame.architecture()
        if architecture is not self._architecture:
            found = architecture.registers()
            self._registers = [found.find(name)
                               for name in _strobe.register_names(architecture.name())]
            self._architecture = architecture
        return self._registers

    def _extended_descriptors(self, frame):
        architecture = frame.architecture()
        if architecture is not self._extended_architecture:
            found = architecture.registers()
            self._extended = [(name, found.find(name), size)
                              for name, size in _strobe.extended_registers(architecture.name())]
            self._halves = {}
            self._extended_architecture = architecture
        return self._extended

    def _warn_unreadable(self, error):
        if "is running" in str(error) and not self._warned_running:
            self._warned_running = True
            # The user's `set non-stop on`, or GDB's own non-stop target under all-stop, which
            # strobe turns off only when it is loaded before the process starts.
            why = ("'set non-stop on' keeps the other threads running" if gdb.parameter("non-stop")
                   else "GDB runs this process in non-stop mode; load strobe before starting or "
                        "attaching to it")
            gdb.write(f"strobe: only the stopped thread can be sampled: {why}\n")


class _SteppingScope:
    """What GDB's own `stepi` needs during a step trace. GDB runs the handler of a signal it
    passes without stopping inside the `stepi`: for the trace's duration it stops for those
    signals instead (their `handle` settings restored at the end), its next `stepi` delivers the
    signal and stops at the handler's entry, which is then stepped. And GDB follows an exec inside
    a `stepi` and runs the new program's start unstepped: before a step that may exec, a
    catchpoint ends the trace at the exec instead. (Catchpoints take breakpoint numbers from the
    user's; `handle` does not.)"""

    def __init__(self, target):
        self.target = target
        self.exec_catchpoint = None
        self.passed = _signals_passed_without_stopping()  # name -> whether GDB prints it
        if self.passed:
            gdb.execute("handle " + " ".join(self.passed) + " stop", to_string=True)

    def exec_may_follow(self):
        if self.exec_catchpoint is None:
            with contextlib.suppress(gdb.error):  # a target that cannot report an exec
                self.exec_catchpoint = _new_catchpoint("catch exec")

    def stop_of(self, event):
        """The engine's tuple for a stop at the exec catchpoint or for one of the signals, or
        None."""
        if self.exec_catchpoint is not None and self.exec_catchpoint in getattr(
                event, "breakpoints", ()):
            return _exec_stop(gdb.current_progspace())
        if isinstance(event, gdb.SignalEvent) and event.stop_signal in self.passed:
            # GDB's next `stepi` delivers it, into the handler: the module must not step instead.
            self.target._step_guard = False
            name = event.stop_signal
            return StopKind.Delivering, _selected_tid(), signal_number(name), 0, f"signal {name}"
        return None

    def close(self):
        if self.target._step_scope is self:
            self.target._step_scope = None
        if self.exec_catchpoint is not None and self.exec_catchpoint.is_valid():
            self.exec_catchpoint.delete()
        for prints in (True, False):
            names = [name for name, printed in self.passed.items() if printed == prints]
            if names:
                gdb.execute(f"handle {' '.join(names)} nostop {'print' if prints else 'noprint'}",
                            to_string=True)


# Linux's signals as `info signals` names them, beside names of other systems' signals that no
# Linux program receives: real-time ones are SIG34 and up.
_LINUX_SIGNALS = ("SIGHUP SIGQUIT SIGILL SIGABRT SIGBUS SIGFPE SIGUSR1 SIGSEGV SIGUSR2 SIGPIPE "
                  "SIGALRM SIGTERM SIGCHLD SIGCONT SIGTSTP SIGTTIN SIGTTOU SIGURG SIGXCPU SIGXFSZ "
                  "SIGVTALRM SIGPROF SIGWINCH SIGIO SIGPWR SIGSYS").split()


def _signals_passed_without_stopping():
    """The signals GDB hands to the program without stopping, by `info signals`: {name: whether
    GDB prints it}."""
    passed = {}
    for row in gdb.execute("info signals", to_string=True).splitlines():
        fields = row.split()
        if (len(fields) >= 4 and (fields[0] in _LINUX_SIGNALS or re.fullmatch(r"SIG\d+", fields[0]))
                and fields[1] == "No" and fields[3] == "Yes"):
            passed[fields[0]] = fields[2] == "Yes"
    return passed


class _Arming:
    """What arm() changed in GDB; close() undoes it (after the condition GDB may be evaluating)."""

    def __init__(self, target, on_stop, signo):
        self.target, self.on_stop, self.signo = target, on_stop, signo
        self.silent_kept = False
        # The process strobe acts on, and its program until an exec replaces it.
        self.pid, self.program = gdb.selected_inferior().pid, gdb.current_progspace().filename
        # GDB follows an exec without stopping; strobe's capture of the old program ends there.
        try:
            self.exec_catchpoint = _new_catchpoint("catch exec")
        except gdb.error:  # a target that cannot report an exec
            self.exec_catchpoint = None
        if not signo:
            return  # only stops reported: nothing more to set up
        self.name = gdb_signal_name(signo)
        self.handling = target._user_handling.pop(self.name, None) or _handling(self.name)
        gdb.execute(f"handle {self.name} nostop noprint nopass", to_string=True)
        self.catchpoint = _new_catchpoint(f"catch signal {self.name}")
        self.catchpoint.silent = True  # strobe's final stop of a capture prints nothing
        self.catchpoint.condition = f"${_STOP_FUNCTION}()"

    def keep_signal_silent(self):
        self.silent_kept = True

    def close(self):
        if self in self.target._armings:
            self.target._armings.remove(self)
        self.on_stop = None
        self.target.defer_or_run(self._undo)

    def _undo(self):
        catchpoint = self.exec_catchpoint
        if catchpoint is not None:
            # GDB looks for the catchpoint only after it has followed the exec.
            if self.target._exec_stop is not None:
                self.target._deferred.append(lambda: catchpoint.is_valid() and catchpoint.delete())
            elif catchpoint.is_valid():
                catchpoint.delete()
        if not self.signo:
            return
        if self.catchpoint.is_valid():
            self.catchpoint.delete()
        if self.silent_kept:
            self.target._user_handling[self.name] = self.handling
        else:
            gdb.execute(f"handle {self.name} {self.handling}", to_string=True)


def _selected_tid():
    thread = gdb.selected_thread()
    return thread.ptid[1] if thread is not None else 0


def _program(progspace):
    """The path of the program a program space holds; gdbserver's files read through the remote
    protocol are named target:PATH."""
    return (progspace.filename or "").removeprefix("target:")


def _exec_stop(progspace):
    """The stop the engine hears of when the process executed the program `progspace` holds."""
    return StopKind.Exec, _selected_tid(), 0, 0, _program(progspace)


def _new_catchpoint(command):
    gdb.execute(command, to_string=True)
    number = int(gdb.convenience_variable("bpnum"))
    return next(b for b in gdb.breakpoints() if b.number == number)


class _EngineBreakpoint(gdb.Breakpoint):
    """A breakpoint of the engine (Target::insertBreakpoint): its hits run the engine's handler
    and never stop. A user breakpoint at the same address still stops: GDB stops when any
    breakpoint there says so."""

    def __init__(self, target, address, handler):
        super().__init__(f"*{address:#x}", internal=True)
        self.silent = True
        self._target, self._address, self._handler = target, address, handler

    def stop(self):
        handler = self._handler
        if handler is not None:
            target = self._target
            with target.in_callback(), target.own_selection():
                try:
                    handler(gdb.selected_thread().ptid[1])
                except Exception as error:  # the engine's failure must not stop the program
                    gdb.write(f"strobe: breakpoint handler failed: {error}\n", gdb.STDERR)
        return False

    def delete(self):
        """The engine's Breakpoint is gone: no handler runs from now on, and the breakpoint
        leaves GDB as soon as GDB allows."""
        self._handler = None
        target = self._target
        if target._callbacks:
            target._retired.setdefault(self._address, []).append(self)
        target.defer_or_run(self._remove)

    def revive(self, handler):
        self._handler = handler

    def _remove(self):
        retired = self._target._retired.get(self._address, [])
        if self in retired:
            retired.remove(self)
        if self._handler is None and self.is_valid():  # not set again meanwhile
            super().delete()
        self._target.invalidate_step_guard()


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


def _signal_row(name):
    """`info signals` of one signal: [name, stop, print, pass, description words...]."""
    return gdb.execute(f"info signals {name}", to_string=True).splitlines()[1].split()


def _handling(name):
    """The signal's current `handle` settings, as the words the handle command takes."""
    return " ".join(word if flag == "Yes" else "no" + word
                    for word, flag in zip(("stop", "print", "pass"), _signal_row(name)[1:4]))


# GDB's own words for a watchpoint that triggered, and for the value it shows.
_WATCHPOINT_WORDS = {
    gdb.BP_WATCHPOINT: ("Watchpoint", "New value"),
    gdb.BP_HARDWARE_WATCHPOINT: ("Hardware watchpoint", "New value"),
    gdb.BP_READ_WATCHPOINT: ("Hardware read watchpoint", "Value"),
    gdb.BP_ACCESS_WATCHPOINT: ("Hardware access (read/write) watchpoint", "Value"),
}


def _describe(event, hits_before=None):
    """The engine's tuple for a stop; `hits_before` holds, during step_instruction's `stepi`,
    each breakpoint's (hit count, ignore count) from before it."""
    tid = gdb.selected_thread().ptid[1]
    stepping = hits_before is not None
    listed = getattr(event, "breakpoints", [])
    # GDB single-steps to check a software watchpoint and lists it at every step, triggered or
    # not: it triggered only if its hit count moved.
    watchpoints = [b for b in listed if b.type in _WATCHPOINT_WORDS
                   and (not stepping or b.hit_count != hits_before.get(b.number, (None,))[0])]
    if watchpoints:
        numbers = ", ".join(str(b.number) for b in watchpoints)
        return StopKind.Breakpoint, tid, 0, 0, f"watchpoint {numbers}"
    # GDB lists every breakpoint at the address, strobe's own (internal, numbered below 0) too,
    # though only the user's stopped. A step that arrives at strobe's own alone (a heap hook
    # whose handler has just run), or at one of the user's that GDB would not stop at, is a step
    # like any other.
    users = [b for b in listed if b.type not in _WATCHPOINT_WORDS and b.number > 0
             and (not stepping or _stops_there(b, hits_before.get(b.number)))]
    if isinstance(event, gdb.BreakpointEvent) and (users or not stepping):
        numbers = ", ".join(str(b.number) for b in users)
        return StopKind.Breakpoint, tid, 0, 0, f"breakpoint {numbers}"
    if isinstance(event, gdb.SignalEvent):
        name = event.stop_signal
        return StopKind.Signal, tid, signal_number(name), 0, f"signal {name}"
    # the end of a stepping range, or a step that only checked software watchpoints
    if stepping and (type(event) is gdb.StopEvent or isinstance(event, gdb.BreakpointEvent)):
        return StopKind.Step, tid, 0, 0, "stepped one instruction"
    return StopKind.Other, tid, 0, 0, "stopped"


def _stops_there(breakpoint, before):
    """Whether GDB would stop at a user's breakpoint a `stepi` arrived at, by its (hit count,
    ignore count) from before: a false condition leaves the hit count, an ignore count uses one
    up. (The `stepi` itself stops there either way.)"""
    if before is None or not breakpoint.is_valid():
        return True
    hits, ignore = before
    return breakpoint.hit_count != hits and breakpoint.ignore_count == ignore


def _value_text(expression):
    try:
        return str(gdb.parse_and_eval(expression))
    except gdb.error as error:
        return f"<{error}>"


def _stop_header(breakpoint):
    """How GDB opens the report of a stop at `breakpoint`; None for a silent one, whose stop GDB
    does not report."""
    commands = (breakpoint.commands or "").lstrip().splitlines()
    if commands and commands[0].strip() == "silent":
        return None
    return f"{'Temporary breakpoint' if breakpoint.temporary else 'Breakpoint'} {breakpoint.number}"


def _show_stop(stop, watched_before, headers):
    """What GDB would have printed of a stop that ended a quiet `stepi`: the breakpoint and the
    frame, a watchpoint's values (`watched_before`: each one's before the stepi). `headers`: each
    breakpoint's _stop_header() from before the stepi. (GDB prints signals and exits itself.)"""
    kind, _, _, _, description = stop
    if kind not in (StopKind.Breakpoint, StopKind.Signal):
        return
    try:
        frame = gdb.execute("frame", to_string=True)
    except gdb.error:
        return
    frame = re.sub(r"^#0\s+", "", frame)
    if description.startswith("watchpoint "):
        numbers = description.removeprefix("watchpoint ").split(", ")
        for watchpoint in (b for b in gdb.breakpoints() if str(b.number) in numbers):
            what, value_name = _WATCHPOINT_WORDS[watchpoint.type]
            old = watchpoint.number in watched_before and value_name == "New value"
            gdb.write(f"\n{what} {watchpoint.number}: {watchpoint.expression}\n\n"
                      + (f"Old value = {watched_before[watchpoint.number]}\n" if old else "")
                      + f"{value_name} = {_value_text(watchpoint.expression)}\n")
        gdb.write(frame)
    elif kind == StopKind.Breakpoint:
        # GDB names the first breakpoint that is not silent; with none, it prints nothing.
        numbers = [int(n) for n in description.removeprefix("breakpoint ").split(", ") if n]
        shown = [headers.get(n, f"Breakpoint {n}") for n in numbers]
        shown = [header for header in shown if header]
        if shown:
            gdb.write(f"\n{shown[0]}, {frame}")
    else:
        gdb.write(frame)


def _step_guard():
    """False when steps must go through GDB; else the frozenset of every breakpoint location."""
    connection = getattr(gdb.selected_inferior(), "connection", None)
    if connection is None or connection.type not in ("native", *_GDBSERVER_CONNECTIONS):
        return False
    addresses = set()
    for line in gdb.execute("maint info breakpoints", to_string=True).splitlines():
        row = _BREAKPOINT_ROW.match(line)
        if row and "watchpoint" in row.group(1):
            return False  # GDB checks those after every instruction
        location = _LOCATION_ADDRESS.match(line)
        if location:
            addresses.add(int(location.group(1), 16))
    return frozenset(addresses)


def _halves_path(kind):
    """How to take a 16-byte register's (low, high) 64-bit halves from a value of this type: the
    names of the union members down to an array of two 64-bit integers (x86 v2_int64, AArch64
    d.u); None to read its bytes as /x shows them (ymm0h's uint128_t, st0's 80-bit float); False
    when neither works."""
    kind = kind.strip_typedefs()
    if kind.code == gdb.TYPE_CODE_ARRAY and kind.sizeof == 16:
        element = kind.target().strip_typedefs()
        if element.code == gdb.TYPE_CODE_INT and element.sizeof == 8:
            return ()
    if kind.code in (gdb.TYPE_CODE_UNION, gdb.TYPE_CODE_STRUCT):
        for field in kind.fields():
            path = _halves_path(field.type)
            if path is not None and path is not False:
                return (field.name, *path)
    if kind.code in (gdb.TYPE_CODE_INT, gdb.TYPE_CODE_FLT) and kind.sizeof <= 16:
        return None
    return False


def _two_words(value, path):
    """The (low, high) halves of a 16-byte register's value, by its type's _halves_path()."""
    if path is None:
        raw = int(value.format_string(format="x"), 16)
        return [raw & _MASK64, raw >> 64]
    for name in path:
        value = value[name]
    return [int(value[0]) & _MASK64, int(value[1]) & _MASK64]


def _function_addresses(name):
    """Entry addresses of the functions GDB knows by exactly this name: debug symbols (global,
    and static ones of every module), else the minimal symbol `info address` finds."""
    symbols = gdb.lookup_static_symbols(name)
    found = gdb.lookup_global_symbol(name)
    if found is not None:
        symbols.append(found)
    addresses = {int(s.value().address) for s in symbols if s.addr_class == gdb.SYMBOL_LOC_BLOCK}
    if not addresses:
        m = _INFO_ADDRESS.search(gdb.execute(f"info address {name}", to_string=True))
        if m:
            addresses.add(int(m.group(1), 16))
    return sorted(addresses)


def _variables_named(name):
    """The variables at a fixed address that GDB's debug information names exactly so: the global
    one first, then the file-local ones of every module. (A thread-local variable's location is
    computed per thread, so it is not one of them.)"""
    found = gdb.lookup_global_symbol(name)
    symbols = ([found] if found is not None else []) + gdb.lookup_static_symbols(name)
    # LOC_UNRESOLVED: an extern declaration, placed where the minimal symbol of the name is.
    return [s for s in symbols if s.addr_class == gdb.SYMBOL_LOC_UNRESOLVED
            or (s.is_variable and s.addr_class == gdb.SYMBOL_LOC_STATIC)]


def _debug_symbol(name):
    """What GDB's debug information calls `name` where the selected frame is, or None."""
    try:
        return gdb.lookup_symbol(name)[0]
    except gdb.error:  # no frame
        return gdb.lookup_global_symbol(name) or gdb.lookup_static_symbol(name)


def _function_at(pc):
    """(physical function, its start, its size, [inlined functions, innermost first]); without
    debug information, the symbol's linkage name and size 0."""
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
    # No debug information: the minimal (ELF) symbol, whose size GDB does not tell. Its linkage
    # name (as addresses are shown while `print asm-demangle` is off, the default): GDB's
    # demangler takes some C names for mangled ones ("func_B" would be "func_").
    m = _FORMATTED_ADDRESS.fullmatch(gdb.format_address(pc))
    if not m:
        return "", 0, 0, []
    return m.group(1), pc - int(m.group(2) or 0), 0, []
