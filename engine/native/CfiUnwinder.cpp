#include "native/CfiUnwinder.h"

#include "native/ByteCursor.h"

#include <optional>
#include <span>
#include <vector>

namespace strobe {
namespace {

// Pointer encodings (LSB Core, .eh_frame).
constexpr uint8_t kOmit = 0xff;
constexpr uint8_t kFormatMask = 0x0f, kApplicationMask = 0x70, kIndirect = 0x80;
constexpr uint8_t kPcRel = 0x10, kDataRel = 0x30;
constexpr uint8_t kDataRelSdata4 = 0x3b; // the .eh_frame_hdr search table every linker writes

constexpr unsigned kMaxRememberedRows = 16;
constexpr unsigned kMaxExpressionSteps = 1000;

struct Rule {
  enum Kind : uint8_t {
    Unspecified,
    Undefined,
    Same,
    Offset,
    ValOffset,
    Register,
    Expression,
    ValExpression
  } kind = Unspecified;
  int64_t n = 0; // offset, or the register of Register
  std::span<const uint8_t> expression;
};

struct Row {
  bool cfaIsExpression = false;
  unsigned cfaRegister = 0;
  int64_t cfaOffset = 0;
  std::span<const uint8_t> cfaExpression;
  std::array<Rule, FrameRegs::kCount> rules{};
};

struct Cie {
  uint64_t codeAlign = 1;
  int64_t dataAlign = 1;
  unsigned returnColumn = 0;
  uint8_t fdeEncoding = 0;
  bool hasAugmentationData = false;
  bool signalFrame = false;
  std::span<const uint8_t> instructions;
  uint64_t instructionsAddress = 0;
};

// A span of the image with the link-time address of its first byte, for pc-relative pointers.
struct Located {
  std::span<const uint8_t> bytes;
  uint64_t address = 0;
};

std::optional<uint64_t> readEncoded(ByteCursor &cursor, uint8_t encoding, uint64_t spanAddress,
                                    uint64_t dataBase) {
  if (encoding == kOmit || (encoding & kIndirect))
    return std::nullopt;
  uint64_t fieldAddress = spanAddress + cursor.pos();
  uint64_t value = 0;
  switch (encoding & kFormatMask) {
  case 0x00:
    value = cursor.read<uint64_t>();
    break;
  case 0x01:
    value = cursor.uleb();
    break;
  case 0x02:
    value = cursor.read<uint16_t>();
    break;
  case 0x03:
    value = cursor.read<uint32_t>();
    break;
  case 0x04:
    value = cursor.read<uint64_t>();
    break;
  case 0x09:
    value = static_cast<uint64_t>(cursor.sleb());
    break;
  case 0x0a:
    value = static_cast<uint64_t>(int64_t{cursor.read<int16_t>()});
    break;
  case 0x0b:
    value = static_cast<uint64_t>(int64_t{cursor.read<int32_t>()});
    break;
  case 0x0c:
    value = cursor.read<uint64_t>();
    break;
  default:
    return std::nullopt;
  }
  switch (encoding & kApplicationMask) {
  case 0x00:
    break;
  case kPcRel:
    value += fieldAddress;
    break;
  case kDataRel:
    value += dataBase;
    break;
  default:
    return std::nullopt;
  }
  return cursor.ok() ? std::optional<uint64_t>(value) : std::nullopt;
}

// The CIE or FDE record at `address`: its contents after the length, and its id field's address.
struct Record {
  Located body; // from the id field to the end of the record
  uint64_t id = 0;
  size_t afterId = 0; // offset in body where the id field ends
};

std::optional<Record> readRecord(ElfImage &image, uint64_t address) {
  std::span<const uint8_t> from = image.bytesFrom(address);
  ByteCursor cursor(from);
  uint64_t length = cursor.read<uint32_t>();
  bool wide = length == 0xffffffff;
  if (wide)
    length = cursor.read<uint64_t>();
  if (!cursor.ok() || length == 0 || length > from.size() - cursor.pos())
    return std::nullopt;
  Record record;
  record.body = {from.subspan(cursor.pos(), length), address + cursor.pos()};
  ByteCursor id(record.body.bytes);
  record.id = wide ? id.read<uint64_t>() : id.read<uint32_t>();
  record.afterId = id.pos();
  if (!id.ok())
    return std::nullopt;
  return record;
}

std::optional<Cie> parseCie(ElfImage &image, uint64_t address) {
  std::optional<Record> record = readRecord(image, address);
  if (!record || record->id != 0)
    return std::nullopt;
  ByteCursor cursor(record->body.bytes, record->afterId);
  Cie cie;
  auto version = cursor.read<uint8_t>();
  std::string_view augmentation = cursor.cstring();
  if (version == 4) {
    cursor.skip(2); // address size, segment selector size
  } else if (version != 1 && version != 3) {
    return std::nullopt;
  }
  cie.codeAlign = cursor.uleb();
  cie.dataAlign = cursor.sleb();
  cie.returnColumn = version == 1 ? cursor.read<uint8_t>() : static_cast<unsigned>(cursor.uleb());
  if (!augmentation.empty() && augmentation[0] == 'z') {
    cie.hasAugmentationData = true;
    uint64_t length = cursor.uleb();
    size_t end = cursor.pos() + length;
    for (char c : augmentation.substr(1)) {
      if (c == 'R') {
        cie.fdeEncoding = cursor.read<uint8_t>();
      } else if (c == 'P') {
        uint8_t encoding = cursor.read<uint8_t>();
        // The personality routine is not needed; only its size matters.
        if (!readEncoded(cursor, encoding & ~kIndirect & ~kApplicationMask, 0, 0))
          return std::nullopt;
      } else if (c == 'L') {
        cursor.read<uint8_t>();
      } else if (c == 'S') {
        cie.signalFrame = true;
      } else if (c != 'B' && c != 'G') {
        break; // unknown letters: their data is skipped through the length
      }
    }
    cursor.seek(end);
  } else if (!augmentation.empty()) {
    return std::nullopt; // "eh" and other pre-'z' forms carry data of unknown size
  }
  if (!cursor.ok() || cie.returnColumn >= FrameRegs::kCount)
    return std::nullopt;
  cie.instructions = record->body.bytes.subspan(cursor.pos());
  cie.instructionsAddress = record->body.address + cursor.pos();
  return cie;
}

// Runs CFA instructions up to (and including) the row for `target`.
class CfaProgram {
public:
  CfaProgram(const Cie &cie, uint64_t target) : cie_(cie), target_(target) {}

