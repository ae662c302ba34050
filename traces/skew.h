// Per-neuron firing propensities of one layer from its hot-neuron skew: the
// activation CDF F(x) (share of activations carried by the hottest share x of
// neurons) turned into q_r = N * p * (F((r+1)/N) - F(r/N)) for hotness rank r,
// capped at 1 with the excess spread over the others so the mean stays p.
// Pure functions; thread-safe.
#pragma once

#include <vector>

#include "traces/model_spec.h"

namespace sparseflash {

// Piecewise-linear CDF through `anchors` (plus (0,0) and (1,1)). Result is in
// rank order (hottest first), mean `active_ratio`.
std::vector<double> PropensitiesFromAnchors(int neurons, double active_ratio,
                                            const std::vector<SkewAnchor>& anchors);

// Power-law CDF F(x) = x^b with F(top80_share) = 0.8.
std::vector<double> PropensitiesPowerLaw(int neurons, double active_ratio, double top80_share);

// Caps every value at `cap` and scales the uncapped ones so the mean is unchanged.
void CapPreservingMean(std::vector<double>* values, double cap);

// Share of neurons (hottest first) whose counts sum to `share` of the total.
// `counts` need not be sorted. Returns 0 for an all-zero input.
double ShareOfNeuronsCarrying(std::vector<double> counts, double share);

}  // namespace sparseflash
