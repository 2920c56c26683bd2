// C++ allocations: operator new / delete (scalar, array, sized, aligned, nothrow). libstdc++'s
// operator new calls malloc: strobe must count each new once.
//   memcxx [ROUNDS]
#include "ledger.h"

#include <cstdlib>
#include <new>

extern "C" __attribute__((noinline)) void tracking_starts() { __asm__ volatile(""); }
extern "C" __attribute__((noinline)) void tracking_ends() { __asm__ volatile(""); }

struct alignas(64) Aligned {
  char bytes[128];
};

struct Node {
  Node *next;
  long value[5];
};

int main(int argc, char **argv) {
  int rounds = argc > 1 ? std::atoi(argv[1]) : 20;
  tracking_starts();
  Node *list = nullptr;
  for (int i = 0; i < rounds; i++) {
    Node *n = new Node{list, {i}};
    ledger_alloc("operator new", n, sizeof(Node));
    list = n;
    int *array = new int[10 + i];
    ledger_alloc("operator new[]", array, sizeof(int) * (10 + i));
    ledger_free(array);
    delete[] array;
  }
  Aligned *a = new Aligned;
  ledger_alloc("operator new", a, sizeof(Aligned));
  ledger_free(a);
  delete a;
  char *n = new (std::nothrow) char[40];
  ledger_alloc("operator new[]", n, 40);
  ledger_free(n);
  delete[] n;
  while (list) {
    Node *next = list->next;
    if (list->value[0] % 4) { // a quarter of the nodes leak
      ledger_free(list);
      delete list;
    }
    list = next;
  }
  tracking_ends();
  ledger_print();
  return 0;
}
