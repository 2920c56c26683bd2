// The two libraries of the heap fixtures (spec 003, Fig. 3 and vectors T2 / T3).
#pragma once
#include <stddef.h>

void *func_a0(size_t size);
void *func_a1(size_t size);
void *liba_malloc(size_t size);
void *liba_memalign(size_t alignment, size_t size);
void liba_free(void *p);

void *func_b0(size_t size);
void *libb_malloc(size_t size);
void *libb_realloc(void *old, size_t size);
void libb_free(void *p);

// Does nothing; a call after another call keeps the caller's frame (no tail call).
void ledger_note_depth(void);
