#include "tools/run_store.h"

#include <fstream>

#include "absl/strings/str_format.h"
#include "common/hash.h"
#include "devices/device_catalog.h"

namespace sparseflash::cli {
namespace {

std::string HashText(const std::string& text) {
  return absl::StrFormat("%016x", StableHash64(text));
}

std::string HashFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 20);
  uint64_t h = kStableHashSeed;
  while (in.read(buf.data(), buf.size()) || in.gcount() > 0) {
    h = StableHash64(std::string_view(buf.data(), static_cast<size_t>(in.gcount())), h);
  }
  return absl::StrFormat("%016x", h);
}

}  // namespace

RunRow MakeRunRow(const SimulationConfig& c, const std::map<std::string, std::string>& options,
                  const nlohmann::ordered_json& figures, const std::string& mode) {
  RunRow r;
  RunConfig& k = r.config;
  k.device = c.device.name;
  k.device_hash = HashText(DeviceProfileToText(c.device));
  k.model = c.model.name;
  k.trace = c.trace_path.empty() ? "generated" : c.trace_path;
  k.trace_hash = c.trace_path.empty() ? "" : HashFile(c.trace_path);
  k.strategy = c.strategy;
  k.policy = c.policy;
  k.memory_bytes = c.memory_bytes;
  k.ffn_resident = c.ffn_resident;
  k.threads = c.threads;
  k.prompt_tokens = c.prompt_tokens;
  k.tokens = c.tokens;
  k.seed = c.seed;
  k.options_json = nlohmann::json(options).dump();
  r.mode = mode;
  r.figures_json = figures.dump();
  r.decode_tokens_per_s = figures.value("decode_tokens_per_s", 0.0);
  return r;
}

absl::StatusOr<int64_t> StoreRun(const std::string& path, const RunRow& row) {
  absl::StatusOr<std::unique_ptr<ResultsDb>> db = ResultsDb::Open(path);
  if (!db.ok()) return db.status();
  return (*db)->Insert(row);
}

}  // namespace sparseflash::cli
