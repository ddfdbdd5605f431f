// Programs woken from outside their tree, which `strain exec --stall` watches (ExecOutsideWakeTests):
//   wait FILE serve   prints "ready PID", waits on a futex in FILE (a shared mapping another process
//                     can wake: --stall cannot see that way out and calls it deadlocked), then uses
//                     about 0.3 s of CPU, prints "woke" and waits for a signal
//   wait FILE crash   the same wait, then writes through NULL at once
//   wake FILE         sets the word in FILE and wakes its waiter
//   wait FILE pulses N  the same wait, N times: woken each time the word reaches the next
//                     number, it works a few microseconds (less than a clock tick) and
//                     waits again; then prints "served N" and exits 0
//   pulse FILE N MS   sets the word to 1, 2, … N, one every MS milliseconds, waking the waiter
//   stdin-child       prints "ready PID"; a child reads a line from standard input (a pipe whose
//                     writer is outside the tree), prints it and posts the process-shared
//                     semaphore the parent waits on (a wait no holder of which can be read)
//   own-pipe          prints "ready PID" and reads a pipe of its own that nothing writes to:
//                     no thread is left to write (deadlocked)
//   self-pipe         the same read, but its SIGHUP handler writes a byte to the pipe (the
//                     self-pipe trick): on SIGHUP it prints "woke" and exits 0
//   hup-child         the parent waits on a process-shared semaphore that its child posts once
//                     the child's own SIGHUP handler has run; the child prints "ready PID" (its
//                     own pid: the one to send SIGHUP), then the parent prints "woke" and exits 0
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/futex.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static uint32_t *shared_word(const char *path) {
    int fd = open(path, O_RDWR | O_CREAT, 0600);
    if (fd < 0 || ftruncate(fd, 4096) != 0) return NULL;
    void *mapped = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    return mapped == MAP_FAILED ? NULL : mapped;
}

static sem_t hangup;

static void on_hangup(int signal) {
    (void)signal;
    sem_post(&hangup);
}

static int self_pipe[2];

static void on_hangup_write(int signal) {
    (void)signal;
    char byte = 1;
    (void)!write(self_pipe[1], &byte, 1);
}

static double cpu_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    if (strcmp(argv[1], "stdin-child") == 0) {
        sem_t *handled = mmap(NULL, sizeof *handled, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (handled == MAP_FAILED || sem_init(handled, 1, 0) != 0) return 2;
        printf("ready %d\n", getpid());
        pid_t child = fork();
        if (child == 0) {
            char line[64] = {0};
            if (fgets(line, sizeof line, stdin) == NULL) _exit(1);
            printf("child read %s", line);
            sem_post(handled);
            _exit(0);
        }
        while (sem_wait(handled) != 0) {}
        int status = 0;
        waitpid(child, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    if (strcmp(argv[1], "own-pipe") == 0 || strcmp(argv[1], "self-pipe") == 0) {
        if (pipe(self_pipe) != 0) return 2;
        if (strcmp(argv[1], "self-pipe") == 0) {
            struct sigaction action = {0};
            action.sa_handler = on_hangup_write;
            action.sa_flags = SA_RESTART;
            if (sigaction(SIGHUP, &action, NULL) != 0) return 2;
        }
        printf("ready %d\n", getpid());
        char byte = 0;
        while (read(self_pipe[0], &byte, 1) != 1) {}
        printf("woke\n");
        return 0;
    }
    if (strcmp(argv[1], "hup-child") == 0) {
        sem_t *handled = mmap(NULL, sizeof *handled, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (handled == MAP_FAILED || sem_init(handled, 1, 0) != 0) return 2;
        pid_t child = fork();
        if (child == 0) {
            struct sigaction action = {0};
            action.sa_handler = on_hangup;
            if (sem_init(&hangup, 0, 0) != 0 || sigaction(SIGHUP, &action, NULL) != 0) _exit(2);
            printf("ready %d\n", getpid());
            while (sem_wait(&hangup) != 0) {}
            sem_post(handled);
            _exit(0);
        }
        while (sem_wait(handled) != 0) {}
        int status = 0;
        waitpid(child, &status, 0);
        printf("woke\n");
        return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    if (argc < 3) return 2;
    uint32_t *word = shared_word(argv[2]);
    if (word == NULL) return 2;
    if (strcmp(argv[1], "wake") == 0) {
        __atomic_store_n(word, 1, __ATOMIC_SEQ_CST);
        syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
        return 0;
    }
    if (strcmp(argv[1], "pulse") == 0 && argc >= 5) {
        int count = atoi(argv[3]), milliseconds = atoi(argv[4]);
        for (int i = 1; i <= count; i++) {
            usleep((useconds_t)milliseconds * 1000);
            __atomic_store_n(word, (uint32_t)i, __ATOMIC_SEQ_CST);
            syscall(SYS_futex, word, FUTEX_WAKE, 1, NULL, NULL, 0);
        }
        return 0;
    }
    if (strcmp(argv[1], "wait") != 0 || argc < 4) return 2;
    printf("ready %d\n", getpid());
    if (strcmp(argv[3], "pulses") == 0 && argc >= 5) {
        uint32_t count = (uint32_t)atoi(argv[4]);
        for (uint32_t served = 0; served < count;) {
            uint32_t seen = __atomic_load_n(word, __ATOMIC_SEQ_CST);
            if (seen == served) {
                syscall(SYS_futex, word, FUTEX_WAIT, served, NULL, NULL, 0);
                continue;
            }
            served = seen;
        }
        printf("served %u\n", count);
        return 0;
    }
    while (__atomic_load_n(word, __ATOMIC_SEQ_CST) == 0) syscall(SYS_futex, word, FUTEX_WAIT, 0, NULL, NULL, 0);
    if (strcmp(argv[3], "crash") == 0) {
        volatile int *nowhere = NULL;
        *nowhere = 1;
    }
    volatile uint64_t spin = 0;
    double start = cpu_seconds();
    while (cpu_seconds() - start < 0.3) {
        for (int i = 0; i < 100000; i++) spin++;
    }
    printf("woke\n");
    pause();
    return 0;
}
