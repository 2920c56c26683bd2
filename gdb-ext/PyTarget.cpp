#include "PyTarget.h"

#include "WaitTap.h"

#include "command/Session.h"
#include "target/Demangle.h"
#include "target/Location.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <utility>

namespace py = pybind11;

namespace strobe::gdb {
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

// A Python object whose close() undoes what it set up in GDB, called when the engine lets go.
class ClosedAtEnd {
public:
  ClosedAtEnd(py::object handle, const char *undoing)
      : handle_(std::move(handle)), undoing_(undoing) {}
  ~ClosedAtEnd() {
    py::gil_scoped_acquire gil;
    py::object handle = std::move(handle_); // released while the GIL is still held
    try {
      handle.attr("close")();
    } catch (py::error_already_set &error) {
      error.discard_as_unraisable(undoing_);
    }
  }
  ClosedAtEnd(const ClosedAtEnd &) = delete;
  ClosedAtEnd &operator=(const ClosedAtEnd &) = delete;
  py::object &operator*() { return handle_; }

private:
  py::object handle_;
  const char *undoing_;
};

class PyArming final : public Arming {
public:
  explicit PyArming(py::object handle)
      : handle_(std::move(handle), "strobe: undoing the sampling setup") {}

  ~PyArming() override {
    tap.reset(); // no stop is taken early once the engine has let go (before handle_ closes)
  }

  void keepSignalSilent() override {
    py::gil_scoped_acquire gil;
    (*handle_).attr("keep_signal_silent")();
  }

  bool stopsOneThread() const override { return tap && tap->armed(); }

  std::optional<WaitTap::Armed> tap;

private:
  ClosedAtEnd handle_;
};

class PyBreakpoint final : public Breakpoint {
public:
  explicit PyBreakpoint(py::object handle) : handle_(std::move(handle)) {}

  ~PyBreakpoint() override {
    py::gil_scoped_acquire gil;
    py::object handle = std::move(handle_);
    try {
      handle.attr("delete")();
    } catch (py::error_already_set &error) {
      error.discard_as_unraisable("strobe: removing a breakpoint");
    }
  }

private:
  py::object handle_;
};

// FILE:LINE (or any linespec GDB must read); a bare name is a function's symbol.
bool isFunctionName(std::string_view location) {
  return !location.empty() && location.find_first_of(": *+&()'\"") == std::string_view::npos;
}

// A direct step that ran, through gdbserver's packets or ptrace.
StopEvent steppedOne(uint64_t tid) {
  return {StopEvent::Kind::Step, tid, 0, 0, "stepped one instruction"};
}

} // namespace

PyTarget::PyTarget(py::object impl, bool direct) : impl_(std::move(impl)), direct_(direct) {}

template <typename... Args> py::object PyTarget::invoke(const char *method, Args &&...args) {
  try {
    return impl_.attr(method)(std::forward<Args>(args)...);
  } catch (py::error_already_set &error) {
    // GDB turns Ctrl-C into a KeyboardInterrupt that the next Python call raises, whichever
    // it is; as Interrupted it ends a long command the engine's way, keeping what it took.
    if (error.matches(PyExc_KeyboardInterrupt))
      throw Interrupted();
    throw;
  }
}

template <typename R, typename... Args> R PyTarget::call(const char *method, Args &&...args) {
  py::gil_scoped_acquire gil;
  py::object result = invoke(method, std::forward<Args>(args)...);
  if constexpr (!std::is_void_v<R>)
    return result.template cast<R>();
}

bool PyTarget::hasProcess() { return call<bool>("has_process"); }

Isa PyTarget::isa() { return requireIsa(call<std::string>("isa")); }

const std::optional<HostProcess> &PyTarget::hostProcess() {
  auto [pid, tid, program] = call<std::tuple<int, uint64_t, std::string>>("identity");
  return hosts_.find(pid, tid, program);
}

int PyTarget::pid() {
  hostProcess();
  return hosts_.pid();
}

bool PyTarget::isHostProcess() { return hostProcess().has_value(); }
bool PyTarget::isEmulated() {
  const std::optional<HostProcess> &host = hostProcess();
  return host && host->emulated;
}
std::vector<uint64_t> PyTarget::threads() {
  if (routine_.active())
    return routine_.threads();
  return call<std::vector<uint64_t>>("threads");
}
uint64_t PyTarget::currentThread() { return call<uint64_t>("current_thread"); }

