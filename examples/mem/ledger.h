// The fixtures' own count of what they allocate and free, printed at exit: the ground truth a
// strobe heap table must equal. Uses write(2), never stdio, so that printing allocates nothing.
#pragma once
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

void ledger_alloc(const char *function, void *ptr, size_t size);
void ledger_free(void *ptr);
// `old` as an integer: after a successful realloc the old pointer may not be used, even as a key.
void ledger_realloc(uintptr_t old, void *ptr, size_t size);
// Prints "ledger: calls=C allocated=A freed=F peak=P live=L blocks=B" and each function's calls.
void ledger_print(void);

#ifdef __cplusplus
}
#endif
