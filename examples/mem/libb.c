// libb.so of spec 003's Fig. 3: the library that finally calls malloc.
#include "ledger.h"
#include "memlibs.h"

#include <stdint.h>
#include <stdlib.h>

void *func_b0(size_t size) {
  void *p = malloc(size);
  ledger_alloc("malloc", p, size);
  return p;
}

void *libb_malloc(size_t size) { return func_b0(size); }

void *libb_realloc(void *old, size_t size) {
  uintptr_t key = (uintptr_t)old;
  void *p = realloc(old, size);
  ledger_realloc(key, p, size);
  return p;
}

void libb_free(void *p) {
  ledger_free(p);
  free(p);
}