NativeTracee *PyTarget::native() {
  // An emulator's registers and memory are its own, not the program's.
  const std::optional<HostProcess> *host = direct_ ? &hostProcess() : nullptr;
  if (!host || !*host || (*host)->emulated)
    return nullptr;
  int pid = (*host)->pid;
  if (!native_ || native_->pid() != pid) {
    auto name = call<std::string>("isa");
    std::optional<Isa> isa = isaFromName(name);
    if (!isa)
      return nullptr;
    native_ = std::make_unique<NativeTracee>(*isa, pid);
  }
  return native_.get();
}

void PyTarget::syncGdb() {
  if (remote_)
    remote_->forget(); // GDB is about to act: what it does moves the thread under the tracee
  if (!gdbStale_)
    return;
  gdbStale_ = false;
  // gdbserver's current thread is the one stepped with packets, whichever GDB believes it is.
  call<void>("refresh_registers", std::exchange(remoteTid_, 0));
}

bool PyTarget::readThread(uint64_t tid, unsigned stackDepth, ThreadSnapshot &out) {
  if (routine_.active())
    return routine_.readThread(tid, stackDepth, out, native_->stack());
  routine_.noteDepth(stackDepth);
  if (RemoteTracee *remote = remoteFor(tid); remote && remote->readThread(tid, stackDepth, out))
    return true;
  if (NativeTracee *native = this->native(); native && native->readThread(tid, stackDepth, out))
    return true;
  syncGdb();
  py::gil_scoped_acquire gil;
  py::object result = invoke("read_thread", tid, stackDepth);
  if (result.is_none())
    return false;
  auto snapshot = result.cast<py::tuple>();
  out.tid = tid;
  assignWords(snapshot[0], out.regs);
  assignWords(snapshot[1], out.stack);
  return true;
}

bool PyTarget::readExtended(uint64_t tid, ExtendedSnapshot &out) {
  if (RemoteTracee *remote = remoteFor(tid); remote && remote->readExtended(tid, out))
    return true;
  if (NativeTracee *native = this->native(); native && native->readExtended(tid, out))
    return true;
  syncGdb();
  py::gil_scoped_acquire gil;
  py::object result = invoke("read_extended", tid);
  if (result.is_none())
    return false;
  auto snapshot = result.cast<py::tuple>();
  assignWords(snapshot[0], out.values);
  out.absent = snapshot[1].cast<std::vector<std::string>>();
  return true;
}

std::vector<ModuleInfo> PyTarget::modules() {
  py::gil_scoped_acquire gil;
  std::vector<ModuleInfo> modules;
  for (py::handle row : invoke("modules")) {
    auto m = row.cast<py::tuple>();
    modules.push_back({m[0].cast<std::string>(), m[1].cast<std::string>(), m[2].cast<uint64_t>(),
                       m[3].cast<uint64_t>(), m[4].cast<uint64_t>()});
  }
  return modules;
}

SymbolInfo PyTarget::symbolize(uint64_t pc) {
  SymbolInfo info;
  {
    py::gil_scoped_acquire gil;
    auto s = invoke("symbolize", pc).cast<py::tuple>();
    info = {s[0].cast<std::string>(), s[1].cast<uint64_t>(), s[2].cast<uint64_t>(),
            s[3].cast<std::string>(), s[4].cast<uint32_t>(), s[5].cast<std::vector<std::string>>()};
  }
  if (info.size != 0) // debug information: GDB's own names and extents
    return info;
  // GDB does not tell the size of a function it knows only from a symbol table, so its code
  // could not be captured; the ELF symbol tables do, where the process's files can be read.
  if (isHostProcess())
    if (NativeTracee *native = this->native())
      if (std::optional<ElfImage::FunctionSymbol> symbol = native->functionAt(pc)) {
        info.function = std::move(symbol->name);
        info.start = symbol->start;
        info.size = symbol->size;
        return info;
      }
  info.function = demangledName(info.function);
  return info;
}

std::vector<uint8_t> PyTarget::readMemory(uint64_t addr, size_t size) {
  py::gil_scoped_acquire gil;
  auto bytes = invoke("read_memory", addr, size).cast<std::string>();
  return {bytes.begin(), bytes.end()};
}

std::vector<uint64_t> PyTarget::resolve(std::string_view location) {
  if (std::optional<uint64_t> address = literalAddress(location))
    return {*address};
  // ELF symbol tables name every module's definition exactly; GDB's linespecs would also match
  // inlined copies and C++ names in other scopes. Its answer is kept for what they lack.
  if (isFunctionName(location) && isHostProcess())
    if (NativeTracee *native = this->native())
      if (std::vector<uint64_t> found = native->functionsNamed(location); !found.empty())
        return found;
  return call<std::vector<uint64_t>>("resolve", location);
}

