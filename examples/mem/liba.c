// liba.so of spec 003's Fig. 3: main -> func_0 -> liba:func_a0 -> func_a1 -> libb:func_b0 -> malloc,
// plus the allocations the T2 / T3 vectors make "in liba".
#include "ledger.h"
#include "memlibs.h"

#include <malloc.h>
#include <stdlib.h>

void *func_a1(size_t size) {
  void *p = func_b0(size);
  ledger_note_depth(); // keeps func_a1 on the stack (no tail call)
  return p;
}

void *func_a0(size_t size) {
  void *p = func_a1(size);
  ledger_note_depth();
  return p;
}

void *liba_malloc(size_t size) {
  void *p = malloc(size);
  ledger_alloc("malloc", p, size);
  return p;
}

void *liba_memalign(size_t alignment, size_t size) {
  void *p = memalign(alignment, size);
  ledger_alloc("memalign", p, size);
  return p;
}

void liba_free(void *p) {
  ledger_free(p);
  free(p);
}
