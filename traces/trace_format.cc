#include "traces/trace_format.h"

namespace sparseflash::trace_format {

void HeaderToProto(const TraceHeader& h, proto::TraceHeader* out) {
  out->set_format_version(kVersion);
  proto::TraceModel* m = out->mutable_model();
  m->set_name(h.model.name);
  m->set_layers(h.model.layers);
  m->set_d_ffn(h.model.d_ffn);
  m->set_experts(h.model.experts);
  m->set_top_k(h.model.top_k);
  m->set_gated(h.model.gated);
  proto::Provenance* p = out->mutable_provenance();
  p->set_recorded_from(h.provenance.recorded_from);
  p->set_inputs(h.provenance.inputs);
  p->set_generator(h.provenance.generator);
  for (const auto& [k, v] : h.provenance.parameters) (*p->mutable_parameters())[k] = v;
  p->set_seed(h.provenance.seed);
  p->set_tool(h.provenance.tool);
  out->set_tokens(h.tokens);
  out->set_has_predicted(h.has_predicted);
  out->set_has_gate_only(h.has_gate_only);
}

void HeaderFromProto(const proto::TraceHeader& in, TraceHeader* out) {
  const proto::TraceModel& m = in.model();
  out->model = {m.name(), m.layers(), m.d_ffn(), m.experts(), m.top_k(), m.gated()};
  const proto::Provenance& p = in.provenance();
  out->provenance.recorded_from = p.recorded_from();
  out->provenance.inputs = p.inputs();
  out->provenance.generator = p.generator();
  out->provenance.parameters = {p.parameters().begin(), p.parameters().end()};
  out->provenance.seed = p.seed();
  out->provenance.tool = p.tool();
  out->tokens = in.has_tokens() ? in.tokens() : kUnfinishedTokens;
  out->has_predicted = in.has_predicted();
  out->has_gate_only = in.has_gate_only();
}

}  // namespace sparseflash::trace_format
