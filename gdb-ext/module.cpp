// _strobe: the engine's Session for GDB's embedded Python, over the Target port of PyTarget.h.
// Port exposes that port to Python as the engine sees it, for the integration tests and for
// measuring it inside GDB.
#include "PyTarget.h"
#include "command/Commands.h"
#include "command/Session.h"

#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <chrono>

namespace py = pybind11;
using namespace strobe;
using strobe::gdb::PyTarget;

namespace {

// The Python-visible session: the target must outlive the session that points at it.
struct GdbSession {
  GdbSession(py::object target, bool direct)
      : target(std::move(target), direct), session(&this->target, "gdb") {}

  PyTarget target;
  Session session;
};

// Leaves GDB's view of the inferior current when an engine entry returns, however it returns.
struct GdbSynced {
  PyTarget &target;
  ~GdbSynced() {
    try {
      target.syncGdb();
    } catch (py::error_already_set &error) {
      error.discard_as_unraisable("strobe: refreshing GDB's registers");
    }
  }
};

py::tuple stopTuple(const StopEvent &e) {
  return py::make_tuple(e.kind, e.tid, e.signo, e.exitCode, e.description);
}

// A breakpoint whose handler does what a probe of the engine does: read the thread that hit it.
struct BreakpointProbe {
  std::unique_ptr<Breakpoint> breakpoint;
  uint64_t hits = 0;
  uint64_t handlerNs = 0;
  std::vector<uint64_t> lastStack;
};

// The port as the engine sees it. Every call leaves GDB's view current, as a command would.
struct Port {
  Port(py::object target, bool direct) : target(std::move(target), direct) {}

  template <typename F> auto synced(F &&f) {
    GdbSynced sync{target};
    return f();
  }

  PyTarget target;
};

} // namespace

