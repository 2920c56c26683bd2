"""The loaded modules of the inferior, from `info proc mappings` (or, on a target without one,
the sections `info files` lists) and the ELF headers in its memory.

All come through GDB, so they work for a local process, over gdbserver and under qemu-user."""
import re
import struct

import gdb

# Start Addr, End Addr, Size, Offset, [Perms (GDB 12 and later)], objfile.
_MAPPING = re.compile(
    r"\s*(0x[0-9a-f]+)\s+(0x[0-9a-f]+)\s+0x[0-9a-f]+\s+(0x[0-9a-f]+)\s+(?:[-rwxps]{4}\s+)?(\S.*)$")
# `info files`: Start - End is SECTION [in PATH] (no PATH: the executable).
_SECTION = re.compile(r"\s*(0x[0-9a-f]+) - (0x[0-9a-f]+) is \S+(?: in (\S.*))?$")
_PT_LOAD, _PT_NOTE, _NT_GNU_BUILD_ID = 1, 4, 3


def read_modules(read_memory):
    """[(path, build_id, start, end, bias)] for every mapped file and the vDSO."""
    spans = _spans_from_mappings() or _spans_from_sections()
    modules = []
    for path, (start, end, image) in spans.items():
        link_base, build_id = _elf_image(read_memory, image) if image is not None else (None, "")
        # bias = load address - link-time address. Without the ELF headers, assume the image was
        # linked at 0 (true of shared libraries and PIE executables).
        bias = image - link_base if link_base is not None else start
        modules.append((path, build_id, start, end, bias))
    return modules


def _spans_from_mappings():
    """{path: [lowest start, highest end, start of the mapping of file offset 0]} from the
    process's memory map."""
    try:
        text = gdb.execute("info proc mappings", to_string=True)
    except gdb.error:
        return {}
    spans = {}
    for line in text.splitlines():
        m = _MAPPING.match(line)
        if not m or not (m.group(4).startswith("/") or m.group(4) == "[vdso]"):
            continue
        start, end, offset = (int(g, 16) for g in m.group(1, 2, 3))
        span = spans.setdefault(m.group(4), [start, end, None])
        span[0], span[1] = min(span[0], start), max(span[1], end)
        if offset == 0 and span[2] is None:
            span[2] = start
    return spans


def _spans_from_sections():
    """The same from the sections GDB placed in memory, for a target whose memory map GDB cannot
    read (qemu-user's gdbstub has no /proc to offer). An image's first section lies in the page
    that maps file offset 0, where _elf_image then checks for the ELF header."""
    try:
        text = gdb.execute("info files", to_string=True)
    except gdb.error:
        return {}
    executable = gdb.current_progspace().filename
    spans = {}
    for line in text.splitlines():
        m = _SECTION.match(line)
        path = m and (m.group(3) or executable)
        if not path:
            continue
        start, end = int(m.group(1), 16), int(m.group(2), 16)
        span = spans.setdefault(path, [start, end, None])
        span[0], span[1] = min(span[0], start), max(span[1], end)
    for span in spans.values():
        span[2] = span[0] - span[0] % 4096
    return spans


def _elf_image(read_memory, base):
    """(link-time address of file offset 0, build id) of the ELF image mapped at `base`."""
    header = read_memory(base, 64)
    if len(header) < 64 or header[:4] != b"\x7fELF" or header[4] != 2:  # 64-bit images only
        return None, ""
    order = "<" if header[5] == 1 else ">"
    phoff, = struct.unpack_from(order + "Q", header, 0x20)
    phentsize, phnum = struct.unpack_from(order + "HH", header, 0x36)
    table = read_memory(base + phoff, phentsize * phnum)
    if len(table) < phentsize * phnum:
        return None, ""
    # (type, flags, offset, vaddr, paddr, filesz) of each program header
    segments = [struct.unpack_from(order + "IIQQQQ", table, i * phentsize) for i in range(phnum)]
    loads = [vaddr - offset for kind, _, offset, vaddr, _, _ in segments if kind == _PT_LOAD]
    if not loads:
        return None, ""
    link_base = loads[0]
    build_id = ""
    for kind, _, _, vaddr, _, filesz in segments:
        if kind == _PT_NOTE and not build_id:
            build_id = _build_id(read_memory(base - link_base + vaddr, filesz), order)
    return link_base, build_id


def _build_id(notes, order):
    pos = 0
    while pos + 12 <= len(notes):
        namesz, descsz, kind = struct.unpack_from(order + "III", notes, pos)
        name_end = pos + 12 + (namesz + 3) // 4 * 4
        if kind == _NT_GNU_BUILD_ID and notes[pos + 12:pos + 12 + namesz] == b"GNU\0":
            return notes[name_end:name_end + descsz].hex()
        pos = name_end + (descsz + 3) // 4 * 4
    return ""
