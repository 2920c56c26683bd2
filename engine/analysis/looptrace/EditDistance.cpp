#include "analysis/looptrace/EditDistance.h"

#include <algorithm>
#include <numeric>

namespace strobe {

size_t editDistance(std::span<const uint64_t> a, std::span<const uint64_t> b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({above + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

double traceAccuracy(std::span<const uint64_t> reconstructed, std::span<const uint64_t> truth) {
  size_t longest = std::max(reconstructed.size(), truth.size());
  if (longest == 0)
    return 1.0;
  return 1.0 -
         static_cast<double>(editDistance(reconstructed, truth)) / static_cast<double>(longest);
}

std::vector<uint64_t> tracePcs(std::span<const WeightedElement> trace) {
  std::vector<uint64_t> pcs;
  pcs.reserve(trace.size());
  for (const WeightedElement &entry : trace)
    pcs.push_back(entry.element.pc);
  return pcs;
}

} // namespace strobe
