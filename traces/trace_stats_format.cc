// Rendering of TraceStats as JSON (stable field names) and as a text table.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "traces/generator.h"
#include "traces/trace_stats.h"

namespace sparseflash {
namespace {

nlohmann::json Keyed(const std::vector<double>& by_k) {
  nlohmann::json j = nlohmann::json::object();
  for (int k : kStatsWindows) j[std::to_string(k)] = by_k[k - 1];
  return j;
}

nlohmann::json LayerJson(const LayerStats& s, bool predicted, bool gated) {
  nlohmann::json j;
  j["active_ratio_mean"] = s.active_ratio_mean;
  j["active_ratio_min"] = s.active_ratio_min;
  j["active_ratio_max"] = s.active_ratio_max;
  j["share_neurons_for_50pct"] = s.share_neurons_for_50pct;
  j["share_neurons_for_80pct"] = s.share_neurons_for_80pct;
  j["jaccard_consecutive"] = s.jaccard_consecutive;
  j["new_per_token"] = Keyed(s.new_per_token);
  j["window_cache_fraction"] = Keyed(s.window_cache_fraction);
  nlohmann::json lru = nlohmann::json::object();
  const char* keys[] = {"0.1", "0.25", "0.5"};
  for (size_t c = 0; c < s.lru_hit_rate.size(); ++c) lru[keys[c]] = s.lru_hit_rate[c];
  j["lru_hit_rate"] = lru;
  if (predicted) {
    j["predicted_ratio_mean"] = s.predicted_ratio_mean;
    j["predictor_recall"] = s.predictor_recall;
  }
  if (gated) j["up_down_given_gate"] = s.up_down_given_gate;
  return j;
}

// Who made the trace and from what: a user checks a trace's origin before
// trusting its figures (a recording, or which generator profile and seed).
std::string ProvenanceLine(const TraceProvenance& p) {
  std::string line = absl::StrCat("made by ", p.tool.empty() ? "an unnamed tool" : p.tool);
  if (!p.generator.empty()) {
    absl::StrAppendFormat(&line, ": generator profile %s, seed %d", p.generator, p.seed);
    if (auto it = p.parameters.find(kHotNeuronsParameter); it != p.parameters.end()) {
      absl::StrAppend(&line, ", hot_neurons ", it->second);
    }
  }
  if (!p.recorded_from.empty()) absl::StrAppend(&line, "; recorded from ", p.recorded_from);
  if (!p.inputs.empty()) absl::StrAppend(&line, " (inputs: ", p.inputs, ")");
  return line;
}

nlohmann::json ProvenanceJson(const TraceProvenance& p) {
  nlohmann::json j;
  j["tool"] = p.tool;
  if (!p.generator.empty()) {
    j["generator"] = p.generator;
    j["seed"] = p.seed;
  }
  if (!p.recorded_from.empty()) j["recorded_from"] = p.recorded_from;
  if (!p.inputs.empty()) j["inputs"] = p.inputs;
  if (!p.parameters.empty()) j["parameters"] = p.parameters;
  return j;
}

}  // namespace

nlohmann::json TraceStats::ToJson() const {
  const bool gated = header.has_gate_only;
  nlohmann::json j = LayerJson(overall, header.has_predicted, gated);
  j["model"] = header.model.name;
  j["provenance"] = ProvenanceJson(header.provenance);
  j["tokens"] = tokens;
  j["window_set"] = window_set;
  j["window_warmup_tokens"] = warmup_tokens;
  j["layers"] = nlohmann::json::array();
  for (size_t l = 0; l < layers.size(); ++l) {
    nlohmann::json lj = LayerJson(layers[l], header.has_predicted, gated);
    lj["layer"] = l;
    j["layers"].push_back(lj);
  }
  j["kept_share_layer_correlation"] = kept_share_layer_correlation;
  if (!expert_share.empty()) {
    j["expert_share"] = expert_share;
    j["expert_persistence"] = expert_persistence;
    j["active_ratio_in_chosen_experts"] = active_ratio_in_chosen_experts;
  }
  return j;
}

std::string TraceStats::ToText() const {
  std::string out = absl::StrFormat(
      "trace of %s: %d tokens, %d layers x %d neurons%s\n", header.model.name, tokens,
      header.model.layers, header.model.d_ffn,
      header.model.experts > 1
          ? absl::StrFormat(" x %d experts (top-%d)", header.model.experts, header.model.top_k)
          : "");
  absl::StrAppend(&out, ProvenanceLine(header.provenance), "\n");
  absl::StrAppendFormat(&out,
                        "window and cache figures use the %s sets, after %d warm-up tokens\n\n",
                        window_set, warmup_tokens);
  absl::StrAppend(&out,
                  "layer  active%  min%   max%   top50% top80% jaccard new@1%  new@4%  "
                  "new@16% win@4%  lru10% lru25% lru50%\n");
  auto row = [&](const std::string& name, const LayerStats& s) {
    absl::StrAppendFormat(
        &out,
        "%-6s %6.2f %6.2f %6.2f %6.1f %6.1f %7.3f %6.2f %7.2f %7.2f %6.1f %6.1f %6.1f %6.1f\n",
        name, 100 * s.active_ratio_mean, 100 * s.active_ratio_min, 100 * s.active_ratio_max,
        100 * s.share_neurons_for_50pct, 100 * s.share_neurons_for_80pct, s.jaccard_consecutive,
        100 * s.new_per_token[0], 100 * s.new_per_token[3], 100 * s.new_per_token[15],
        100 * s.window_cache_fraction[3], 100 * s.lru_hit_rate[0], 100 * s.lru_hit_rate[1],
        100 * s.lru_hit_rate[2]);
  };
  for (size_t l = 0; l < layers.size(); ++l) row(std::to_string(l), layers[l]);
  row("all", overall);
  absl::StrAppend(&out,
                  "\n(all: means over layers; min/max = lowest and highest layer mean; LRU over "
                  "the whole FFN)\n");
  absl::StrAppendFormat(&out, "new neurons per token by window k (%% of FFN):");
  for (int k : kStatsWindows)
    absl::StrAppendFormat(&out, "  k=%d %.2f", k, 100 * overall.new_per_token[k - 1]);
  absl::StrAppend(&out, "\n");
  absl::StrAppendFormat(&out,
                        "layers keeping alike: correlation of their shares of neurons kept, "
                        "across tokens, %.3f (mean over pairs of layers)\n",
                        kept_share_layer_correlation);
  if (header.has_predicted) {
    absl::StrAppendFormat(&out, "predicted set %.2f%% of FFN, recall %.3f\n",
                          100 * overall.predicted_ratio_mean, overall.predictor_recall);
  }
  if (header.has_gate_only) {
    absl::StrAppendFormat(&out, "P(up/down active | gate non-zero) %.3f\n",
                          overall.up_down_given_gate);
  }
  if (!expert_share.empty()) {
    absl::StrAppend(&out, "expert share:");
    for (double s : expert_share) absl::StrAppendFormat(&out, " %.3f", s);
    absl::StrAppendFormat(&out,
                          "\nexpert persistence %.3f; active ratio inside chosen experts %.2f%%\n",
                          expert_persistence, 100 * active_ratio_in_chosen_experts);
  }
  return out;
}

}  // namespace sparseflash