  bool run(Located instructions, uint64_t startLoc, Row &row, const Row &initial) {
    ByteCursor cursor(instructions.bytes);
    uint64_t loc = startLoc;
    std::vector<Row> remembered;
    auto advance = [&](uint64_t delta) {
      loc += delta * cie_.codeAlign;
      return loc <= target_;
    };
    auto rule = [&](uint64_t reg) -> Rule * {
      return reg < FrameRegs::kCount ? &row.rules[reg] : nullptr;
    };
    auto setRule = [&](uint64_t reg, Rule r) {
      if (Rule *slot = rule(reg))
        *slot = r;
    };
    auto block = [&]() {
      uint64_t length = cursor.uleb();
      size_t start = cursor.pos();
      cursor.skip(length);
      return cursor.ok() ? instructions.bytes.subspan(start, length) : std::span<const uint8_t>{};
    };
    while (!cursor.atEnd()) {
      auto op = cursor.read<uint8_t>();
      if (!cursor.ok())
        return false;
      uint8_t high = op & 0xc0, low = op & 0x3f;
      if (high == 0x40) {
        if (!advance(low))
          return true;
        continue;
      }
      if (high == 0x80) {
        setRule(low, {Rule::Offset, static_cast<int64_t>(cursor.uleb()) * cie_.dataAlign, {}});
        continue;
      }
      if (high == 0xc0) {
        if (low < FrameRegs::kCount)
          row.rules[low] = initial.rules[low];
        continue;
      }
      switch (op) {
      case 0x00:
        break;     // nop
      case 0x01: { // set_loc
        auto address = readEncoded(cursor, cie_.fdeEncoding, instructions.address, 0);
        if (!address)
          return false;
        if (*address > target_)
          return true;
        loc = *address;
        break;
      }
      case 0x02:
        if (!advance(cursor.read<uint8_t>()))
          return true;
        break;
      case 0x03:
        if (!advance(cursor.read<uint16_t>()))
          return true;
        break;
      case 0x04:
        if (!advance(cursor.read<uint32_t>()))
          return true;
        break;
      case 0x05: { // offset_extended
        uint64_t reg = cursor.uleb();
        setRule(reg, {Rule::Offset, static_cast<int64_t>(cursor.uleb()) * cie_.dataAlign, {}});
        break;
      }
      case 0x06: { // restore_extended
        uint64_t reg = cursor.uleb();
        if (reg < FrameRegs::kCount)
          row.rules[reg] = initial.rules[reg];
        break;
      }
      case 0x07:
        setRule(cursor.uleb(), {Rule::Undefined, 0, {}});
        break;
      case 0x08:
        setRule(cursor.uleb(), {Rule::Same, 0, {}});
        break;
      case 0x09: { // register
        uint64_t reg = cursor.uleb();
        setRule(reg, {Rule::Register, static_cast<int64_t>(cursor.uleb()), {}});
        break;
      }
      case 0x0a: // remember_state
        if (remembered.size() >= kMaxRememberedRows)
          return false;
        remembered.push_back(row);
        break;
      case 0x0b: // restore_state, CFA rule included (as GCC's epilogues and GDB assume)
        if (remembered.empty())
          return false;
        row = remembered.back();
        remembered.pop_back();
        break;
      case 0x0c: // def_cfa
        row.cfaRegister = static_cast<unsigned>(cursor.uleb());
        row.cfaOffset = static_cast<int64_t>(cursor.uleb());
        row.cfaIsExpression = false;
        break;
      case 0x0d: // def_cfa_register
        row.cfaRegister = static_cast<unsigned>(cursor.uleb());
        row.cfaIsExpression = false;
        break;
      case 0x0e:
        row.cfaOffset = static_cast<int64_t>(cursor.uleb());
        break;
      case 0x0f: // def_cfa_expression
        row.cfaExpression = block();
        row.cfaIsExpression = true;
        break;
      case 0x10: { // expression
        uint64_t reg = cursor.uleb();
        setRule(reg, {Rule::Expression, 0, block()});
        break;
      }
      case 0x11: { // offset_extended_sf
        uint64_t reg = cursor.uleb();
        setRule(reg, {Rule::Offset, cursor.sleb() * cie_.dataAlign, {}});
        break;
      }
      case 0x12: // def_cfa_sf
        row.cfaRegister = static_cast<unsigned>(cursor.uleb());
        row.cfaOffset = cursor.sleb() * cie_.dataAlign;
        row.cfaIsExpression = false;
        break;
      case 0x13:
        row.cfaOffset = cursor.sleb() * cie_.dataAlign;
        break;
      case 0x14: { // val_offset
        uint64_t reg = cursor.uleb();
        setRule(reg, {Rule::ValOffset, static_cast<int64_t>(cursor.uleb()) * cie_.dataAlign, {}});
        break;
      }
      case 0x15: { // val_offset_sf
        uint64_t reg = cursor.uleb();
        setRule(reg, {Rule::ValOffset, cursor.sleb() * cie_.dataAlign, {}});
        break;
      }
      case 0x16: { // val_expression
        uint64_t reg = cursor.uleb();
        setRule(reg, {Rule::ValExpression, 0, block()});
        break;
      }
      case 0x2e:
        cursor.uleb();
        break;     // GNU_args_size
      case 0x2f: { // GNU_negative_offset_extended
        uint64_t reg = cursor.uleb();
        setRule(reg, {Rule::Offset, -static_cast<int64_t>(cursor.uleb()) * cie_.dataAlign, {}});
        break;
      }
      default:
        // Includes 0x2d (AArch64 return-address signing state / SPARC window save): GDB's
        // unwinder knows what to do with a signed return address; this one does not.
        return false;
      }
      if (!cursor.ok())
        return false;
    }
    return true;
  }

private:
  const Cie &cie_;
  uint64_t target_;
};

// DWARF expression evaluation over a frame's registers and the inferior's memory.
std::optional<uint64_t> evaluate(std::span<const uint8_t> expression, const FrameRegs &regs,
                                 const ReadMemory &read, std::optional<uint64_t> initial) {
  std::vector<uint64_t> stack;
  if (initial)
    stack.push_back(*initial);
  ByteCursor cursor(expression);
  auto pop = [&](uint64_t &out) {
    if (stack.empty())
      return false;
    out = stack.back();
    stack.pop_back();
    return true;
  };
  for (unsigned steps = 0; !cursor.atEnd(); ++steps) {
    if (steps > kMaxExpressionSteps)
      return std::nullopt;
    auto op = cursor.read<uint8_t>();
    uint64_t a = 0, b = 0;
    if (op >= 0x30 && op <= 0x4f) { // lit0-31
      stack.push_back(op - 0x30);
      continue;
    }
    if (op >= 0x70 && op <= 0x8f) { // breg0-31
      unsigned reg = op - 0x70;
      int64_t offset = cursor.sleb();
      if (reg >= FrameRegs::kCount || !regs.known[reg])
        return std::nullopt;
      stack.push_back(regs.value[reg] + offset);
      continue;
    }
    switch (op) {
    case 0x03:
      stack.push_back(cursor.read<uint64_t>());
      break;   // addr
    case 0x06: // deref
      if (!pop(a) || !read(a, &b, 8))
        return std::nullopt;
      stack.push_back(b);
      break;
    case 0x08:
      stack.push_back(cursor.read<uint8_t>());
      break;
    case 0x09:
      stack.push_back(static_cast<uint64_t>(int64_t{cursor.read<int8_t>()}));
      break;
    case 0x0a:
      stack.push_back(cursor.read<uint16_t>());
      break;
    case 0x0b:
      stack.push_back(static_cast<uint64_t>(int64_t{cursor.read<int16_t>()}));
      break;
    case 0x0c:
      stack.push_back(cursor.read<uint32_t>());
      break;
    case 0x0d:
      stack.push_back(static_cast<uint64_t>(int64_t{cursor.read<int32_t>()}));
      break;
    case 0x0e:
    case 0x0f:
      stack.push_back(cursor.read<uint64_t>());
      break;
    case 0x10:
      stack.push_back(cursor.uleb());
      break;
    case 0x11:
      stack.push_back(static_cast<uint64_t>(cursor.sleb()));
      break;
    case 0x12: // dup
      if (stack.empty())
        return std::nullopt;
      stack.push_back(stack.back());
      break;
    case 0x13: // drop
      if (!pop(a))
        return std::nullopt;
      break;
    case 0x14: // over
      if (stack.size() < 2)
        return std::nullopt;
      stack.push_back(stack[stack.size() - 2]);
      break;
    case 0x15: { // pick
      uint8_t index = cursor.read<uint8_t>();
      if (index >= stack.size())
        return std::nullopt;
      stack.push_back(stack[stack.size() - 1 - index]);
      break;
    }
    case 0x16: // swap
      if (stack.size() < 2)
        return std::nullopt;
      std::swap(stack[stack.size() - 1], stack[stack.size() - 2]);
      break;
    case 0x17: // rot
      if (stack.size() < 3)
        return std::nullopt;
      std::rotate(stack.end() - 3, stack.end() - 1, stack.end());
      break;
    case 0x19: // abs
      if (!pop(a))
        return std::nullopt;
      stack.push_back(static_cast<int64_t>(a) < 0 ? -a : a);
      break;
    case 0x1f: // neg
      if (!pop(a))
        return std::nullopt;
      stack.push_back(-a);
      break;
    case 0x20: // not
      if (!pop(a))
        return std::nullopt;
      stack.push_back(~a);
      break;
    case 0x23: // plus_uconst
      if (!pop(a))
        return std::nullopt;
      stack.push_back(a + cursor.uleb());
      break;
    case 0x28:   // bra
    case 0x2f: { // skip
      auto offset = cursor.read<int16_t>();
      bool jump = true;
      if (op == 0x28) {
        if (!pop(a))
          return std::nullopt;
        jump = a != 0;
      }
      if (jump)
        cursor.seek(cursor.pos() + offset);
      break;
    }
    case 0x92: { // bregx
      uint64_t reg = cursor.uleb();
      int64_t offset = cursor.sleb();
      if (reg >= FrameRegs::kCount || !regs.known[reg])
        return std::nullopt;
      stack.push_back(regs.value[reg] + offset);
      break;
    }
    case 0x94: { // deref_size
      uint8_t size = cursor.read<uint8_t>();
      b = 0;
      if (size > 8 || !pop(a) || !read(a, &b, size))
        return std::nullopt;
      stack.push_back(b);
      break;
    }
    case 0x96:
      break; // nop
    default: {
      // The binary operators.
      if (!pop(b) || !pop(a))
        return std::nullopt;
      auto sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
      switch (op) {
      case 0x1a:
        stack.push_back(a & b);
        break;
      case 0x1b:
        if (sb == 0)
          return std::nullopt;
        stack.push_back(static_cast<uint64_t>(sa / sb));
        break;
      case 0x1c:
        stack.push_back(a - b);
        break;
      case 0x1d:
        if (b == 0)
          return std::nullopt;
        stack.push_back(a % b);
        break;
      case 0x1e:
        stack.push_back(a * b);
        break;
      case 0x21:
        stack.push_back(a | b);
        break;
      case 0x22:
        stack.push_back(a + b);
        break;
      case 0x24:
        stack.push_back(b < 64 ? a << b : 0);
        break;
      case 0x25:
        stack.push_back(b < 64 ? a >> b : 0);
        break;
      case 0x26:
        stack.push_back(static_cast<uint64_t>(b < 64 ? sa >> b : (sa < 0 ? -1 : 0)));
        break;
      case 0x27:
        stack.push_back(a ^ b);
        break;
      case 0x29:
        stack.push_back(sa == sb);
        break;
      case 0x2a:
        stack.push_back(sa >= sb);
        break;
      case 0x2b:
        stack.push_back(sa > sb);
        break;
      case 0x2c:
        stack.push_back(sa <= sb);
        break;
      case 0x2d:
        stack.push_back(sa < sb);
        break;
      case 0x2e:
        stack.push_back(sa != sb);
        break;
      default:
        return std::nullopt;
      }
    }
    }
    if (!cursor.ok())
      return std::nullopt;
  }
  if (!cursor.ok() || stack.empty())
    return std::nullopt;
  return stack.back();
}

// The FDE covering `pc` (link-time), through .eh_frame_hdr's sorted table.
std::optional<uint64_t> findFde(ElfImage &image, uint64_t pc) {
  std::optional<uint64_t> hdr = image.ehFrameHdr();
  if (!hdr)
    return std::nullopt;
  std::span<const uint8_t> bytes = image.bytesFrom(*hdr);
  ByteCursor cursor(bytes);
  auto version = cursor.read<uint8_t>();
  auto framePointerEncoding = cursor.read<uint8_t>();
  auto countEncoding = cursor.read<uint8_t>();
  auto tableEncoding = cursor.read<uint8_t>();
  if (!cursor.ok() || version != 1 || tableEncoding != kDataRelSdata4 ||
      !readEncoded(cursor, framePointerEncoding, *hdr, *hdr))
    return std::nullopt;
  std::optional<uint64_t> count = readEncoded(cursor, countEncoding, *hdr, *hdr);
  if (!count || *count == 0 || *count > (bytes.size() - cursor.pos()) / 8)
    return std::nullopt;
  size_t table = cursor.pos();
  auto entry = [&](uint64_t i, unsigned field) {
    ByteCursor c(bytes, table + i * 8 + field * 4);
    return *hdr + static_cast<uint64_t>(int64_t{c.read<int32_t>()});
  };
  // The last entry whose initial location is <= pc.
  uint64_t lo = 0, hi = *count;
  while (hi - lo > 1) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (entry(mid, 0) <= pc)
      lo = mid;
    else
      hi = mid;
  }
  if (entry(lo, 0) > pc)
    return std::nullopt;
  return entry(lo, 1);
}

} // namespace

