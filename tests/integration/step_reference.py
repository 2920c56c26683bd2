"""The debuggers' own single-step, as ground truth for `strobe step` (loaded into gdb or lldb-19).

Reads a JSON file of memory accesses per step ([[["r"|"w", address, size], ...], ...]), steps the
current thread once per entry with the debugger's own stepi, and writes, per step, the registers
before it and the memory values (read accesses before the step, writes after) as JSON. With
`extended`, the registers include those of EXTENDED (x86-64's vector and x87 ones, AArch64's
vector and FP status ones), by strobe's names (ymmNh: the upper half of ymmN), each as one
number."""
import json

REGISTERS = {
    "x86_64": ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
               "r12", "r13", "r14", "r15", "rip", "eflags", "fs_base", "gs_base"],
    "aarch64": [f"x{i}" for i in range(31)] + ["sp", "pc", "cpsr"],
}
MASK = (1 << 64) - 1
# The extended registers compared, by strobe's names (AArch64's tpidr: qemu's stub has none).
EXTENDED = {
    "x86_64": ([f"xmm{i}" for i in range(16)] + [f"ymm{i}h" for i in range(16)]
               + [f"st{i}" for i in range(8)] + ["ftag", "fctrl", "fstat", "mxcsr"]),
    "aarch64": [f"v{i}" for i in range(32)] + ["fpsr", "fpcr"],
}


def _run(steps_in, out_path, registers, memory, stepi):
    with open(steps_in) as f:
        accesses = json.load(f)
    states = []
    for step in accesses:
        state = {"regs": registers(), "memory": []}
        for kind, address, size in step:
            if kind == "r":
                state["memory"].append(memory(address, size))
        stepi()
        for kind, address, size in step:
            if kind == "w":
                state["memory"].append(memory(address, size))
        states.append(state)
    with open(out_path, "w") as f:
        json.dump(states, f)


def run_gdb(steps_in, out_path, isa="x86_64", extended=False):
    import gdb

    def words(expression, indexes):
        return sum((int(gdb.parse_and_eval(f"{expression}[{i}]")) & MASK) << (64 * k)
                   for k, i in enumerate(indexes))

    def extended_register(name):
        if name.startswith("xmm"):
            return words(f"${name}.v2_int64", (0, 1))
        if name.startswith("v"):  # AArch64
            return words(f"${name}.d.u", (0, 1))
        if name.startswith("ymm"):
            return words(f"${name[:-1]}.v4_int64", (2, 3))
        if name.startswith("st"):  # a long double: its bytes, from `info registers`
            line = gdb.execute(f"info registers {name}", to_string=True)
            return int(line.split("(raw ")[1].rstrip(")\n"), 16)
        return int(gdb.parse_and_eval(f"${name}")) & MASK

    def registers():
        values = {r: int(gdb.parse_and_eval(f"${r}")) & MASK for r in REGISTERS[isa]}
        if extended:
            values.update({r: extended_register(r) for r in EXTENDED[isa]})
        return values

    def memory(address, size):
        return bytes(gdb.selected_inferior().read_memory(address, size)).hex()

    _run(steps_in, out_path, registers, memory, lambda: gdb.execute("stepi", to_string=True))


def run_lldb(debugger, steps_in, out_path, isa="x86_64", extended=False):
    import lldb
    process = debugger.GetSelectedTarget().GetProcess()
    thread = process.GetSelectedThread()

    def extended_register(frame, name):
        if name.startswith("ymm"):  # lldb-server gives the whole ymmN
            return int.from_bytes(bytes(frame.FindRegister(name[:-1]).GetData().uint8)[16:],
                                  "little")
        return int.from_bytes(bytes(frame.FindRegister(name).GetData().uint8), "little")

    def registers():
        frame = thread.GetFrameAtIndex(0)
        values = {r: frame.FindRegister(r).GetValueAsUnsigned() & MASK for r in REGISTERS[isa]}
        if extended:
            values.update({r: extended_register(frame, r) for r in EXTENDED[isa]})
        return values

    def memory(address, size):
        error = lldb.SBError()
        return process.ReadMemory(address, size, error).hex()

    def stepi():
        error = lldb.SBError()
        thread.StepInstruction(False, error)

    _run(steps_in, out_path, registers, memory, stepi)
