// Lock waits for strain exec --stall: `deadlock` takes two mutexes in opposite
// order on two threads (both wait forever); `held` keeps a mutex while it sleeps
// and another thread waits for it (a chain, not a cycle: it ends); `timed` waits
// on a condition with a timeout while the main thread sleeps.
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t first_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold_one;

static void *take_first_then_second(void *unused) {
    (void)unused;
    pthread_mutex_lock(&first_lock);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(&second_lock);
    return NULL;
}

static void *take_second_then_first(void *unused) {
    (void)unused;
    pthread_mutex_lock(&second_lock);
    pthread_barrier_wait(&both_hold_one);
    pthread_mutex_lock(&first_lock);
    return NULL;
}

static void *hold_while_sleeping(void *unused) {
    (void)unused;
    pthread_mutex_lock(&first_lock);
    struct timespec nap = {2, 0};
    nanosleep(&nap, NULL);
    pthread_mutex_unlock(&first_lock);
    return NULL;
}

static void *wait_for_first(void *unused) {
    (void)unused;
    usleep(100000);
    pthread_mutex_lock(&first_lock);
    pthread_mutex_unlock(&first_lock);
    return NULL;
}

static void *wait_with_timeout(void *unused) {
    (void)unused;
    pthread_cond_t never = PTHREAD_COND_INITIALIZER;
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 2;
    pthread_mutex_lock(&second_lock);
    pthread_cond_timedwait(&never, &second_lock, &until);
    pthread_mutex_unlock(&second_lock);
    return NULL;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    pthread_t a, b;
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    if (strcmp(mode, "deadlock") == 0) {
        pthread_barrier_init(&both_hold_one, NULL, 2);
        pthread_create(&a, NULL, take_first_then_second, NULL);
        pthread_create(&b, NULL, take_second_then_first, NULL);
    } else if (strcmp(mode, "held") == 0) {
        pthread_create(&a, NULL, hold_while_sleeping, NULL);
        pthread_create(&b, NULL, wait_for_first, NULL);
    } else if (strcmp(mode, "timed") == 0) {
        pthread_create(&a, NULL, wait_with_timeout, NULL);
        struct timespec nap = {2, 0};
        nanosleep(&nap, NULL);
        pthread_create(&b, NULL, wait_with_timeout, NULL);
        pthread_mutex_lock(&first_lock);  // free: returns at once
        pthread_mutex_unlock(&first_lock);
    } else {
        fprintf(stderr, "usage: locks deadlock|held|timed\n");
        return 2;
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    puts("done");
    return 0;
}
