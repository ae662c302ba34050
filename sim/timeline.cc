#include "sim/timeline.h"

#include <cstdio>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "common/atomic_file.h"

namespace sparseflash {

void Timeline::Add(int lane, const char* name, Nanos start, Nanos end, int64_t step) {
  spans_.push_back({lane, name, start, end, step});
}

int Timeline::Lane(const std::string& name) {
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (lanes_[i] == name) return static_cast<int>(i);
  }
  lanes_.push_back(name);
  return static_cast<int>(lanes_.size() - 1);
}

absl::Status Timeline::WriteChromeTrace(const std::string& path) const {
  absl::StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path, {.sync = false});
  if (!file.ok()) return file.status();
  std::string out_text;
  {
    std::ostringstream out;
    out << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
    bool first = true;
    for (size_t i = 0; i < lanes_.size(); ++i) {
      out << (first ? "" : ",\n")
          << "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":" << i
          << ",\"args\":{\"name\":\"" << lanes_[i] << "\"}}";
      first = false;
    }
    char buf[256];
    for (const Span& s : spans_) {
      std::snprintf(buf, sizeof buf,
                    ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":\"%s\",\"ts\":%.3f,"
                    "\"dur\":%.3f,\"args\":{\"step\":%lld}}",
                    s.lane, s.name, s.start.ns / 1e3, (s.end - s.start).ns / 1e3,
                    static_cast<long long>(s.step));
      out << (first ? buf + 1 : buf);
      first = false;
    }
    out << "\n]}\n";
    out_text = out.str();
  }
  if (absl::Status s = (*file)->Write(out_text); !s.ok()) return s;
  return (*file)->Commit();
}

}  // namespace sparseflash
