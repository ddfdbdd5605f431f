// Recursion whose frames are larger than the guard under the stack: the `sub`
// that makes a frame moves the stack pointer past the guard before anything is
// touched, so the fault lands far under the stack.
//   bigframes thread  — 300 KiB frames in a 2 MiB pthread;
//   bigframes main    — 3 MiB frames on the main thread, under an 8 MiB limit.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

__attribute__((noinline)) static int deep(int n) {
    volatile char frame[300 * 1024];
    frame[0] = (char)n;
    frame[sizeof frame - 1] = (char)n;
    if (n > 1000) return frame[5];
    return deep(n + 1) + frame[0];
}

__attribute__((noinline)) static int eat(int n) {
    volatile char frame[3 << 20];
    frame[0] = (char)n;
    frame[sizeof frame - 1] = (char)n;
    if (n > 200) return frame[7];
    return eat(n + 1) + frame[0];
}

static void *start(void *unused) {
    (void)unused;
    printf("%d\n", deep(0));
    return NULL;
}

int main(int argc, char **argv) {
    if (argc > 1 && strcmp(argv[1], "main") == 0) {
        // The main stack grows up to RLIMIT_STACK, read when it grows: with no limit
        // (`ulimit -s unlimited`) it would never overflow, so set 8 MiB and start again.
        struct rlimit limit;
        if (getrlimit(RLIMIT_STACK, &limit) == 0 && limit.rlim_cur != 8 << 20) {
            limit.rlim_cur = 8 << 20;
            if (limit.rlim_max != RLIM_INFINITY && limit.rlim_max < limit.rlim_cur) return 2;
            if (setrlimit(RLIMIT_STACK, &limit) != 0) return 2;
            execv("/proc/self/exe", argv);
            return 2;
        }
        printf("%d\n", eat(0));
        return 0;
    }
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 2 << 20);
    pthread_t thread;
    if (pthread_create(&thread, &attributes, start, NULL) != 0) return 2;
    pthread_join(thread, NULL);
    return 0;
}
