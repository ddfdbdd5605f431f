// Lock waits for strain exec --stall: `deadlock` takes two mutexes in opposite
// order on two threads (both wait forever); `held` keeps a mutex while it sleeps
// and another thread waits for it (a chain, not a cycle: it ends); `timed` waits
// on a condition with a timeout while the main thread sleeps; `reload` is a daemon
// whose main thread waits on a semaphore its SIGHUP handler posts (sem_post is
// async-signal-safe: the POSIX way to handle reload and stop), then exits 0;
// `shared FILE` waits on a process-shared semaphore in FILE, which `post FILE`, run
// from outside the program's tree, posts.
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
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

static sem_t reload_requested;

// A process-shared semaphore in `path`, created (and initialised to 0) when `create`.
static sem_t *shared_semaphore(const char *path, int create) {
    int descriptor = open(path, create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0600);
    if (descriptor < 0 || (create && ftruncate(descriptor, sizeof(sem_t)) != 0)) return NULL;
    sem_t *semaphore = mmap(NULL, sizeof(sem_t), PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0);
    close(descriptor);
    if (semaphore == MAP_FAILED) return NULL;
    if (create) sem_init(semaphore, 1, 0);
    return semaphore;
}

static void post_reload(int signal_number) {
    (void)signal_number;
    sem_post(&reload_requested);
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    pthread_t a, b;
    if (strcmp(mode, "post") == 0 && argc > 2) {
        sem_t *semaphore = shared_semaphore(argv[2], 0);
        return semaphore != NULL && sem_post(semaphore) == 0 ? 0 : 1;
    }
    sem_t *shared = NULL;
    if (strcmp(mode, "shared") == 0 && (argc < 3 || (shared = shared_semaphore(argv[2], 1)) == NULL)) {
        fprintf(stderr, "usage: locks shared FILE (a file it can create)\n");
        return 2;
    }
    if (strcmp(mode, "reload") == 0) {
        sem_init(&reload_requested, 0, 0);
        struct sigaction action;
        memset(&action, 0, sizeof(action));
        action.sa_handler = post_reload;
        sigemptyset(&action.sa_mask);
        sigaction(SIGHUP, &action, NULL);
    }
    printf("ready %d\n", (int)getpid());
    fflush(stdout);
    if (strcmp(mode, "reload") == 0) {
        while (sem_wait(&reload_requested) != 0 && errno == EINTR) {}
        puts("reloaded");
        return 0;
    }
    if (shared != NULL) {
        while (sem_wait(shared) != 0 && errno == EINTR) {}
        puts("posted");
        return 0;
    }
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
        fprintf(stderr, "usage: locks deadlock|held|timed|reload|shared FILE|post FILE\n");
        return 2;
    }
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    puts("done");
    return 0;
}
