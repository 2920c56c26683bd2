// Shared busy-work for the fixtures: a unit of CPU work whose cost does not depend on the caller.
// Always inlined, so the samples land in the calling function's own code (its self time).
#pragma once
#include <stdint.h>

static volatile uint64_t work_sink;

__attribute__((always_inline)) static inline void work_units(unsigned units) {
  for (unsigned u = 0; u < units; u++)
    for (uint64_t i = 0; i < 1000; i++)
      work_sink += i * i;
}
