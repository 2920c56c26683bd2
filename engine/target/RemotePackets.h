// What strobe reads of GDB remote protocol replies (gdbserver's), for a front-end that steps a
// remote thread with the stub's own packets: a stop reply, a register block (`g`) and a memory
// read (`m`). Replies arrive as the text of the packet, without framing.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace strobe {

struct RemoteStop {
  enum class Kind {
    Signal,     // T or S: the thread stopped with `signo` (the protocol's numbering)
    Exited,     // W: the process exited with `code`
    Terminated, // X: a signal (`signo`) killed the process
  };
  Kind kind = Kind::Signal;
  int signo = 0;
  int code = 0;
  std::string thread; // the T reply's thread field ("p1f.20" or "20"); empty when absent
};

// Nullopt for anything that is no stop reply (an error, an empty reply for an unknown packet).
std::optional<RemoteStop> parseStopReply(std::string_view reply);

// Where one register sits in the stub's register block: byte offset and size.
struct RemoteRegister {
  size_t offset = 0;
  size_t size = 0;
};

// The register's little-endian bytes as `words` 64-bit words (low first), zero-extended: false
// when the block is too short, or the stub marks the register unavailable ('x') or sent no hex.
bool readRegisterWords(std::string_view block, RemoteRegister where, unsigned words, uint64_t *out);

// The bytes of an `m` reply; nullopt for an error reply or text that is not hex.
std::optional<std::vector<uint8_t>> decodeHexBytes(std::string_view reply);

} // namespace strobe
