// Streams a large trace and reports the reader's peak resident memory, to check
// that a multi-GB trace is never loaded whole. Usage:
//   trace_stream_check [GB=1] [PATH]   (writes PATH first, cycling generated tokens)
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "traces/generator.h"
#include "traces/model_catalog.h"
#include "traces/trace_reader.h"
#include "traces/trace_writer.h"

namespace sf = sparseflash;

static long MaxRssKb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

// Streams `path` and prints ids/s and this process's peak RSS.
static int ReadOnly(const std::string& path) {
  auto start = std::chrono::steady_clock::now();
  auto reader = sf::TraceReader::Open(path);
  if (!reader.ok()) return 1;
  uint64_t ids = 0, tokens = 0;
  absl::Status s = sf::ForEachToken(**reader, [&](const sf::TokenActivations& tok) {
    ++tokens;
    for (const auto& l : tok.layers)
      for (const auto& e : l.experts) ids += e.active.size() + e.predicted.size() + e.gate_only.size();
  });
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("file %.2f GB, %llu tokens, %.0f M ids in %.1f s (%.0f M ids/s); peak RSS %ld MB (%s)\n",
              std::filesystem::file_size(path) / 1e9, (unsigned long long)tokens, ids / 1e6, secs,
              ids / 1e6 / secs, MaxRssKb() / 1024, s.ok() ? "ok" : std::string(s.message()).c_str());
  return s.ok() ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 2 && std::string(argv[1]) == "read") return ReadOnly(argv[2]);
  const double gb = argc > 1 ? std::atof(argv[1]) : 1.0;
  const std::string path = argc > 2 ? argv[2] : "/tmp/sparseflash_large.trace";
  sf::ModelSpec m = *sf::ModelCatalog::Builtin().Find("turbosparse-mistral-7b");
  sf::TraceGenerator gen(m, {.seed = 1, .tokens = 64});
  std::vector<sf::TokenActivations> cycle;
  sf::TokenActivations t;
  while (gen.Next(&t)) cycle.push_back(t);
  {
    auto writer = sf::TraceWriter::Create(path, gen.header(), {.zstd_level = 1});
    uint64_t n = 0;
    while (true) {
      sf::TokenActivations token = cycle[n % cycle.size()];
      token.token = n++;
      if (!(*writer)->Append(token).ok()) return 1;
      if (n % 1024 == 0 && (*writer)->bytes_written() >= gb * 1e9) break;
    }
    if (!(*writer)->Finish().ok()) return 1;
  }
  // Read in a fresh process so its peak RSS is the reader's alone.
  std::string cmd = std::string("'") + argv[0] + "' read '" + path + "'";
  int rc = std::system(cmd.c_str());
  std::filesystem::remove(path);
  return rc == 0 ? 0 : 1;
}
