// A recursion without end in frames of a few dozen bytes (ExecEntryTests): an 8 MiB
// stack holds well over 100,000 of them, and the probe's record of the overflow is
// megabytes long. Built with -O1 -g.
#include <stdio.h>

static int depth(int n) {
    volatile char pad[8];
    pad[0] = (char)n;
    return depth(n + 1) + pad[0];
}

int main(void) {
    printf("%d\n", depth(0));
    return 0;
}
