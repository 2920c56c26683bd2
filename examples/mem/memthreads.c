// A multi-threaded allocator: each worker allocates blocks and hands them to the next worker,
// which frees them, so a pointer freed by one thread is soon returned by malloc to another. The
// threads exist before tracking_starts(), so thread creation's own allocations are not counted.
//   memthreads [THREADS [ROUNDS]]
#include "ledger.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

enum { kMaxThreads = 8 };

static int threads = 4, rounds = 200;
static pthread_barrier_t go;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static void *mailbox[kMaxThreads]; // mailbox[i]: a block waiting for worker i to free it

__attribute__((noinline)) void tracking_starts(void) { __asm__ volatile(""); }
__attribute__((noinline)) void tracking_ends(void) { __asm__ volatile(""); }

static void *worker(void *arg) {
  int self = (int)(long)arg, next = (self + 1) % threads;
  pthread_barrier_wait(&go);
  for (int r = 0; r < rounds; r++) {
    size_t size = 16 + (size_t)((self * 7 + r) % 64);
    // Allocated under the lock, like the frees: the ledger then sees the heap change in the order
    // it does, so its peak is the heap's true peak (a block malloc returned but the ledger has
    // not counted yet would be live bytes it misses).
    pthread_mutex_lock(&lock);
    void *block = malloc(size);
    ledger_alloc("malloc", block, size);
    void *old = mailbox[next];
    mailbox[next] = block;
    void *mine = mailbox[self];
    mailbox[self] = NULL;
    if (old) { // nobody took it yet: take it back
      ledger_free(old);
      free(old);
    }
    if (mine) {
      ledger_free(mine);
      free(mine);
    }
    pthread_mutex_unlock(&lock);
  }
  return NULL;
}

int main(int argc, char **argv) {
  if (argc > 1)
    threads = atoi(argv[1]) < 1 ? 1 : atoi(argv[1]) > kMaxThreads ? kMaxThreads : atoi(argv[1]);
  if (argc > 2)
    rounds = atoi(argv[2]);
  pthread_t ids[kMaxThreads];
  pthread_barrier_init(&go, NULL, (unsigned)threads + 1);
  for (int i = 0; i < threads; i++)
    pthread_create(&ids[i], NULL, worker, (void *)(long)i);
  tracking_starts();
  pthread_barrier_wait(&go);
  for (int i = 0; i < threads; i++)
    pthread_join(ids[i], NULL);
  tracking_ends();
  ledger_print();
  return 0;
}
