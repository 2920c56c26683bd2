// Deterministic code for exact step traces: `walk` chases pointers through a linked ring, loads
// and stores on the stack and the heap, and does integer and floating-point arithmetic, with no
// system call on the way, so two runs single-stepped from `walk` execute the same instructions
// with the same values.
#include <stdint.h>
#include <stdlib.h>

struct node {
  struct node *next;
  uint64_t value;
  double weight;
};

__attribute__((noinline)) double walk(struct node *ring, int rounds) {
  double total = 0;
  uint64_t hash = 1469598103934665603ull;
  for (int r = 0; r < rounds; r++) {
    struct node *n = ring;
    do {
      hash = (hash ^ n->value) * 1099511628211ull;
      n->value = hash >> 7;
      total += n->weight * (double)(hash & 0xff);
      n = n->next;
    } while (n != ring);
  }
  return total + (double)hash;
}

int main(void) {
  enum { kNodes = 16 };
  struct node *nodes = calloc(kNodes, sizeof *nodes);
  for (int i = 0; i < kNodes; i++) {
    nodes[i].next = &nodes[(i * 7 + 3) % kNodes];
    nodes[i].value = (uint64_t)i * 2654435761u;
    nodes[i].weight = 1.0 / (i + 1);
  }
  nodes[kNodes - 1].next = &nodes[0];
  volatile double result = walk(nodes, 1000);
  return result > 0 ? 0 : 1;
}
