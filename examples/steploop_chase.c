// Step-trace fixture (bench/codec_size): a pointer-chasing loop with a load and a store per node,
// through a shuffled linked list, so addresses and loaded values do not follow a stride.
#include <stdio.h>
#include <stdlib.h>

struct node {
  struct node *next;
  long value;
};

__attribute__((noinline)) long step_work(struct node *head, unsigned long n) {
  long total = 0;
  struct node *p = head;
  for (unsigned long i = 0; i < n; ++i) {
    total += p->value;
    p->value = total & 0xff;
    p = p->next;
  }
  return total;
}

int main(int argc, char **argv) {
  unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
  enum { kNodes = 4096 };
  struct node *nodes = calloc(kNodes, sizeof *nodes);
  unsigned order[kNodes];
  for (unsigned i = 0; i < kNodes; ++i)
    order[i] = i;
  srand(1);
  for (unsigned i = kNodes - 1; i > 0; --i) {
    unsigned j = (unsigned)rand() % (i + 1), t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  for (unsigned i = 0; i < kNodes; ++i) {
    nodes[order[i]].next = &nodes[order[(i + 1) % kNodes]];
    nodes[order[i]].value = (long)i;
  }
  printf("steploop_chase: %ld\n", step_work(&nodes[order[0]], n));
  free(nodes);
  return 0;
}
