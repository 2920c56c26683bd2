// The LLDB entry point: `plugin load libstrobe_lldb.so` registers one command, `strobe`, which
// hands its command line to the engine. Each debugger gets its own session.
#include "LldbTarget.h"
#include "ServerTap.h"
#include "command/Session.h"

#include <lldb/API/SBCommandInterpreter.h>
#include <lldb/API/SBCommandReturnObject.h>
#include <lldb/API/SBDebugger.h>

#include <fmt/format.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace lldb {
// The one symbol LLDB looks up; everything else stays hidden.
__attribute__((visibility("default"))) bool PluginInitialize(lldb::SBDebugger debugger);
} // namespace lldb

namespace strobe::lldb_plugin {
namespace {

// One strobe per debugger. The session goes first and under the session lock: ending a capture
// still talks to the target and may wait for the background thread.
struct Instance {
  explicit Instance(lldb::SBDebugger debugger)
      : target(debugger), session(std::make_unique<Session>(&target, "lldb")) {}
  ~Instance() {
    std::lock_guard lock(target.sessionMutex());
    session.reset();
    target.settle();
  }
  Instance(const Instance &) = delete;
  Instance &operator=(const Instance &) = delete;

  LldbTarget target;
  std::unique_ptr<Session> session;
};

class Registry {
public:
  // The debugger's strobe, if it has one yet.
  Instance *existing(lldb::user_id_t debuggerId) {
    std::lock_guard lock(mutex_);
    auto it = instances_.find(debuggerId);
    return it == instances_.end() ? nullptr : it->second.get();
  }
  Instance &instanceFor(lldb::SBDebugger debugger) {
    std::lock_guard lock(mutex_);
    std::unique_ptr<Instance> &slot = instances_[debugger.GetID()];
    if (!slot) {
      slot = std::make_unique<Instance>(debugger);
      debugger.AddDestroyCallback(&Registry::debuggerDestroyed, this);
    }
    return *slot;
  }

private:
  static void debuggerDestroyed(lldb::user_id_t id, void *self) {
    auto &registry = *static_cast<Registry *>(self);
    std::unique_ptr<Instance> ending; // ended outside the lock: ending a capture takes a while
    {
      std::lock_guard lock(registry.mutex_);
      auto it = registry.instances_.find(id);
      if (it == registry.instances_.end())
        return;
      ending = std::move(it->second);
      registry.instances_.erase(it);
    }
  }

  std::mutex mutex_;
  std::map<lldb::user_id_t, std::unique_ptr<Instance>> instances_;
};

// Never destroyed: sessions end with their debugger (destroy callback), and destroying them
// from static destructors at exit would run after liblldb has shut down.
Registry &registry() {
  static Registry *instance = new Registry;
  return *instance;
}

// LLDB has already split the line into arguments and removed their quotes; quote again what the
// engine's parser would otherwise split or unescape.
std::string joinArguments(char **arguments) {
  std::string line;
  for (char **arg = arguments; arg && *arg; ++arg) {
    std::string_view word(*arg);
    if (!line.empty())
      line += ' ';
    if (!word.empty() && word.find_first_of(" \t\n'\"\\") == word.npos) {
      line += word;
      continue;
    }
    line += '"';
    for (char c : word) {
      if (c == '"' || c == '\\')
        line += '\\';
      line += c;
    }
    line += '"';
  }
  return line;
}

// LLDB's commands that end the process or LLDB's hold on it take the target's API lock, then wait
// for the process's run lock. The background thread of `strobe start` holds that run lock in each
// SB call it makes at a sample stop, and such a call waits for the API lock: both would wait for
// ever. So these commands first end the capture as `strobe stop` does, which keeps it; the process
// then runs on as LLDB's alone and the command goes ahead (the callback returns false).
constexpr const char *kCommandsThatEndSampling[] = {"process detach", "process kill",
                                                    "process launch"};

bool endSamplingFirst(void *debuggerId, const char **argv) {
  Instance *instance = registry().existing(reinterpret_cast<uintptr_t>(debuggerId));
  if (!instance)
    return false;
  // argv: the command's words ("process", "detach"), then its arguments.
  const std::string command =
      argv[1] ? fmt::format("{} {}", argv[0], argv[1]) : std::string(argv[0]);
  lldb::SBCommandReturnObject result;
  std::string out;
  {
    LldbTarget::CommandScope scope(instance->target, result);
    if (!instance->target.samplingInBackground() ||
        !instance->session->endCapture(fmt::format("'{}' was given", command), out))
      return false;
    out += scope.takeTrailer();
  }
  instance->target.print(out);
  return false;
}

class StrobeCommand : public lldb::SBCommandPluginInterface {
public:
  bool DoExecute(lldb::SBDebugger debugger, char **arguments,
                 lldb::SBCommandReturnObject &result) override {
    Instance &instance = registry().instanceFor(debugger);
    std::string out, trailer;
    bool ok;
    {
      LldbTarget::CommandScope scope(instance.target, result);
      ok = instance.session->execute(joinArguments(arguments), out);
      trailer = scope.takeTrailer();
    }
    if (ok) {
      result.Printf("%s%s", out.c_str(), trailer.c_str());
      result.SetStatus(lldb::eReturnStatusSuccessFinishResult);
      return true;
    }
    // The engine ends a failure with one "error: ..." line; LLDB adds that prefix itself.
    constexpr std::string_view prefix = "error: ";
    std::string_view text = out;
    size_t at = text.rfind(prefix);
    if (at != text.npos) {
      result.Printf("%.*s", static_cast<int>(at), text.data());
      text.remove_prefix(at + prefix.size());
    }
    while (!text.empty() && text.back() == '\n')
      text.remove_suffix(1);
    std::string message(text);
    result.SetError(message.c_str());
    return false;
  }
};

} // namespace
} // namespace strobe::lldb_plugin

bool lldb::PluginInitialize(lldb::SBDebugger debugger) {
  lldb::SBCommandInterpreter interpreter = debugger.GetCommandInterpreter();
  // LLDB owns the command object. No auto-repeat: an empty line must not record again.
  lldb::SBCommand command = interpreter.AddCommand(
      "strobe", new strobe::lldb_plugin::StrobeCommand,
      "Sampling tracer: where does the time go? 'strobe help' lists the subcommands.",
      "strobe SUBCOMMAND [OPTIONS]", "");
  strobe::lldb_plugin::installServerTap(debugger);
  for (const char *name : strobe::lldb_plugin::kCommandsThatEndSampling)
    interpreter.SetCommandOverrideCallback(
        name, &strobe::lldb_plugin::endSamplingFirst,
        reinterpret_cast<void *>(static_cast<uintptr_t>(debugger.GetID())));
  return command.IsValid();
}
