// Spec 003's T5 edge cases, one after the other, for the heap tables to account exactly:
// malloc(0), free(NULL), a failed malloc, calloc (and its overflow), realloc(NULL, n), realloc
// growing and shrinking, realloc(p, 0), reallocarray, posix_memalign, aligned_alloc, memalign,
// valloc, pvalloc, and a free of a block allocated before tracking started (untracked).
#define _GNU_SOURCE
#include "ledger.h"

#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>

__attribute__((noinline)) void tracking_starts(void) { __asm__ volatile(""); }
__attribute__((noinline)) void tracking_ends(void) { __asm__ volatile(""); }

static volatile size_t huge = SIZE_MAX / 2; // volatile: no compile-time folding of the failures

int main(void) {
  void *before = malloc(48); // allocated before tracking: its free is untracked
  tracking_starts();
  void *zero = malloc(0);
  ledger_alloc("malloc", zero, 0);
  ledger_free(NULL);
  free(NULL);
  void *failed = malloc(huge);
  ledger_alloc("malloc", failed, huge);
  void *c = calloc(10, 12);
  ledger_alloc("calloc", c, 120);
  void *overflow = calloc(huge, 4);
  ledger_alloc("calloc", overflow, 0);
  void *r = realloc(NULL, 64);
  ledger_realloc(0, r, 64);
  uintptr_t key = (uintptr_t)r;
  void *grown = realloc(r, 4096);
  ledger_realloc(key, grown, 4096);
  key = (uintptr_t)grown;
  void *shrunk = realloc(grown, 32);
  ledger_realloc(key, shrunk, 32);
  void *failed_realloc = realloc(shrunk, huge);
  ledger_realloc((uintptr_t)shrunk, failed_realloc, huge); // failed: shrunk stays live
  void *arr = reallocarray(NULL, 8, 16);
  ledger_realloc(0, arr, 128);
  void *pm = NULL;
  if (posix_memalign(&pm, 64, 256) == 0)
    ledger_alloc("posix_memalign", pm, 256);
  void *aa = aligned_alloc(128, 512);
  ledger_alloc("aligned_alloc", aa, 512);
  void *ma = memalign(32, 100);
  ledger_alloc("memalign", ma, 100);
  void *va = valloc(300);
  ledger_alloc("valloc", va, 300);
  void *pv = pvalloc(10);
  ledger_alloc("pvalloc", pv, 4096); // pvalloc rounds the size up to a whole page
  ledger_free(c);
  (void)realloc(c, 0); // glibc frees c and returns NULL
  free(before); // untracked: the ledger does not know it either
  ledger_free(zero);
  free(zero);
  ledger_free(shrunk);
  free(shrunk);
  ledger_free(arr);
  free(arr);
  ledger_free(pm);
  free(pm);
  ledger_free(aa);
  free(aa);
  ledger_free(ma);
  free(ma);
  ledger_free(va);
  free(va);
  ledger_free(pv);
  free(pv);
  tracking_ends();
  ledger_print();
  return 0;
}
