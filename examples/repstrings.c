// Rep string instructions for exact step traces with memory: a single step runs one iteration
// of each, which moves one element (tests/integration/test_step.py).
#include <stdint.h>

char source[4] = {'W', 'X', 'Y', 'Z'};
char copy[4];
uint64_t filled[2];

__attribute__((noinline)) void rep_strings(void) {
  char *to = copy;
  const char *from = source;
  unsigned long count = sizeof copy;
  __asm__ volatile("rep movsb" : "+D"(to), "+S"(from), "+c"(count) : : "memory");
  uint64_t *words = filled;
  count = 2;
  __asm__ volatile("rep stosq" : "+D"(words), "+c"(count) : "a"(0x1122334455667788ull) : "memory");
}

int main(void) {
  rep_strings();
  return copy[3] == 'Z' && filled[1] == 0x1122334455667788ull ? 0 : 1;
}
