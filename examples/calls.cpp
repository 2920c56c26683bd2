// Breakpoint fixture: calls leaf() COUNT times (default 10000) at the bottom of DEPTH nested frames
// (default 16) on each of THREADS threads (default 1), then prints how many calls were made, so a
// tracer's hit count can be checked against it. leaf() allocates with operator new (_Znwm).
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

static volatile int sink;
static int *volatile cell; // escapes, so the allocation cannot be optimised away

extern "C" __attribute__((noinline)) int leaf(int x) {
  cell = new int(x);
  sink = *cell;
  delete cell;
  return sink;
}

// Not a tail call (the + 1 after it), so every level keeps its frame.
extern "C" __attribute__((noinline)) int descend(int depth, int x) {
  return depth <= 1 ? leaf(x) : descend(depth - 1, x) + 1;
}

static void calls(long count, int depth) {
  for (long i = 0; i < count; i++)
    descend(depth, static_cast<int>(i));
}

int main(int argc, char **argv) {
  long count = argc > 1 ? std::atol(argv[1]) : 10000;
  int depth = argc > 2 ? std::atoi(argv[2]) : 16;
  int threads = argc > 3 ? std::atoi(argv[3]) : 1;
  std::vector<std::thread> workers;
  for (int t = 1; t < threads; t++)
    workers.emplace_back(calls, count, depth);
  calls(count, depth);
  for (std::thread &w : workers)
    w.join();
  std::printf("calls: %ld leaf calls\n", count * threads);
  return 0;
}
