// Verifying a reconstructed trace against an exact one (single-stepping or block probes).
#pragma once

#include "analysis/looptrace/Element.h"

#include <cstdint>
#include <span>
#include <vector>

namespace strobe {

// Levenshtein distance (insert, delete, substitute, each 1).
size_t editDistance(std::span<const uint64_t> a, std::span<const uint64_t> b);

// 1 - editDistance / max(|reconstructed|, |truth|); 1 when both are empty.
double traceAccuracy(std::span<const uint64_t> reconstructed, std::span<const uint64_t> truth);

// The instruction sequence of a reconstructed trace: one pc per entry, weights dropped.
std::vector<uint64_t> tracePcs(std::span<const WeightedElement> trace);

} // namespace strobe
