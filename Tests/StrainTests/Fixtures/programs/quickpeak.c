// Touches 96 MiB and exits at once, before `strain exec`'s first sample of /proc
// (ExecPeakMemoryTests): its peak RSS must still be recorded, from the kernel. Every
// page is written through a volatile pointer, so no compiler leaves the writes out.
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    size_t size = (size_t)96 << 20;
    volatile char *block = malloc(size);
    if (block == NULL) return 1;
    long sum = 0;
    for (size_t at = 0; at < size; at += 4096) block[at] = (char)(at >> 12);
    for (size_t at = 0; at < size; at += 4096) sum += block[at];
    printf("%ld\n", sum);
    return 0;
}