std::optional<DataLocation> PyTarget::dataAddress(std::string_view name) {
  if (std::optional<uint64_t> address = literalAddress(name))
    return DataLocation{*address, 0};
  // As for functions, the ELF symbol tables first; GDB's debug information otherwise.
  if (isFunctionName(name) && isHostProcess())
    if (NativeTracee *native = this->native())
      if (std::optional<DataLocation> found = native->dataNamed(name))
        return found;
  py::gil_scoped_acquire gil;
  py::object found = invoke("data_address", name);
  if (found.is_none())
    return std::nullopt;
  auto place = found.cast<py::tuple>();
  return DataLocation{place[0].cast<uint64_t>(), place[1].cast<uint64_t>()};
}

std::unique_ptr<Arming> PyTarget::arm(Session &session, int signo) {
  syncGdb();
  py::gil_scoped_acquire gil;
  // The engine owns the arming and destroys it before the session, so `session` outlives
  // every call of on_stop that the Python side can make.
  py::cpp_function onStop([&session](StopEvent::Kind kind, uint64_t tid, int signo, int exitCode,
                                     std::string description) {
    return session.onStop({kind, tid, signo, exitCode, std::move(description)});
  });
  auto arming = std::make_unique<PyArming>(invoke("arm", onStop, signo));
  routine_.noteDepth(0);
  if (NativeTracee *native = this->native(); native && signo)
    arming->tap.emplace(native->pid(), signo, [this, &session, signo](uint64_t tid) {
      return takeUnseenStop(session, tid, signo);
    });
  return arming;
}

bool PyTarget::takeUnseenStop(Session &session, uint64_t tid, int signo) {
  if (!routine_.depth() || !native_ ||
      !native_->readThread(tid, routine_.depth(), routine_.snapshot()))
    return false;
  return routine_.offer(session, signo);
}

StopEvent PyTarget::stopEvent(py::handle tuple) {
  auto e = tuple.cast<py::tuple>();
  return {e[0].cast<StopEvent::Kind>(), e[1].cast<uint64_t>(), e[2].cast<int>(), e[3].cast<int>(),
          e[4].cast<std::string>()};
}

StopEvent PyTarget::runUntilUserStop() {
  syncGdb();
  py::gil_scoped_acquire gil;
  return stopEvent(invoke("run_until_user_stop"));
}

void PyTarget::resumeInBackground() {
  syncGdb();
  call<void>("resume_in_background");
}

bool PyTarget::isRunning() { return call<bool>("is_running"); }

std::unique_ptr<RemoteTracee> PyTarget::remoteTracee() {
  using Places = std::vector<std::pair<size_t, size_t>>;
  py::gil_scoped_acquire gil;
  py::object layout = invoke("remote_layout");
  if (layout.is_none())
    return nullptr;
  auto [prefix, regs, extended] = layout.cast<std::tuple<std::string, Places, Places>>();
  RemoteTracee::Layout where{prefix, {}, {}};
  for (auto [offset, size] : regs)
    where.regs.push_back({offset, size});
  for (auto [offset, size] : extended)
    where.extended.push_back({offset, size});
  auto exchange = [this](const std::string &text) -> std::optional<std::string> {
    py::gil_scoped_acquire gil;
    py::object reply = invoke("packet", text);
    if (reply.is_none())
      return std::nullopt;
    return reply.cast<std::string>();
  };
  auto tracee = std::make_unique<RemoteTracee>(isa(), std::move(where), exchange);
  return tracee->steps() ? std::move(tracee) : nullptr;
}

std::unique_ptr<SteppingScope> PyTarget::beginStepping(uint64_t tid,
                                                       const std::set<uint64_t> &until) {
  // GDB's own stop must be where the trace ends, or GDB keeps the pc of the stop before direct
  // steps: `info program` names it, and a breakpoint set at the trace's end reports a hit at
  // the next `continue` before the thread moves (GDB steps over a breakpoint only at its stop's
  // pc). So GDB makes the steps that can end the trace: the last of the count, any that can land
  // at an --until location, and one more where the time limit would end it after direct steps.
  struct Scope : SteppingScope {
    Scope(PyTarget &target, py::object handle)
        : target(target), handle(std::move(handle), "strobe: ending a step trace's setup") {}
    ~Scope() override {
      target.remote_.reset();
      target.until_.clear();
      target.gdbStepsNext_ = false;
    }
    void lastStepNext() override { target.gdbStepsNext_ = true; }
    void execMayFollow() override {
      py::gil_scoped_acquire gil;
      (*handle).attr("exec_may_follow")();
    }
    bool mayStopHere() const override {
      if (!target.movedBehindGdb_)
        return true;
      target.gdbStepsNext_ = true;
      return false;
    }
    PyTarget &target;
    ClosedAtEnd handle;
  };
  // (A gdbserver on this host runs a process of this host, which GDB does not trace itself.)
  remote_ = direct_ ? remoteTracee() : nullptr;
  until_ = until;
  gdbStepsNext_ = movedBehindGdb_ = false;
  py::gil_scoped_acquire gil;
  guard_ = py::object(); // the addresses to avoid now include until_
  return std::make_unique<Scope>(*this, invoke("begin_stepping", tid));
}

