#include "report/PprofProfile.h"

#include "profile.pb.h"

#include <map>
#include <stdexcept>
#include <tuple>
#include <zlib.h>

namespace strobe {
namespace {

namespace pb = perftools::profiles;

// Ids and string indexes handed out once per distinct value, as the format wants them.
class ProfileBuilder {
public:
  ProfileBuilder(const Capture &capture, pb::Profile &out) : capture_(capture), out_(out) {
    out_.add_string_table(""); // index 0 is the empty string by the format's rule
    strings_[""] = 0;
  }

  int64_t string(const std::string &text) {
    auto [it, added] = strings_.try_emplace(text, out_.string_table_size());
    if (added)
      out_.add_string_table(text);
    return it->second;
  }

  // Frame `i` of `stack`: the pc itself (i == 0) or a return address, named after its call.
  uint64_t location(const std::vector<uint64_t> &stack, size_t i) {
    const uint64_t address = stack[i];
    auto [it, added] = locations_.try_emplace({address, i == 0}, out_.location_size() + 1);
    if (!added)
      return it->second;
    pb::Location &location = *out_.add_location();
    location.set_id(it->second);
    location.set_address(address);
    const FrameSymbols frame = frameAt(capture_, stack, i);
    if (frame.module)
      location.set_mapping_id(mapping(*frame.module));
    if (frame.symbol && !frame.symbol->function.empty()) {
      pb::Line &line = *location.add_line();
      line.set_function_id(function(*frame.symbol));
      line.set_line(frame.symbol->line);
    }
    return it->second;
  }

private:
  uint64_t function(const SymbolInfo &symbol) {
    auto [it, added] =
        functions_.try_emplace({symbol.function, symbol.file}, out_.function_size() + 1);
    if (added) {
      pb::Function &entry = *out_.add_function();
      entry.set_id(it->second);
      entry.set_name(string(symbol.function));
      entry.set_system_name(entry.name());
      entry.set_filename(string(symbol.file));
    }
    return it->second;
  }

  uint64_t mapping(const ModuleInfo &module) {
    auto [it, added] = mappings_.try_emplace(&module, out_.mapping_size() + 1);
    if (added) {
      pb::Mapping &entry = *out_.add_mapping();
      entry.set_id(it->second);
      entry.set_memory_start(module.start);
      entry.set_memory_limit(module.end);
      entry.set_file_offset(module.start - module.bias);
      entry.set_filename(string(module.path));
      entry.set_build_id(string(module.buildId));
      // The capture's symbols are all there is: a reader must not look for the binary's.
      entry.set_has_functions(true);
      entry.set_has_filenames(true);
      entry.set_has_line_numbers(true);
    }
    return it->second;
  }

  const Capture &capture_;
  pb::Profile &out_;
  std::map<std::string, int64_t> strings_;
  // A pc and a return address at the same place name different lines (the call's, for the
  // return address), so each is its own location.
  std::map<std::pair<uint64_t, bool>, uint64_t> locations_;
  std::map<std::pair<std::string, std::string>, uint64_t> functions_;
  std::map<const ModuleInfo *, uint64_t> mappings_;
};

std::string gzip(const std::string &bytes) {
  z_stream z{};
  // 16 + 15 window bits: a gzip header and trailer around the deflate stream.
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    throw std::runtime_error("zlib cannot start a gzip stream");
  std::string out(deflateBound(&z, bytes.size()), '\0');
  z.next_in = reinterpret_cast<Bytef *>(const_cast<char *>(bytes.data()));
  z.avail_in = static_cast<uInt>(bytes.size());
  z.next_out = reinterpret_cast<Bytef *>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  const int status = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (status != Z_STREAM_END)
    throw std::runtime_error("zlib could not compress the profile");
  return out;
}

} // namespace

std::string pprofProfile(const Capture &capture, const Profile &profile,
                         const SampleFilter &filter) {
  pb::Profile out;
  ProfileBuilder build(capture, out);
  const char *kind = filter.onCpuOnly ? "cpu" : "wall";
  pb::ValueType *count = out.add_sample_type();
  count->set_type(build.string("samples"));
  count->set_unit(build.string("count"));
  pb::ValueType *time = out.add_sample_type();
  time->set_type(build.string(kind));
  time->set_unit(build.string("nanoseconds"));
  out.mutable_period_type()->set_type(time->type());
  out.mutable_period_type()->set_unit(time->unit());
  out.set_period(static_cast<int64_t>(capture.header.periodNs));
  out.set_time_nanos(static_cast<int64_t>(capture.header.startUnixNs));
  out.set_duration_nanos(static_cast<int64_t>(capture.durationNs));

  std::map<uint64_t, std::string> threadNames;
  for (const ThreadInfo &t : capture.threads)
    threadNames[t.tid] = t.name;
  for (const auto &[key, n] : profile.stacks(filter)) {
    pb::Sample &sample = *out.add_sample();
    for (size_t i = 0; i < key.stack.size(); ++i)
      sample.add_location_id(build.location(key.stack, i));
    sample.add_value(static_cast<int64_t>(n));
    sample.add_value(static_cast<int64_t>(n * capture.header.periodNs));
    pb::Label &tid = *sample.add_label();
    tid.set_key(build.string("thread id"));
    tid.set_num(static_cast<int64_t>(key.tid));
    if (const std::string &name = threadNames[key.tid]; !name.empty()) {
      pb::Label &thread = *sample.add_label();
      thread.set_key(build.string("thread"));
      thread.set_str(build.string(name));
    }
  }
  return gzip(out.SerializeAsString());
}

} // namespace strobe