CfiUnwinder::CfiUnwinder(Isa isa)
    : sp_(isa == Isa::AArch64 ? 31 : 7), pcColumn_(isa == Isa::AArch64 ? 32 : 16) {}

CfiUnwinder::Result CfiUnwinder::step(ElfImage &image, uint64_t bias, Frame &frame, Frame &caller,
                                      const ReadMemory &read) const {
  uint64_t pc = (frame.exactPc ? frame.pc : frame.pc - 1) - bias;
  std::optional<uint64_t> fdeAddress = findFde(image, pc);
  if (!fdeAddress)
    return Result::Unknown;
  std::optional<Record> fde = readRecord(image, *fdeAddress);
  if (!fde || fde->id == 0)
    return Result::Unknown;
  // The id is the distance back from the id field to the CIE.
  std::optional<Cie> cie = parseCie(image, fde->body.address - fde->id);
  if (!cie)
    return Result::Unknown;
  ByteCursor cursor(fde->body.bytes, fde->afterId);
  auto begin = readEncoded(cursor, cie->fdeEncoding, fde->body.address, 0);
  auto range = readEncoded(cursor, cie->fdeEncoding & kFormatMask, fde->body.address, 0);
  if (!begin || !range || pc < *begin || pc - *begin >= *range)
    return Result::Unknown;
  if (cie->hasAugmentationData)
    cursor.skip(cursor.uleb());
  if (!cursor.ok())
    return Result::Unknown;

  Row initial;
  if (!CfaProgram(*cie, pc).run({cie->instructions, cie->instructionsAddress}, *begin, initial,
                                initial))
    return Result::Unknown;
  Row row = initial;
  Located instructions{fde->body.bytes.subspan(cursor.pos()), fde->body.address + cursor.pos()};
  if (!CfaProgram(*cie, pc).run(instructions, *begin, row, initial))
    return Result::Unknown;

  const FrameRegs &regs = frame.regs;
  uint64_t cfa = 0;
  if (row.cfaIsExpression) {
    auto value = evaluate(row.cfaExpression, regs, read, std::nullopt);
    if (!value)
      return Result::Unknown;
    cfa = *value;
  } else {
    if (row.cfaRegister >= FrameRegs::kCount || !regs.known[row.cfaRegister])
      return Result::Unknown;
    cfa = regs.value[row.cfaRegister] + row.cfaOffset;
  }
  frame.cfa = cfa;

  caller.regs = FrameRegs{};
  for (unsigned reg = 0; reg < FrameRegs::kCount; ++reg) {
    const Rule &rule = row.rules[reg];
    uint64_t value = 0;
    switch (rule.kind) {
    case Rule::Unspecified:
    case Rule::Same:
      if (regs.known[reg])
        caller.regs.set(reg, regs.value[reg]);
      break;
    case Rule::Undefined:
      break;
    case Rule::Offset:
      if (!read(cfa + rule.n, &value, 8))
        return Result::Unknown;
      caller.regs.set(reg, value);
      break;
    case Rule::ValOffset:
      caller.regs.set(reg, cfa + rule.n);
      break;
    case Rule::Register:
      if (rule.n >= 0 && rule.n < FrameRegs::kCount && regs.known[rule.n])
        caller.regs.set(reg, regs.value[rule.n]);
      break;
    case Rule::Expression: {
      auto address = evaluate(rule.expression, regs, read, cfa);
      if (!address || !read(*address, &value, 8))
        return Result::Unknown;
      caller.regs.set(reg, value);
      break;
    }
    case Rule::ValExpression: {
      auto v = evaluate(rule.expression, regs, read, cfa);
      if (!v)
        return Result::Unknown;
      caller.regs.set(reg, *v);
      break;
    }
    }
  }
  // The CFA is by definition the stack pointer of the caller at the call.
  Rule::Kind spRule = row.rules[sp_].kind;
  if (spRule == Rule::Unspecified || spRule == Rule::Same)
    caller.regs.set(sp_, cfa);

  if (row.rules[cie->returnColumn].kind == Rule::Undefined)
    return Result::Outermost; // e.g. _start and a thread's start routine mark the stack's end
  if (!caller.regs.known[cie->returnColumn])
    return Result::Unknown;
  uint64_t returnAddress = caller.regs.value[cie->returnColumn];
  if (returnAddress == 0)
    return Result::Outermost;
  caller.pc = returnAddress;
  caller.regs.set(pcColumn_, returnAddress);
  caller.exactPc = cie->signalFrame; // above a signal trampoline is the interrupted frame itself
  return Result::Caller;
}

FrameRegs frameRegisters(Isa isa, const std::vector<uint64_t> &regs) {
  FrameRegs frame;
  if (isa == Isa::AArch64) {
    for (unsigned i = 0; i < 32 && i < regs.size(); ++i) // x0-x30, sp
      frame.set(i, regs[i]);
    if (regs.size() > 32)
      frame.set(32, regs[32]); // pc
    return frame;
  }
  // rax rbx rcx rdx rsi rdi rbp rsp r8-r15 rip, in the engine's order, to DWARF numbers.
  constexpr std::array<unsigned, 17> kDwarf = {0, 3,  2,  1,  4,  5,  6,  7, 8,
                                               9, 10, 11, 12, 13, 14, 15, 16};
  for (unsigned i = 0; i < kDwarf.size() && i < regs.size(); ++i)
    frame.set(kDwarf[i], regs[i]);
  return frame;
}

} // namespace strobe
