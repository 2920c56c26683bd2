"""How long each stop holds a program, from the kernel's own events: from the moment a thread of
the program leaves its CPU in a traced stop (state t or T) to its tracer's PTRACE_CONT for it.
That is a sample's stop + register reads + caller + resume, the same for every tracer (raw ptrace,
GDB, LLDB's lldb-server), and measured outside them, so nothing in a debugger is timed by the
debugger itself. (The resume call ends it, not the wake-up or the return to a CPU: on this VM perf
records no event that runs in the second CPU's idle task, where both of those often happen.)

    with SchedTrace() as trace:
        run(...)
    held = trace.held_us("demo")   # one figure per stop, in microseconds
"""
import os
import re
import signal
import subprocess
import tempfile

_EVENT = re.compile(r"^\s*(\d+)\.(\d+):\s+\w+:(sched_switch|sys_enter):\s+(.*)$")
_SWITCH = re.compile(r"prev_comm=(.*) prev_pid=(\d+) prev_prio=\d+ prev_state=(\S+) ==> ")
# ptrace(request, pid, ...), as raw_syscalls prints it (hex arguments).
_PTRACE = re.compile(r"NR 101 \(([0-9a-f]+), ([0-9a-f]+),")
_RESUMES = {7, 24}  # PTRACE_CONT, PTRACE_SYSCALL


class SchedTrace:
    """perf record of every CPU's context switches and ptrace calls for the duration of a `with`
    block."""

    def __enter__(self):
        self._dir = tempfile.TemporaryDirectory()
        self._data = os.path.join(self._dir.name, "sched.data")
        ctl, ack = (os.path.join(self._dir.name, name) for name in ("ctl", "ack"))
        os.mkfifo(ctl)
        os.mkfifo(ack)
        # Started with its events off, and switched on through the control fifo, which answers
        # once they are on: perf takes a while to set up, and the block must not start before.
        self._perf = subprocess.Popen(
            ["perf", "record", "-q", "-e", "sched:sched_switch", "-e", "raw_syscalls:sys_enter",
             "--filter", "id == 101", "-a", "-D", "-1", "--control", f"fifo:{ctl},{ack}", "-o",
             self._data],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        with open(ctl, "w") as c, open(ack) as a:
            c.write("enable\n")
            c.flush()
            if a.readline().strip() != "ack":
                raise RuntimeError("perf did not start recording")
        return self

    def __exit__(self, *exc):
        self._perf.send_signal(signal.SIGINT)
        err = self._perf.communicate(timeout=120)[1]
        self._script = subprocess.run(
            ["perf", "script", "--ns", "-i", self._data, "-F", "time,event,trace"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True).stdout
        self._dir.cleanup()
        if not self._script:
            raise RuntimeError("perf recorded no context switches: " + err.strip())
        return False

    def held_us(self, comm):
        """Microseconds from each traced stop of a thread named `comm` to its resume, in order."""
        stopped = {}  # tid -> when it left its CPU in a traced stop
        held = []
        for line in self._script.splitlines():
            m = _EVENT.match(line)
            if not m:
                continue
            ns = int(m.group(1)) * 1_000_000_000 + int(m.group(2))
            if m.group(3) == "sched_switch":
                s = _SWITCH.match(m.group(4))
                if s and s.group(1) == comm and s.group(3)[0] in "tT":
                    stopped[s.group(2)] = ns
                continue
            p = _PTRACE.match(m.group(4))
            if p and int(p.group(1), 16) in _RESUMES:
                tid = str(int(p.group(2), 16))
                if tid in stopped:
                    held.append((ns - stopped.pop(tid)) / 1000)
        return held
