// A 64 KiB pthread says how many bytes of its stack are in use when its start routine
// runs: the probe's pthread_create (strain exec) must leave it as deep as without
// Strain (ExecThreadDepthTests).
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdint.h>
static void *entry(void *unused) {
    pthread_attr_t attr; void *low; size_t size; volatile char here;
    pthread_getattr_np(pthread_self(), &attr); pthread_attr_getstack(&attr, &low, &size);
    printf("used %lu of %lu\n", (unsigned long)((uintptr_t)low + size - (uintptr_t)&here), (unsigned long)size);
    return unused;
}
int main(void) {
    pthread_attr_t attr; pthread_attr_init(&attr); pthread_attr_setstacksize(&attr, 65536);
    pthread_t t; pthread_create(&t, &attr, entry, NULL); pthread_join(t, NULL); return 0;
}