PYBIND11_MODULE(_strobe, m) {
  m.doc() = "strobe's engine, driven by GDB's Python (see strobe_gdb)";

  py::enum_<StopEvent::Kind>(m, "StopKind")
      .value("Signal", StopEvent::Kind::Signal)
      .value("Breakpoint", StopEvent::Kind::Breakpoint)
      .value("Exited", StopEvent::Kind::Exited)
      .value("Step", StopEvent::Kind::Step)
      .value("Exec", StopEvent::Kind::Exec)
      .value("Delivering", StopEvent::Kind::Delivering)
      .value("Other", StopEvent::Kind::Other);

  py::enum_<Verdict>(m, "Verdict")
      .value("Resume", Verdict::Resume)
      .value("StopQuietly", Verdict::StopQuietly)
      .value("HandToUser", Verdict::HandToUser);

  py::class_<GdbSession>(m, "Session")
      .def(py::init<py::object, bool>(), py::arg("target"), py::arg("direct") = true,
           "`direct=False` answers every port call through GDB's Python API (to compare).")
      .def(
          "execute",
          [](GdbSession &self, std::string_view args) {
            GdbSynced sync{self.target};
            std::string out;
            bool ok = self.session.execute(args, out);
            return py::make_tuple(ok, out);
          },
          py::arg("args"), "Runs one `strobe` command line; returns (ok, text).")
      .def(
          "forget_process", [](GdbSession &self) { self.target.forgetProcess(); },
          "Drops what the direct paths cached about the process (its modules changed).")
      .def_static("sample_signal", &Session::sampleSignal, py::arg("emulated") = false);

  py::class_<BreakpointProbe>(m, "BreakpointProbe")
      .def_readonly("hits", &BreakpointProbe::hits)
      .def_property_readonly("handler_seconds",
                             [](const BreakpointProbe &p) { return p.handlerNs / 1e9; })
      .def_readonly("last_stack", &BreakpointProbe::lastStack)
      .def(
          "remove", [](BreakpointProbe &p) { p.breakpoint.reset(); },
          "Destroys the breakpoint as the engine does (its destructor removes it).");

  py::class_<Port>(m, "Port")
      .def(py::init<py::object, bool>(), py::arg("target"), py::arg("direct") = true)
      .def("threads", [](Port &p) { return p.synced([&] { return p.target.threads(); }); })
      .def("current_thread",
           [](Port &p) { return p.synced([&] { return p.target.currentThread(); }); })
      .def("read_thread",
           [](Port &p, uint64_t tid, unsigned depth) -> py::object {
             return p.synced([&]() -> py::object {
               ThreadSnapshot snapshot;
               if (!p.target.readThread(tid, depth, snapshot))
                 return py::none();
               return py::make_tuple(snapshot.regs, snapshot.stack);
             });
           })
      .def("read_extended",
           [](Port &p, uint64_t tid) -> py::object {
             return p.synced([&]() -> py::object {
               ExtendedSnapshot snapshot;
               if (!p.target.readExtended(tid, snapshot))
                 return py::none();
               return py::cast(snapshot.values);
             });
           })
      .def("resolve",
           [](Port &p, std::string_view location) {
             return p.synced([&] { return p.target.resolve(location); });
           })
      .def("data_address",
           [](Port &p, std::string_view name) -> py::object {
             return p.synced([&]() -> py::object {
               std::optional<DataLocation> place = p.target.dataAddress(name);
               if (!place)
                 return py::none();
               return py::make_tuple(place->address, place->size);
             });
           })
      .def("step_instruction",
           [](Port &p, uint64_t tid) {
             return p.synced([&] { return stopTuple(p.target.stepInstruction(tid)); });
           })
      .def(
          "step_instructions",
          [](Port &p, uint64_t tid, unsigned count) {
            return p.synced([&] {
              auto start = std::chrono::steady_clock::now();
              StopEvent last;
              unsigned steps = 0;
              while (steps < count) {
                last = p.target.stepInstruction(tid);
                if (last.kind != StopEvent::Kind::Step)
                  break;
                ++steps;
              }
              std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
              return py::make_tuple(steps, stopTuple(last), took.count());
            });
          },
          "Steps up to `count` instructions as a step trace would; (steps, last stop, seconds).")
      .def(
          "insert_breakpoint",
          [](Port &p, uint64_t address, unsigned depth,
             uint64_t removeAfter) -> std::unique_ptr<BreakpointProbe> {
            auto probe = std::make_unique<BreakpointProbe>();
            BreakpointProbe *state = probe.get();
            PyTarget *target = &p.target;
            probe->breakpoint = p.target.insertBreakpoint(address, [=](uint64_t tid) {
              auto start = std::chrono::steady_clock::now();
              ThreadSnapshot snapshot;
              if (target->readThread(tid, depth, snapshot))
                state->lastStack = snapshot.stack;
              ++state->hits;
              state->handlerNs += std::chrono::duration_cast<std::chrono::nanoseconds>(
                                      std::chrono::steady_clock::now() - start)
                                      .count();
              if (state->hits == removeAfter)
                state->breakpoint.reset(); // as a one-shot breakpoint of the engine does
            });
            if (!probe->breakpoint)
              return nullptr;
            return probe;
          },
          py::arg("address"), py::arg("depth"), py::arg("remove_after") = 0,
          // The probe's handler uses the port: the port must outlive it.
          py::keep_alive<0, 1>(),
          "A breakpoint whose handler reads the hitting thread with `depth` frames, and removes "
          "the breakpoint itself at hit `remove_after` (0: never).");

  m.def(
      "register_names",
      [](std::string_view architecture) {
        const RegisterTable &table = registerTable(requireIsa(architecture));
        return std::vector<std::string>(table.regs.begin(), table.regs.end());
      },
      py::arg("architecture"), "The registers a sample records, in the engine's order.");

  m.def(
      "extended_registers",
      [](std::string_view architecture) {
        std::vector<std::pair<std::string, unsigned>> names;
        for (const ExtRegister &r : registerTable(requireIsa(architecture)).ext)
          names.emplace_back(r.name, r.bytes);
        return names;
      },
      py::arg("architecture"), "(name, bytes) of the ISA's extended registers, in order.");

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
