// The configuration the simulation tests start from: a catalog device and
// model, half the FFN resident, 8 tokens.
#pragma once

#include <string>

#include "devices/device_catalog.h"
#include "sim/simulator.h"
#include "traces/model_catalog.h"

namespace sparseflash::testing {

inline SimulationConfig Config(const std::string& strategy, const std::string& model = "bamboo-7b",
                               const std::string& device = "oneplus12") {
  SimulationConfig c;
  c.device = *LoadDevice(device);
  c.model = *LoadModel(model);
  c.strategy = strategy;
  c.ffn_resident = 0.5;
  c.tokens = 8;
  return c;
}

}  // namespace sparseflash::testing
