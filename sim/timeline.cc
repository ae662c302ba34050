#include "sim/timeline.h"

#include <cstdio>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/atomic_file.h"

namespace sparseflash {

int Timeline::Lane(const std::string& name) {
  for (size_t i = 0; i < lanes_.size(); ++i) {
    if (lanes_[i] == name) return static_cast<int>(i);
  }
  lanes_.push_back(name);
  return static_cast<int>(lanes_.size() - 1);
}

bool Timeline::Keep(int64_t* step) const {
  *step = step_ ? step_() : 0;
  return *step >= first_ && *step < last_;
}

void Timeline::AddSpan(int lane, const SpanInfo& info, Nanos start, Nanos end) {
  int64_t step;
  if (Keep(&step)) events_.push_back({lane, false, info, start, end, step});
}

void Timeline::AddAsync(int lane, const SpanInfo& info, Nanos start, Nanos end) {
  int64_t step;
  if (Keep(&step)) events_.push_back({lane, true, info, start, end, step});
}

namespace {

std::string Args(const SpanInfo& i, int64_t step) {
  std::string args = absl::StrFormat("{\"step\":%d,\"layer\":%d,\"bytes\":%d", step, i.layer,
                                     i.bytes);
  if (i.requests > 0) absl::StrAppendFormat(&args, ",\"requests\":%d,\"hit\":false", i.requests);
  if (i.cached >= 0) absl::StrAppendFormat(&args, ",\"hit\":%s", i.cached ? "true" : "false");
  return args + "}";
}

}  // namespace

absl::Status Timeline::WriteChromeTrace(const std::string& path) const {
  absl::StatusOr<std::unique_ptr<AtomicFile>> file = AtomicFile::Create(path, {.sync = false});
  if (!file.ok()) return file.status();
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  for (size_t i = 0; i < lanes_.size(); ++i) {
    absl::StrAppendFormat(&out,
                          "%s{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%d,"
                          "\"args\":{\"name\":\"%s\"}}",
                          i == 0 ? "" : ",\n", i, lanes_[i]);
  }
  int64_t id = 0;
  for (const Event& e : events_) {
    const std::string args = Args(e.info, e.step);
    const double ts = e.start.ns / 1e3, end = e.end.ns / 1e3;
    if (e.async) {
      ++id;
      absl::StrAppendFormat(&out,
                            ",\n{\"ph\":\"b\",\"cat\":\"flash\",\"id\":%d,\"pid\":1,\"tid\":%d,"
                            "\"name\":\"%s\",\"ts\":%.3f,\"args\":%s}"
                            ",\n{\"ph\":\"e\",\"cat\":\"flash\",\"id\":%d,\"pid\":1,\"tid\":%d,"
                            "\"name\":\"%s\",\"ts\":%.3f}",
                            id, e.lane, e.info.name, ts, args, id, e.lane, e.info.name, end);
    } else {
      absl::StrAppendFormat(&out,
                            ",\n{\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"name\":\"%s\",\"ts\":%.3f,"
                            "\"dur\":%.3f,\"args\":%s}",
                            e.lane, e.info.name, ts, end - ts, args);
    }
    if (out.size() > (1 << 20)) {
      if (absl::Status s = (*file)->Write(out); !s.ok()) return s;
      out.clear();
    }
  }
  out += "\n]}\n";
  if (absl::Status s = (*file)->Write(out); !s.ok()) return s;
  return (*file)->Commit();
}

}  // namespace sparseflash
