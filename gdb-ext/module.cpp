// _strobe: the engine's Session for GDB's embedded Python. The Target port itself is written in
// Python against GDB's API (strobe_gdb/target.py); PyTarget forwards each port call to it.
//
// The protocol the Python object implements, one method per port call:
//   has_process() -> bool            isa() -> architecture name    pid() -> int
//   is_host_process() -> bool        threads() -> [tid]
//   read_thread(tid, depth) -> ([register], [pc, caller, ...]) or None when unreadable
//   modules() -> [(path, build_id, start, end, bias)]
//   symbolize(pc) -> (function, start, size, file, line, [inlined, innermost first])
//   read_memory(addr, size) -> bytes
//   arm(on_stop, signo) -> an object with close() and keep_signal_silent()
//   run_until_user_stop() -> (StopKind, tid, signo, exit_code, description)
//   resume_in_background()           is_running() -> bool          print(text)
//
// Every call reaches the engine from GDB's thread with the GIL held (a command, or a stop GDB is
// handling), and the engine's timer thread never calls the port; the GIL is still taken in each
// forwarder so that the trampoline is correct on its own.
#include "command/Commands.h"
#include "command/Session.h"

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>

namespace py = pybind11;
using namespace strobe;

namespace {

// Registers arrive as Python ints, some of them signed (orig_rax is -1 outside a system call);
// keep their bits.
void assignWords(py::handle sequence, std::vector<uint64_t> &out) {
  out.clear();
  for (py::handle item : sequence) {
    uint64_t word = PyLong_AsUnsignedLongLongMask(item.ptr());
    if (word == ~uint64_t{0} && PyErr_Occurred())
      throw py::error_already_set();
    out.push_back(word);
  }
}

class PyArming final : public Arming {
public:
  explicit PyArming(py::object handle) : handle_(std::move(handle)) {}

  ~PyArming() override {
    py::gil_scoped_acquire gil;
    py::object handle = std::move(handle_); // released while the GIL is still held
    try {
      handle.attr("close")();
    } catch (py::error_already_set &error) {
      error.discard_as_unraisable("strobe: undoing the sampling setup");
    }
  }

  void keepSignalSilent() override {
    py::gil_scoped_acquire gil;
    handle_.attr("keep_signal_silent")();
  }

private:
  py::object handle_;
};

class PyTarget final : public Target {
public:
  explicit PyTarget(py::object impl) : impl_(std::move(impl)) {}

  bool hasProcess() override { return call<bool>("has_process"); }

  Isa isa() override {
    auto name = call<std::string>("isa");
    if (auto isa = isaFromName(name))
      return *isa;
    throw std::runtime_error("strobe does not support the architecture '" + name + "'");
  }

  int pid() override { return call<int>("pid"); }
  bool isHostProcess() override { return call<bool>("is_host_process"); }
  std::vector<uint64_t> threads() override { return call<std::vector<uint64_t>>("threads"); }

  bool readThread(uint64_t tid, unsigned stackDepth, ThreadSnapshot &out) override {
    py::gil_scoped_acquire gil;
    py::object result = impl_.attr("read_thread")(tid, stackDepth);
    if (result.is_none())
      return false;
    auto snapshot = result.cast<py::tuple>();
    out.tid = tid;
    assignWords(snapshot[0], out.regs);
    assignWords(snapshot[1], out.stack);
    return true;
  }

  std::vector<ModuleInfo> modules() override {
    py::gil_scoped_acquire gil;
    std::vector<ModuleInfo> modules;
    for (py::handle row : impl_.attr("modules")()) {
      auto m = row.cast<py::tuple>();
      modules.push_back({m[0].cast<std::string>(), m[1].cast<std::string>(), m[2].cast<uint64_t>(),
                         m[3].cast<uint64_t>(), m[4].cast<uint64_t>()});
    }
    return modules;
  }

  SymbolInfo symbolize(uint64_t pc) override {
    py::gil_scoped_acquire gil;
    auto s = impl_.attr("symbolize")(pc).cast<py::tuple>();
    return {s[0].cast<std::string>(), s[1].cast<uint64_t>(), s[2].cast<uint64_t>(),
            s[3].cast<std::string>(), s[4].cast<uint32_t>(), s[5].cast<std::vector<std::string>>()};
  }

