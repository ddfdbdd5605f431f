// A counter two threads increment, with and without a lock: ThreadSanitizer's
// data race for `strain exec` to record (ExecSanitizerTests). Build with
// -fsanitize=thread. Modes: race, guarded.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int *counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *unguarded(void *unused) {
    for (int i = 0; i < 1000; i++) (*counter)++;
    return unused;
}

static void *guarded(void *unused) {
    for (int i = 0; i < 1000; i++) {
        pthread_mutex_lock(&lock);
        (*counter)++;
        pthread_mutex_unlock(&lock);
    }
    return unused;
}

int main(int argc, char **argv) {
    int locked = argc > 1 && strcmp(argv[1], "guarded") == 0;
    counter = malloc(sizeof *counter);
    *counter = 0;
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, locked ? guarded : unguarded, NULL);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    printf("counter %d\n", *counter);
    return 3;
}