const std::unordered_set<uint64_t> *PyTarget::stepGuard() {
  py::gil_scoped_acquire gil;
  py::object guard = invoke("native_step_guard");
  if (guard.is_none())
    return nullptr;
  if (!guard.is(guard_)) {
    avoid_ = guard.cast<std::unordered_set<uint64_t>>();
    avoid_.insert(until_.begin(), until_.end());
    guard_ = guard;
  }
  return &avoid_;
}

RemoteTracee *PyTarget::remoteFor(uint64_t tid) {
  if (!remote_)
    return nullptr;
  // Before any packet, which Ctrl-C can end with an exception: whatever the tracee sends may make
  // the thread gdbserver's current one (`Hg`, a step), and GDB must then hear of it.
  gdbStale_ = true;
  remoteTid_ = tid;
  return remote_.get();
}

std::optional<StopEvent> PyTarget::stepRemotely(uint64_t tid) {
  const std::unordered_set<uint64_t> *avoid = stepGuard();
  if (!avoid)
    return std::nullopt;
  int number = 0;
  const RemoteTracee::Step step = remoteFor(tid)->step(tid, *avoid, number);
  switch (step) {
  case RemoteTracee::Step::Done:
    return steppedOne(tid);
  case RemoteTracee::Step::LeftToGdb:
    return std::nullopt;
  case RemoteTracee::Step::Signal: {
    syncGdb();
    py::gil_scoped_acquire gil;
    py::object stop = invoke("remote_signal", tid, number);
    if (stop.is_none())
      return std::nullopt;
    return stopEvent(stop);
  }
  case RemoteTracee::Step::Vanished:
    return StopEvent{StopEvent::Kind::Exited, tid, 0, number, "the process ended during a step"};
  case RemoteTracee::Step::Unexpected:
    break;
  }
  return StopEvent{StopEvent::Kind::Other, tid, 0, 0,
                   "gdbserver reported a stop that a single step of this thread cannot make"};
}

std::optional<StopEvent> PyTarget::stepNatively(uint64_t tid) {
  NativeTracee *native = this->native();
  const std::unordered_set<uint64_t> *avoid = native ? stepGuard() : nullptr;
  if (!avoid)
    return std::nullopt;
  int exitCode = 0;
  switch (native->step(tid, *avoid, exitCode)) {
  case NativeTracee::Step::Done:
    gdbStale_ = true;
    return steppedOne(tid);
  case NativeTracee::Step::Vanished:
    gdbStale_ = true;
    return StopEvent{StopEvent::Kind::Exited, tid, 0, exitCode,
                     "the thread was killed during a step"};
  case NativeTracee::Step::LeftToGdb:
    break;
  }
  return std::nullopt;
}

StopEvent PyTarget::stepInstruction(uint64_t tid) {
  if (!std::exchange(gdbStepsNext_, false)) {
    std::optional<StopEvent> stop = remote_ ? stepRemotely(tid) : stepNatively(tid);
    if (stop) {
      movedBehindGdb_ = movedBehindGdb_ || stop->kind == StopEvent::Kind::Step;
      return *stop;
    }
  }
  syncGdb();
  movedBehindGdb_ = false;
  py::gil_scoped_acquire gil;
  return stopEvent(invoke("step_instruction", tid));
}

StopEvent PyTarget::runTo(uint64_t tid, uint64_t address) {
  syncGdb();
  movedBehindGdb_ = false;
  py::gil_scoped_acquire gil;
  return stopEvent(invoke("run_to", tid, address));
}

std::unique_ptr<Breakpoint> PyTarget::insertBreakpoint(uint64_t address,
                                                       BreakpointHandler handler) {
  py::gil_scoped_acquire gil;
  py::cpp_function onHit([handler = std::move(handler)](uint64_t tid) { handler(tid); });
  py::object handle = invoke("insert_breakpoint", address, onHit);
  if (handle.is_none())
    return nullptr;
  return std::make_unique<PyBreakpoint>(std::move(handle));
}

void PyTarget::print(std::string_view text) { call<void>("print", text); }

} // namespace strobe::gdb
