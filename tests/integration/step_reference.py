"""The debuggers' own single-step, as ground truth for `strobe step` (loaded into gdb or lldb-19).

Reads a JSON file of memory accesses per step ([[["r"|"w", address, size], ...], ...]), steps the
current thread once per entry with the debugger's own stepi, and writes, per step, the registers
before it and the memory values (read accesses before the step, writes after) as JSON."""
import json

REGISTERS = {
    "x86_64": ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11",
               "r12", "r13", "r14", "r15", "rip", "eflags", "fs_base", "gs_base"],
    "aarch64": [f"x{i}" for i in range(31)] + ["sp", "pc", "cpsr"],
}
MASK = (1 << 64) - 1


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


def run_gdb(steps_in, out_path, isa="x86_64"):
    import gdb

    def registers():
        return {r: int(gdb.parse_and_eval(f"${r}")) & MASK for r in REGISTERS[isa]}

    def memory(address, size):
        return bytes(gdb.selected_inferior().read_memory(address, size)).hex()

    _run(steps_in, out_path, registers, memory, lambda: gdb.execute("stepi", to_string=True))


def run_lldb(debugger, steps_in, out_path, isa="x86_64"):
    import lldb
    process = debugger.GetSelectedTarget().GetProcess()
    thread = process.GetSelectedThread()

    def registers():
        frame = thread.GetFrameAtIndex(0)
        return {r: frame.FindRegister(r).GetValueAsUnsigned() & MASK for r in REGISTERS[isa]}

    def memory(address, size):
        error = lldb.SBError()
        return process.ReadMemory(address, size, error).hex()

    def stepi():
        error = lldb.SBError()
        thread.StepInstruction(False, error)

    _run(steps_in, out_path, registers, memory, stepi)
