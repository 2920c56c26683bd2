#include "ledger.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

enum { kMaxBlocks = 4096, kMaxFunctions = 16 };

static struct {
  void *ptr;
  size_t size;
} blocks[kMaxBlocks];
static struct {
  const char *name;
  unsigned calls;
} functions[kMaxFunctions];
static uint64_t allocated, freed, live, peak, calls;
static unsigned live_blocks;

static void count(const char *function) {
  calls++;
  for (int i = 0; i < kMaxFunctions; i++) {
    if (!functions[i].name)
      functions[i].name = function;
    if (strcmp(functions[i].name, function) == 0) {
      functions[i].calls++;
      return;
    }
  }
}

static void add(void *ptr, size_t size) {
  allocated += size;
  live += size;
  if (live > peak)
    peak = live;
  live_blocks++;
  for (int i = 0; i < kMaxBlocks; i++)
    if (!blocks[i].ptr) {
      blocks[i].ptr = ptr;
      blocks[i].size = size;
      return;
    }
}

static void drop(void *ptr) {
  for (int i = 0; i < kMaxBlocks; i++)
    if (blocks[i].ptr == ptr) {
      freed += blocks[i].size;
      live -= blocks[i].size;
      live_blocks--;
      blocks[i].ptr = NULL;
      return;
    }
}

void ledger_alloc(const char *function, void *ptr, size_t size) {
  if (!ptr)
    return; // a failed allocation changes nothing and is not counted
  count(function);
  add(ptr, size);
}

void ledger_free(void *ptr) {
  count("free");
  if (ptr)
    drop(ptr);
}

void ledger_realloc(uintptr_t old, void *ptr, size_t size) {
  if (!ptr && size)
    return; // failed: nothing changed, nothing counted
  count("realloc");
  if (old)
    drop((void *)old);
  if (ptr)
    add(ptr, size);
}

void ledger_print(void) {
  char line[256];
  int n = snprintf(line, sizeof line,
                   "ledger: calls=%llu allocated=%llu freed=%llu peak=%llu live=%llu blocks=%u\n",
                   (unsigned long long)calls, (unsigned long long)allocated,
                   (unsigned long long)freed, (unsigned long long)peak, (unsigned long long)live,
                   live_blocks);
  write(1, line, (size_t)n);
  for (int i = 0; i < kMaxFunctions && functions[i].name; i++) {
    n = snprintf(line, sizeof line, "ledger: %s=%u\n", functions[i].name, functions[i].calls);
    write(1, line, (size_t)n);
  }
}

void ledger_note_depth(void) { __asm__ volatile(""); }
