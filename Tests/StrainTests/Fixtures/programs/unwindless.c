// A recursion that overflows its stack, built twice by the tests: with unwind
// tables (the walk reaches the thread's outermost frame) and without them and
// without frame pointers (libunwind cannot step past the first frame, as in a
// JIT's code): the record must then say its frame count is a lower bound.
#include <string.h>

__attribute__((noinline)) int recurse(int n) {
    volatile char pad[256];
    memset((char *)pad, n, sizeof pad);
    return recurse(n + 1) + pad[3];
}

int main(void) { return recurse(0); }
