// Spec 000's worked example as a program: main calls func_M in a loop; func_M calls func_A once,
// func_B three times and func_C once; each of A, B and C is 10 straight-line instructions (9 ALU
// instructions and ret). `iteration` counts func_M calls, for `strobe loop --split expr:iteration`.
//   loop_funcm [SECONDS]
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t iteration;

#define TEN_INSTRUCTIONS(name)                                                                     \
  __asm__(".text\n.globl " #name "\n.type " #name ",@function\n" #name ":\n"                       \
          "  add %rdi, %rax\n  imul %rax, %rdx\n  xor %rdx, %rcx\n  add $3, %rax\n"                 \
          "  sub %rcx, %rdx\n  imul %rdx, %rax\n  add %rax, %rcx\n  xor $7, %rdx\n"                 \
          "  add %rcx, %rax\n  ret\n.size " #name ",.-" #name "\n")

TEN_INSTRUCTIONS(func_A);
TEN_INSTRUCTIONS(func_B);
TEN_INSTRUCTIONS(func_C);
void func_A(uint64_t);
void func_B(uint64_t);
void func_C(uint64_t);

__attribute__((noinline)) void func_M(uint64_t seed) {
  func_A(seed);
  func_B(seed);
  func_B(seed);
  func_B(seed);
  func_C(seed);
  iteration++;
}

int main(int argc, char **argv) {
  double seconds = argc > 1 ? atof(argv[1]) : 5;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    for (int i = 0; i < 100000; i++)
      func_M((uint64_t)i);
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec + (now.tv_nsec - start.tv_nsec) / 1e9 > seconds)
      return 0;
  }
}
