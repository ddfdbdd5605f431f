// A counter two threads increment: under a lock when built with -DLOCKED, without one
// otherwise. The gate test builds both at the same path, as a pull request that removes
// the lock would (ExecSanitizerTests). Build with -fsanitize=thread.
#include <pthread.h>
#include <stdio.h>

static long counter;
#ifdef LOCKED
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
#endif

static void *work(void *unused) {
    for (int i = 0; i < 1000; i++) {
#ifdef LOCKED
        pthread_mutex_lock(&lock);
#endif
        counter++;
#ifdef LOCKED
        pthread_mutex_unlock(&lock);
#endif
    }
    return unused;
}

int main(void) {
    pthread_t threads[2];
    for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, work, NULL);
    for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
    printf("counter %ld\n", counter);
    return 0;
}
