// Spec 003's heap fixtures. Tracking starts at tracking_starts() (the tests break there, run
// `strobe mem start` and continue), so nothing the C runtime allocated before is counted.
//   memlibs fig3 N   N allocations through main -> func_0 -> func_a0 -> func_a1 -> func_b0 -> malloc
//   memlibs t2       the T2 event sequence: liba and libb allocate, free and realloc
//   memlibs t3       the T3 event sequence (per invocation rows)
//   memlibs crash    fig3 with 4 allocations, then a segmentation fault while tracking is on
#include "ledger.h"
#include "memlibs.h"

#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void tracking_starts(void) { __asm__ volatile(""); }
__attribute__((noinline)) void tracking_ends(void) { __asm__ volatile(""); }

__attribute__((noinline)) static void *func_0(size_t size) {
  void *p = func_a0(size);
  ledger_note_depth();
  return p;
}

static void fig3(int n) {
  void *kept[64];
  for (int i = 0; i < n && i < 64; i++)
    kept[i] = func_0(100 + (size_t)i);
  for (int i = 0; i < n && i < 64; i++)
    if (i % 2 == 0)
      libb_free(kept[i]); // half of them are still live at exit: leaks
}

static void t2(void) {
  void *p1 = liba_malloc(100);
  void *p2 = libb_malloc(50);
  void *p3 = liba_memalign(64, 200);
  libb_free(p1);
  void *p4 = libb_realloc(p2, 80);
  liba_free(p3);
  liba_free(NULL);
  (void)p4; // live at exit: the 80 bytes both modes agree on
}

static void t3(void) {
  void *q1 = liba_malloc(10);
  void *q2 = liba_malloc(20);
  void *q3 = libb_malloc(5);
  liba_free(q1);
  void *q4 = libb_malloc(7);
  libb_free(q3);
  (void)q2;
  (void)q4;
}

static int *volatile nowhere; // volatile: the compiler cannot prove the write faults

static void crash(void) {
  fig3(4);
  *nowhere = 1;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "fig3";
  tracking_starts();
  if (strcmp(mode, "t2") == 0)
    t2();
  else if (strcmp(mode, "t3") == 0)
    t3();
  else if (strcmp(mode, "crash") == 0)
    crash();
  else
    fig3(argc > 2 ? atoi(argv[2]) : 10);
  tracking_ends();
  ledger_print();
  return 0;
}
