#include "isa/CapstoneHandle.h"

#include <capstone/capstone.h>
#include <fmt/format.h>
#include <stdexcept>
#include <type_traits>

namespace strobe {

// The header keeps Capstone out of its includers by naming the handle's underlying type.
static_assert(std::is_same_v<csh, size_t>);

CapstoneHandle::CapstoneHandle(Isa isa) {
  cs_arch arch = isa == Isa::X86_64 ? CS_ARCH_X86 : CS_ARCH_ARM64;
  cs_mode mode = isa == Isa::X86_64 ? CS_MODE_64 : CS_MODE_ARM;
  if (cs_err err = cs_open(arch, mode, &handle_); err != CS_ERR_OK)
    throw std::runtime_error(fmt::format("capstone: {}", cs_strerror(err)));
  // Details give the operands: branch destinations, memory operands.
  cs_option(handle_, CS_OPT_DETAIL, CS_OPT_ON);
  insn_ = cs_malloc(handle_);
  if (!insn_) {
    cs_close(&handle_);
    throw std::runtime_error("capstone: cannot allocate an instruction");
  }
}

CapstoneHandle::~CapstoneHandle() {
  cs_free(insn_, 1);
  cs_close(&handle_);
}

const cs_insn *CapstoneHandle::decode(std::span<const uint8_t> bytes, uint64_t address) {
  const uint8_t *code = bytes.data();
  size_t size = bytes.size();
  return cs_disasm_iter(handle_, &code, &size, &address, insn_) ? insn_ : nullptr;
}

} // namespace strobe
