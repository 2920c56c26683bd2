// A 32-bit x86 program, for the unsupported-architecture tests: strobe samples x86-64 and AArch64
// only, and must say so. No C library, so that it builds without 32-bit libraries installed.
void _start(void) {
  for (volatile unsigned long i = 0;; i++)
    ;
}