  std::vector<uint8_t> readMemory(uint64_t addr, size_t size) override {
    py::gil_scoped_acquire gil;
    auto bytes = impl_.attr("read_memory")(addr, size).cast<std::string>();
    return {bytes.begin(), bytes.end()};
  }

  std::unique_ptr<Arming> arm(Session &session, int signo) override {
    py::gil_scoped_acquire gil;
    // The engine owns the arming and destroys it before the session, so `session` outlives
    // every call of on_stop that the Python side can make.
    py::cpp_function onStop([&session](StopEvent::Kind kind, uint64_t tid, int signo, int exitCode,
                                       std::string description) {
      return session.onStop({kind, tid, signo, exitCode, std::move(description)});
    });
    return std::make_unique<PyArming>(impl_.attr("arm")(onStop, signo));
  }

  StopEvent runUntilUserStop() override {
    py::gil_scoped_acquire gil;
    auto e = impl_.attr("run_until_user_stop")().cast<py::tuple>();
    return {e[0].cast<StopEvent::Kind>(), e[1].cast<uint64_t>(), e[2].cast<int>(), e[3].cast<int>(),
            e[4].cast<std::string>()};
  }

  void resumeInBackground() override { call<void>("resume_in_background"); }
  bool isRunning() override { return call<bool>("is_running"); }
  void print(std::string_view text) override { call<void>("print", text); }

private:
  template <typename R, typename... Args> R call(const char *method, Args &&...args) {
    py::gil_scoped_acquire gil;
    py::object result = impl_.attr(method)(std::forward<Args>(args)...);
    if constexpr (!std::is_void_v<R>)
      return result.cast<R>();
  }

  py::object impl_;
};

// The Python-visible session: the target must outlive the session that points at it.
struct GdbSession {
  explicit GdbSession(py::object target)
      : target(std::move(target)), session(&this->target, "gdb") {}

  PyTarget target;
  Session session;
};

} // namespace

PYBIND11_MODULE(_strobe, m) {
  m.doc() = "strobe's engine, driven by GDB's Python (see strobe_gdb)";

  py::enum_<StopEvent::Kind>(m, "StopKind")
      .value("Signal", StopEvent::Kind::Signal)
      .value("Breakpoint", StopEvent::Kind::Breakpoint)
      .value("Exited", StopEvent::Kind::Exited)
      .value("Other", StopEvent::Kind::Other);

  py::enum_<Verdict>(m, "Verdict")
      .value("Resume", Verdict::Resume)
      .value("StopQuietly", Verdict::StopQuietly)
      .value("HandToUser", Verdict::HandToUser);

  py::class_<GdbSession>(m, "Session")
      .def(py::init<py::object>(), py::arg("target"))
      .def(
          "execute",
          [](GdbSession &self, std::string_view args) {
            std::string out;
            bool ok = self.session.execute(args, out);
            return py::make_tuple(ok, out);
          },
          py::arg("args"), "Runs one `strobe` command line; returns (ok, text).")
      .def_static("sample_signal", &Session::sampleSignal);

  m.def(
      "register_names",
      [](std::string_view architecture) {
        auto isa = isaFromName(architecture);
        if (!isa)
          throw py::value_error("strobe does not support the architecture '" +
                                std::string(architecture) + "'");
        return std::vector<std::string>(registerTable(*isa).regs.begin(),
                                        registerTable(*isa).regs.end());
      },
      py::arg("architecture"), "The registers a sample records, in the engine's order.");

  m.def(
      "subcommands",
      [] {
        py::list result;
        for (const SubcommandSpec &spec : subcommands()) {
          py::list options;
          for (const OptionSpec &option : spec.options)
            options.append("--" + option.name);
          result.append(py::make_tuple(spec.name, spec.positionals, options));
        }
        return result;
      },
      "(name, positionals, [--option]) of every subcommand, for completion.");
}
