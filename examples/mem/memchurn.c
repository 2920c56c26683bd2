// An allocation-heavy loop for the heap-tracking benchmark and the attach test: each iteration,
// DEPTH frames down, frees the oldest of a ring of live blocks and allocates its replacement, so
// every malloc / free pair has a deep stack to capture. checkpoint() is called once per ring's
// turn, where every block of the ring is one allocated since the previous checkpoint.
//   memchurn [ITERATIONS [DEPTH]]   ITERATIONS 0: run until killed
#include "ledger.h"

#include <stdlib.h>

void ledger_note_depth(void); // does nothing: a call that keeps its caller's frame

enum { kRing = 8, kMaxDepth = 64 };

static void *ring[kRing];
static unsigned long iteration;

__attribute__((noinline)) void tracking_starts(void) { __asm__ volatile(""); }
__attribute__((noinline)) void checkpoint(void) { __asm__ volatile(""); }

__attribute__((noinline)) static void churn(void) {
  unsigned slot = (unsigned)(iteration % kRing);
  size_t size = 32 + (iteration * 13) % 224;
  ledger_free(ring[slot]);
  free(ring[slot]);
  ring[slot] = malloc(size);
  ledger_alloc("malloc", ring[slot], size);
}

// Not a tail call (the call after it), so every level keeps its frame.
__attribute__((noinline)) static void descend(int depth) {
  if (depth <= 1)
    churn();
  else
    descend(depth - 1);
  ledger_note_depth();
}

int main(int argc, char **argv) {
  unsigned long iterations = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000;
  int depth = argc > 2 ? atoi(argv[2]) : 16;
  depth = depth < 1 ? 1 : depth > kMaxDepth ? kMaxDepth : depth;
  tracking_starts();
  for (iteration = 0; iterations == 0 || iteration < iterations; iteration++) {
    descend(depth);
    if (iteration % kRing == kRing - 1)
      checkpoint();
  }
  ledger_print();
  return 0;
}
