// sparseflash model list|show.
#include <iostream>

#include "absl/strings/str_format.h"
#include "common/units.h"
#include "engine/model_bytes.h"
#include "tools/cli.h"
#include "traces/model_catalog.h"

namespace sparseflash::cli {
namespace {

int RunList() {
  absl::PrintF("%-26s %6s %6s %7s %-9s %-12s %12s %12s\n", "name", "layers", "d_model", "d_ffn",
               "experts", "quant", "FFN bytes", "model bytes");
  for (const ModelSpec& m : ModelCatalog::Builtin().models()) {
    ModelBytes b = ComputeModelBytes(m);
    absl::PrintF("%-26s %6d %6d %7d %-9s %-12s %12s %12s\n", m.name, m.layers, m.d_model, m.d_ffn,
                 absl::StrFormat("%d/top-%d", m.experts, m.top_k), m.quantization.Name(),
                 FormatBytes(b.ffn_bytes), FormatBytes(b.model_bytes()));
  }
  return 0;
}

void Line(const char* what, int64_t bytes) {
  absl::PrintF("  %-34s %15d B  %s\n", what, bytes, FormatBytes(bytes));
}

int RunShow(const std::string& name, const std::string& quant) {
  absl::StatusOr<ModelSpec> m = LoadModel(name);
  if (!m.ok()) return ReportError(m.status());
  Quantization q = m->quantization;
  if (!quant.empty()) {
    if (absl::Status s = ParseQuantization(quant, &q); !s.ok()) return ReportError(s);
  }
  ModelBytes b = ComputeModelBytes(*m, q);
  absl::PrintF("%s (%s)\n", m->display_name, m->name);
  absl::PrintF(
      "  shape: %d layers, d_model %d, d_ffn %d%s, %s FFN (%s), heads %d/%d x %d, vocab %d%s\n",
      m->layers, m->d_model, m->d_ffn,
      m->is_moe() ? absl::StrFormat(" x %d experts (top-%d)", m->experts, m->top_k) : "",
      m->ffn_type == FfnType::kGated ? "gate/up/down" : "up/down", m->activation, m->heads,
      m->kv_heads, m->head_dim, m->vocab, m->tied_embeddings ? ", tied" : "");
  absl::PrintF("  quantization: %s%s; generator profile: %s\n", q.Name(),
               q.scales_resident ? " (scales resident)" : "", m->generator.name);
  if (m->gate_threshold) {
    absl::PrintF(
        "  sparsity: a threshold on the gate's output; the gate rows are the predictor, run for "
        "every neuron\n");
  }
  absl::PrintF("bytes:\n");
  Line("FFN neuron bundle", b.bundle_bytes);
  Line("FFN neuron bundle on flash", b.bundle_flash_bytes);
  Line("FFN total", b.ffn_bytes);
  Line("FFN total on flash", b.ffn_flash_bytes);
  Line("FFN scales (resident)", b.ffn_scale_bytes);
  Line("attention", b.attention_bytes);
  Line("embeddings + LM head", b.embedding_bytes);
  Line("non-FFN total", b.non_ffn_bytes());
  Line("KV cache per token", b.kv_bytes_per_token);
  Line(absl::StrFormat("KV cache, %d tokens", m->context).c_str(), b.kv_bytes(m->context));
  Line("predictors", b.predictor_bytes);
  Line("runtime buffers", b.runtime_bytes);
  Line("resident set (offloading engine)", b.resident_bytes(m->context));
  Line("model total", b.model_bytes());
  absl::PrintF("sources: %s\n", m->sources);
  return 0;
}

}  // namespace

void AddModelCommands(CLI::App& app, Dispatch& dispatch) {
  CLI::App* model = app.add_subcommand("model", "The model catalog: shapes and byte accounting");
  model->require_subcommand(1);
  model->add_subcommand("list", "List catalog models")->callback([&dispatch] {
    dispatch.action = RunList;
  });
  auto name = std::make_shared<std::string>();
  auto quant = std::make_shared<std::string>();
  CLI::App* show = model->add_subcommand("show", "Shape and byte accounting of one model");
  show->add_option("name", *name, "Catalog name or model .textproto")->required();
  show->add_option("--quant", *quant, "Override quantization: fp16, int8[-gN], int4[-gN]");
  show->callback(
      [&dispatch, name, quant] { dispatch.action = [=] { return RunShow(*name, *quant); }; });
}

}  // namespace sparseflash::cli
