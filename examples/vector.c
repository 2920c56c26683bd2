// Deterministic x86-64 code for exact step traces of the extended registers: `mix` works on
// 256-bit AVX vectors (the upper halves of ymm registers), `series` on long doubles (the x87
// stack and its tags). main first resets the vector and x87 state, so that what the C library
// left there before main does not differ between runs; two runs single-stepped from `mix` then
// see the same values in every register.
#include <immintrin.h>
#include <stdio.h>

__attribute__((noinline)) static void reset_vector_state(int avx) {
  if (avx)
    __asm__ volatile("vzeroall" ::: "memory");
  __asm__ volatile("fninit" ::: "memory");
}

__attribute__((target("avx"), noinline)) double mix(const double *in, int n) {
  __m256d acc = _mm256_set1_pd(1.0);
  for (int i = 0; i + 4 <= n; i += 4)
    acc = _mm256_add_pd(_mm256_mul_pd(acc, _mm256_loadu_pd(in + i)), _mm256_set1_pd(0.5));
  double lanes[4];
  _mm256_storeu_pd(lanes, acc);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

__attribute__((noinline)) long double series(int n) {
  long double sum = 0;
  for (int i = 1; i <= n; i++)
    sum += 1.0L / ((long double)i * i);
  return sum;
}

int main(void) {
  const int avx = __builtin_cpu_supports("avx");
  reset_vector_state(avx);
  double in[64];
  for (int i = 0; i < 64; i++)
    in[i] = 1.0 + i / 64.0;
  const double mixed = avx ? mix(in, 64) : 0;
  printf("%f %Lf\n", mixed, series(400));
  return 0;
}
