// A C program for `strain exec`'s end-to-end tests (ExecTests), one behaviour per
// first argument. Built by the tests with cc; none of it knows about Strain.
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#ifdef WITH_EARLY_HANDLER
// From libearly.so, whose constructor installs a SIGSEGV handler before the probe's.
int early_handler_installed(void);
#endif

static volatile int sink;

// Recurses until the stack runs out; the frame's array keeps it from being a loop.
__attribute__((noinline)) static int recurse(int depth) {
    volatile char frame[256];
    frame[0] = (char)depth;
    sink = frame[0];
    return recurse(depth + 1) + frame[0];
}

static void *overflow_thread(void *argument) {
    (void)argument;
    pthread_setname_np(pthread_self(), "deep-decoder");
    recurse(0);
    return NULL;
}

static void own_handler(int signal_number) {
    (void)signal_number;
    static const char text[] = "own handler ran\n";
    write(1, text, sizeof(text) - 1);
    _exit(42);
}

__attribute__((noinline)) static void null_write(void) {
    volatile int *volatile nowhere = NULL;
    *nowhere = 1;
}

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;

__attribute__((noinline)) static void *lock_first_then_second(void *argument) {
    (void)argument;
    pthread_mutex_lock(&first);
    pthread_barrier_wait(&both_hold);
    pthread_mutex_lock(&second);
    return NULL;
}

__attribute__((noinline)) static void *lock_second_then_first(void *argument) {
    (void)argument;
    pthread_mutex_lock(&second);
    pthread_barrier_wait(&both_hold);
    pthread_mutex_lock(&first);
    return NULL;
}

static pthread_mutex_t never_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t never_signalled = PTHREAD_COND_INITIALIZER;

__attribute__((noinline)) static void *wait_for_nothing(void *argument) {
    (void)argument;
    pthread_mutex_lock(&never_mutex);
    for (;;) pthread_cond_wait(&never_signalled, &never_mutex);
    return NULL;
}

static void quit_handler(int signal_number) {
    (void)signal_number;
    static const char text[] = "own SIGQUIT handler ran\n";
    write(1, text, sizeof(text) - 1);
}

