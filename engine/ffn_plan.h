// Turns one FFN layer's neuron counts into work-plan nodes under a pipeline
// mode (PowerInfer-2 v3 section 4.3):
//  - "cluster": resident clusters start at once; each flash cluster runs gate
//    read -> gate compute -> up/down read -> up/down compute as soon as its own
//    data is there; compute takes any ready cluster across matrices;
//  - "matrix": a matrix's flash clusters wait for all of that matrix's reads;
//  - "none": resident compute, then every read, then the rest, one after another.
// Counts, not neuron lists: costs depend only on how many neurons of each kind
// a cluster holds, which keeps the simulator fast.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "engine/weight_layout.h"
#include "engine/work_plan.h"

namespace sparseflash {

enum class PipelineMode { kNone, kMatrix, kCluster };
absl::StatusOr<PipelineMode> ParsePipeline(const std::string& name);

// Predicted neurons of one layer (or expert), split by residency and gate output.
struct FfnCounts {
  int64_t resident_active = 0;     // in memory, gate output non-zero
  int64_t resident_gate_zero = 0;  // in memory, gate output zero (only the gate row runs)
  int64_t missing_active = 0;      // on flash, gate output non-zero
  int64_t missing_gate_zero = 0;   // on flash, gate output zero

  int64_t resident() const { return resident_active + resident_gate_zero; }
  int64_t missing() const { return missing_active + missing_gate_zero; }
};

struct FfnPlanOptions {
  PipelineMode pipeline = PipelineMode::kCluster;
  int cluster_neurons = 128;
  NeuronReads reads;
  int64_t gate_row_bytes = 0;  // DRAM bytes the gate (or up) row computation streams
  int64_t bundle_bytes = 0;    // DRAM bytes of a whole neuron
  int io_depth = 32;           // reads the submitter keeps in flight
  int64_t range_bytes = 0;     // address range of this layer's FFN on flash
  ComputeUnit unit = ComputeUnit::kCpu;
};

// Adds the layer's FFN work after `after`; returns the node that ends it.
NodeId PlanSparseFfn(const FfnCounts& counts, const FfnPlanOptions& options, NodeId after,
                     WorkPlan* plan);

}  // namespace sparseflash
