"""Loaded into GDB or LLDB by bench/run.py: mark() notes the CPU time the debugger has used so far,
report() prints what it used since, in seconds. The debugger counts with its stub (lldb-server),
which does part of LLDB's work in a process of its own; the inferior is left out."""
import os
import resource

_mark = 0.0


def _stub_seconds():
    """On-CPU time of the debugger's child lldb-server, from each thread's schedstat (ns)."""
    me, total = os.getpid(), 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                stat = f.read()
            name = stat[stat.find("(") + 1:stat.rfind(")")]
            ppid = int(stat[stat.rfind(")") + 2:].split()[1])
            if ppid != me or not name.startswith("lldb-server"):
                continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e9


def _cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)  # every thread, those ended too
    return usage.ru_utime + usage.ru_stime + _stub_seconds()


def mark():
    global _mark
    _mark = _cpu_seconds()


def report():
    print(f"debugger CPU: {_cpu_seconds() - _mark:.6f} s")