#include <errno.h>
#include <sys/uio.h>  // here, not above: the tests name lines of the functions above

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "thread-overflow") == 0) {
        pthread_t thread;
        pthread_create(&thread, NULL, overflow_thread, NULL);
        pthread_join(thread, NULL);
    } else if (strcmp(mode, "handler-after") == 0) {
        // Installed after the probe (in main): chained to, the probe stays.
        struct sigaction action;
        memset(&action, 0, sizeof(action));
        action.sa_handler = own_handler;
        sigaction(SIGSEGV, &action, NULL);
        null_write();
    } else if (strcmp(mode, "handler-signal") == 0) {
        signal(SIGSEGV, own_handler);
        null_write();
    } else if (strcmp(mode, "handler-before") == 0) {
#ifdef WITH_EARLY_HANDLER
        if (!early_handler_installed()) return 5;
#endif
        null_write();
    } else if (strcmp(mode, "hang") == 0) {
        // Two threads in a lock-order deadlock, three waiting on a condition no one signals.
        pthread_barrier_init(&both_hold, NULL, 2);
        pthread_t threads[5];
        pthread_create(&threads[0], NULL, lock_first_then_second, NULL);
        pthread_create(&threads[1], NULL, lock_second_then_first, NULL);
        for (int i = 2; i < 5; i++) pthread_create(&threads[i], NULL, wait_for_nothing, NULL);
        printf("ready %d\n", getpid());
        fflush(stdout);
        pthread_join(threads[0], NULL);
    } else if (strcmp(mode, "own-quit") == 0) {
        signal(SIGQUIT, quit_handler);
        pthread_t thread;
        pthread_create(&thread, NULL, wait_for_nothing, NULL);
        printf("ready %d\n", getpid());
        fflush(stdout);
        pause();
        sleep(5);
    } else if (strcmp(mode, "fork-child-fault") == 0) {
        // A forked child inherits the probe: its fault is recorded under its own pid.
        pid_t child = fork();
        if (child == 0) null_write();
        int status = 0;
        waitpid(child, &status, 0);
        printf("child %d %s %d\n", child, WIFSIGNALED(status) ? "signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        return 0;
    } else if (strcmp(mode, "double-free") == 0) {
        // glibc's malloc check aborts with its reason on standard error (and the terminal).
        fprintf(stderr, "about to free twice\n");
        char *volatile block = malloc(24);
        free(block);
        free(block);
        return 0;
    } else if (strcmp(mode, "quiet") == 0) {
        // Never faults: what it prints must come out the same with and without Strain.
        printf("stdout line 1\nargs:");
        for (int i = 2; i < argc; i++) printf(" [%s]", argv[i]);
        printf("\n");
        const char *preload = getenv("LD_PRELOAD");
        printf("LD_PRELOAD=%s\n", preload ? preload : "(unset)");
        int strain_variables = 0;
        for (char **variable = environ; *variable != NULL; variable++) strain_variables += strncmp(*variable, "STRAIN_PROBE", 12) == 0;
        printf("STRAIN_PROBE variables: %d\n", strain_variables);
        struct sigaction segv;
        sigaction(SIGSEGV, NULL, &segv);
        printf("SIGSEGV handler: %s\n", segv.sa_handler == SIG_DFL ? "default" : "set");
        fprintf(stderr, "stderr line\n");
        pthread_t thread;
        pthread_create(&thread, NULL, (void *(*)(void *))puts, "from a thread");
        pthread_join(thread, NULL);
        return 3;
    } else if (strcmp(mode, "chatter") == 0) {
        // Much more on standard error than the probe's tail keeps, by write, writev and
        // stdio, lines split across writes, stdout between them; then it gives up.
        char line[128];
        for (int i = 0; i < 6000; i++) {
            int length = snprintf(line, sizeof(line), "  chatter line %d of 6000, with some words to make it longer\n", i);
            if (i % 3 == 0) {
                write(2, line, 10);
                write(2, line + 10, (size_t)length - 10);
            } else if (i % 3 == 1) {
                struct iovec parts[2] = {{line, 5}, {line + 5, (size_t)length - 5}};
                writev(2, parts, 2);
            } else {
                fputs(line, stderr);
            }
            if (i % 1000 == 0) printf("stdout at %d\n", i);
        }
        fflush(stdout);
        static const char last[] = "chatter: gave up after 6000 lines\n";
        write(2, last, sizeof(last) - 1);
        return 2;
    } else if (strcmp(mode, "silent-segv") == 0) {
        // Says something on standard output only, then dereferences NULL.
        static const char said[] = "about to write through NULL\n";
        write(1, said, sizeof(said) - 1);
        null_write();
    } else if (strcmp(mode, "fork-child-says") == 0) {
        // The parent and then its forked child say something on standard error; the child aborts.
        static const char parent_says[] = "parent: about to fork\n", child_says[] = "child: giving up\n";
        write(2, parent_says, sizeof(parent_says) - 1);
        pid_t child = fork();
        if (child == 0) {
            write(2, child_says, sizeof(child_says) - 1);
            abort();
        }
        int status = 0;
        waitpid(child, &status, 0);
        printf("child %d %s %d\n", child, WIFSIGNALED(status) ? "signal" : "exit", WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
        return 0;
    } else if (strcmp(mode, "stdio-abort") == 0) {
        // Says why through stdio only (glibc's stdio writes by its internal write), then aborts.
        printf("loading widgets\n");
        fflush(stdout);
        fprintf(stderr, "loading %s\n", "widgets.conf");
        fputs("widgets.conf: ", stderr);
        fprintf(stderr, "line %d: expected a count, found '%s'\n", 12, "many");
        abort();
    } else if (strcmp(mode, "usage-exit") == 0) {
        // A getopt-style tool's failure: the error (perror), then its usage, then a status.
        errno = ENOENT;
        perror("error: cannot open /nonexistent/input.csv");
        fprintf(stderr, "usage: faults FILE\n");
        exit(3);
    } else if (strcmp(mode, "swift-style-abort") == 0) {
        // A debug-build Swift precondition's message over many lines, as SwiftNIO's run
        // (its last line is not the one that says what went wrong), by stdio; then an abort.
        fputs("starting the event loop\n", stderr);
        fputs("NIOCore/EventLoopFuture.swift:1234: Fatal error: BUG DETECTED: wait() must not be called when on an EventLoop.\n"
              "Calling wait() on any EventLoop can lead to\n"
              "- deadlocks\n"
              "- stalling other connections (Channels) on that EventLoop\n"
              "\n"
              "Further information:\n"
              "- current eventLoop: Optional(SelectableEventLoop { selector = Selector { descriptor = 3 } })\n"
              "- event loop associated to future: SelectableEventLoop { selector = Selector { descriptor = 3 } }\n", stderr);
        abort();
    } else if (strcmp(mode, "mallocs") == 0) {
        // Exactly 1,000 blocks of 24 bytes, each freed, and nothing else allocated.
        for (int index = 0; index < 1000; index++) {
            void *volatile block = malloc(24);
            free(block);
        }
    } else {
        fprintf(stderr, "usage: faults mallocs|thread-overflow|handler-after|handler-signal|handler-before|hang|own-quit|fork-child-fault|double-free|quiet|chatter|silent-segv|fork-child-says|stdio-abort|swift-style-abort\n");
        return 64;
    }
    return 0;
}
