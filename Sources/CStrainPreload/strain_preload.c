// The preloadable probe: installs CStrainProbe in any program at load time and
// keeps it installed on every thread (see include/strain_preload.h).
//
// Rules: the constructor and the interposers run in ordinary code (malloc is
// fine); the handlers they install are CStrainProbe's, which keep its rules.
#include "strain_preload.h"
#include "strain_probe.h"

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/// Frames a fault record keeps (head and tail), as in a trial.
#define STRAIN_PRELOAD_FRAMES (1 << 18)
/// Threads a dump can hold, and frames kept per thread.
#define STRAIN_PRELOAD_DUMP_THREADS 4096
#define STRAIN_PRELOAD_DUMP_FRAMES 128

typedef int (*strain_create_function)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef __sighandler_t (*strain_signal_function)(int, __sighandler_t);

static strain_create_function strain_real_pthread_create;
static strain_sigaction_function strain_real_sigaction;
static strain_signal_function strain_real_signal;
static int strain_preload_active;
static pthread_key_t strain_thread_key;

// ThreadSanitizer's stacks are a shadow stack that its instrumented functions push
// on entry: code it did not instrument (this file) is invisible, and the caller's
// place in an instrumented function is lost with it ("created by main thread at:
// pthread_create, __libc_start_call_main", with main's line missing). In a program
// built with TSan, pthread_create below enters and leaves a frame of its own through
// the runtime's entry points, so a new thread's creation names the caller's line.
static void (*strain_tsan_func_entry)(void *);
static void (*strain_tsan_func_exit)(void);

static void strain_find_real_functions(void) {
    if (strain_real_sigaction != NULL) return;
    strain_tsan_func_entry = (void (*)(void *))dlsym(RTLD_DEFAULT, "__tsan_func_entry");
    strain_tsan_func_exit = (void (*)(void))dlsym(RTLD_DEFAULT, "__tsan_func_exit");
    strain_real_pthread_create = (strain_create_function)dlsym(RTLD_NEXT, "pthread_create");
    strain_real_sigaction = (strain_sigaction_function)dlsym(RTLD_NEXT, "sigaction");
    strain_real_signal = (strain_signal_function)dlsym(RTLD_NEXT, "signal");
}

// The environment is read and changed in `environ` itself, never through
// getenv/setenv/unsetenv: a program may export its own (bash does, over its own
// variable table), and then unsetenv leaves the process's environment as it was,
// every command the program starts loads the probe again, and LD_PRELOAD leaks.
// Entries are removed in place, so a `main(argc, argv, envp)` that reads envp
// (bash builds its variables from it) sees the same array without them.

/// The value of `name` in `environ`, or NULL.
static const char *strain_environment_value(const char *name) {
    size_t length = strlen(name);
    for (char **entry = environ; entry != NULL && *entry != NULL; entry++) {
        if (strncmp(*entry, name, length) == 0 && (*entry)[length] == '=') return *entry + length + 1;
    }
    return NULL;
}

/// Removes every `name=…` from `environ`, shifting the rest down in place.
static void strain_environment_remove(const char *name) {
    if (environ == NULL) return;
    size_t length = strlen(name);
    char **write = environ;
    for (char **read = environ; *read != NULL; read++) {
        if (strncmp(*read, name, length) == 0 && (*read)[length] == '=') continue;
        *write++ = *read;
    }
    *write = NULL;
}

/// Replaces the value of `name` in place with `entry` (a whole `name=value` that lives for the process).
static void strain_environment_replace(const char *name, char *entry) {
    size_t length = strlen(name);
    for (char **slot = environ; slot != NULL && *slot != NULL; slot++) {
        if (strncmp(*slot, name, length) == 0 && (*slot)[length] == '=') {
            *slot = entry;
            return;
        }
    }
}

// Removes `library` from LD_PRELOAD (where `strain exec` put it first) and the
// probe's own variables, so the program's environment is its own again and the
// programs it executes start without the probe.
static void strain_scrub_environment(const char *library) {
    const char *preload = strain_environment_value("LD_PRELOAD");
    if (preload != NULL && library != NULL) {
        size_t length = strlen(library);
        if (strcmp(preload, library) == 0) {
            strain_environment_remove("LD_PRELOAD");
        } else if (strncmp(preload, library, length) == 0 && (preload[length] == ':' || preload[length] == ' ')) {
            const char *rest = preload + length + 1;
            char *entry = malloc(strlen("LD_PRELOAD=") + strlen(rest) + 1);
            if (entry != NULL) {
                strcpy(entry, "LD_PRELOAD=");
                strcat(entry, rest);
                strain_environment_replace("LD_PRELOAD", entry);  // kept for the process's life, as putenv's are
            }
        }
    }
    strain_environment_remove(STRAIN_PRELOAD_DIRECTORY);
    strain_environment_remove(STRAIN_PRELOAD_LIBRARY);
    strain_environment_remove(STRAIN_PRELOAD_THREAD_STACK);
    strain_environment_remove(STRAIN_PRELOAD_MAIN_STACK);
    strain_environment_remove(STRAIN_PRELOAD_PARENT);
    strain_environment_remove(STRAIN_PRELOAD_CHILD_SIGNAL);
}

// Whether this process is the program `strain exec` started: its parent is the
// strain named by `parent`. A process whose parent is another one while that
// strain still lives got the probe's variables some other way (a program that
// kept them in its environment and started a command): it is not the program,
// and the probe stays out of its way (returns 0). A strain that died before this
// ran has left the program re-parented: that is still the program (returns 1).
static int strain_is_the_program(const char *parent) {
    if (parent == NULL) return 1;
    pid_t expected = (pid_t)strtol(parent, NULL, 10);
    if (expected <= 0 || getppid() == expected) return 1;
    return kill(expected, 0) == 0 ? 0 : 1;
}

// The program ends with strain exec: SIGTERM when strain dies (a SIGKILL gives it
// no chance to pass a signal on), as if strain had passed on a SIGTERM. A strain
// that died before this ran has already left the program re-parented.
static void strain_bind_to_exec(const char *parent) {
    if (parent == NULL) return;
    pid_t expected = (pid_t)strtol(parent, NULL, 10);
    if (expected <= 0) return;
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) return;
    if (getppid() != expected) kill(getpid(), SIGTERM);
}

// Frees a thread's alternate stack when it ends (the key's value is only a flag).
static void strain_thread_ended(void *value) {
    (void)value;
    strain_thread_release();
}

// `<record directory>/allocations-PID.txt`, written at the program's exit when it
// was counted (empty otherwise); and the pid it belongs to (not a forked child's).
static char strain_allocations_path[4096];
static pid_t strain_allocations_pid;

/// The program's allocations, from the probe's constructor to its exit.
__attribute__((destructor)) static void strain_preload_end(void) {
    if (strain_allocations_path[0] == 0 || getpid() != strain_allocations_pid) return;
    strain_alloc_end();
    strain_alloc_write_totals(strain_allocations_path);
}

__attribute__((constructor)) static void strain_preload_start(void) {
    strain_find_real_functions();
    const char *directory = strain_environment_value(STRAIN_PRELOAD_DIRECTORY);
    if (directory == NULL || directory[0] == 0 || strain_real_sigaction == NULL || strain_real_pthread_create == NULL) {
        return;  // not started by `strain exec`: stay out of the way
    }
    if (!strain_is_the_program(strain_environment_value(STRAIN_PRELOAD_PARENT))) {
        // Inherited, not given: clean the environment for this process's own children and do nothing else.
        strain_scrub_environment(strain_environment_value(STRAIN_PRELOAD_LIBRARY));
        return;
    }
    char *record_directory = strdup(directory);
    const char *thread_stack = strain_environment_value(STRAIN_PRELOAD_THREAD_STACK);
    const char *main_stack = strain_environment_value(STRAIN_PRELOAD_MAIN_STACK);
    size_t thread_bytes = thread_stack != NULL ? strtoull(thread_stack, NULL, 10) : 0;
    size_t main_bytes = main_stack != NULL ? strtoull(main_stack, NULL, 10) : 0;
    strain_bind_to_exec(strain_environment_value(STRAIN_PRELOAD_PARENT));
    const char *child_signal = strain_environment_value(STRAIN_PRELOAD_CHILD_SIGNAL);
    if (child_signal != NULL && strcmp(child_signal, "ignore") == 0) {
        struct sigaction ignore;
        memset(&ignore, 0, sizeof(ignore));
        ignore.sa_handler = SIG_IGN;
        sigemptyset(&ignore.sa_mask);
        strain_real_sigaction(SIGCHLD, &ignore, NULL);
    }
    strain_scrub_environment(strain_environment_value(STRAIN_PRELOAD_LIBRARY));
    if (record_directory == NULL) return;

    // A profile (--profile ios): before any thread of the program starts.
    if (thread_bytes != 0 || main_bytes != 0) strain_set_stack_profile(thread_bytes, main_bytes);
    strain_probe_use_sigaction(strain_real_sigaction);
    if (strain_probe_record_to_directory(record_directory) != 0) return;
    // The whole program is the work: its allocations are counted from here to its exit.
    if (strain_alloc_is_interposing()) {
        int length = snprintf(strain_allocations_path, sizeof(strain_allocations_path), "%s/allocations-%d.txt", record_directory, (int)getpid());
        if (length > 0 && (size_t)length < sizeof(strain_allocations_path)) {
            strain_allocations_pid = getpid();
            strain_alloc_begin(0);
        } else {
            strain_allocations_path[0] = 0;
        }
    }
    free(record_directory);
    if (pthread_key_create(&strain_thread_key, strain_thread_ended) != 0) return;
    if (strain_dump_install(STRAIN_PRELOAD_DUMP_THREADS, STRAIN_PRELOAD_DUMP_FRAMES) != 0) return;
    if (strain_probe_install(-1, STRAIN_PRELOAD_FRAMES) != 0) return;
    // SIGQUIT asks for a dump unless something before us (a library's
    // constructor, the parent's SIG_IGN) already has a use for it.
    // Otherwise it is marked as the program's (`sigquit-PID`), and `strain dump` asks with SIGSYS.
    struct sigaction quit;
    if (strain_real_sigaction(SIGQUIT, NULL, &quit) == 0 && !(quit.sa_flags & SA_SIGINFO) && quit.sa_handler == SIG_DFL) {
        strain_probe_answer_dumps_on(SIGQUIT);
    } else {
        strain_probe_release_dump_signal(0, NULL);
    }
    strain_preload_active = 1;
}

// MARK: - pthread_create

typedef struct {
    void *(*start)(void *);
    void *argument;
} strain_thread_start;

_Static_assert(sizeof(strain_thread_start) <= STRAIN_RESERVED_SCRATCH, "the start routine fits the reserved stack's scratch bytes");

// The new thread's first code: its alternate stack (reserved by its creator, the
// start routine in its scratch bytes) is installed before the program's code runs.
static void *strain_thread_trampoline(void *reserved) {
    strain_thread_start start;
    memcpy(&start, strain_thread_reserved_scratch(reserved), sizeof(start));
    if (strain_thread_install_reserved_alternate_stack(reserved) == 0) pthread_setspecific(strain_thread_key, (void *)1);
    return start.start(start.argument);
}

static int strain_create_thread(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *), void *argument) {
    if (!strain_preload_active) return strain_real_pthread_create(thread, attributes, start, argument);
    // No malloc here and no free on the new thread: a thread that never allocates
    // would otherwise get glibc's per-thread cache and an arena for our sake.
    void *reserved = strain_thread_reserve_alternate_stack();
    if (reserved == NULL) return strain_real_pthread_create(thread, attributes, start, argument);
    strain_thread_start boxed = {start, argument};
    memcpy(strain_thread_reserved_scratch(reserved), &boxed, sizeof(boxed));
    int status = strain_real_pthread_create(thread, attributes, strain_thread_trampoline, reserved);
    if (status != 0) strain_thread_unreserve_alternate_stack(reserved);
    return status;
}

int pthread_create(pthread_t *thread, const pthread_attr_t *attributes, void *(*start)(void *), void *argument) {
    strain_find_real_functions();
    int traced = strain_tsan_func_entry != NULL && strain_tsan_func_exit != NULL;
    if (traced) strain_tsan_func_entry(__builtin_return_address(0));
    int status = strain_create_thread(thread, attributes, start, argument);
    if (traced) strain_tsan_func_exit();
    return status;
}

// MARK: - sigaction and signal

int sigaction(int signal_number, const struct sigaction *action, struct sigaction *old) {
    strain_find_real_functions();
    if (!strain_preload_active || !strain_probe_owns_signal(signal_number)) {
        return strain_real_sigaction(signal_number, action, old);
    }
    if (signal_number == strain_probe_dump_signal() && action != NULL) {
        int wants_default = !(action->sa_flags & SA_SIGINFO) && action->sa_handler == SIG_DFL;
        if (!wants_default) {
            // The program uses SIGQUIT itself: it is the program's from now on.
            if (old != NULL) strain_probe_program_action(signal_number, NULL, old);
            int status = strain_probe_release_dump_signal(signal_number, action);
            if (status != 0) {
                errno = status;
                return -1;
            }
            return 0;
        }
    }
    // The probe stays installed; the program's handler is kept and chained to.
    strain_probe_program_action(signal_number, action, old);
    return 0;
}

__sighandler_t signal(int signal_number, __sighandler_t handler) {
    strain_find_real_functions();
    if (!strain_preload_active || !strain_probe_owns_signal(signal_number)) {
        return strain_real_signal(signal_number, handler);
    }
    struct sigaction action, old;
    memset(&action, 0, sizeof(action));
    action.sa_handler = handler;
    // glibc's signal() has BSD semantics.
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(signal_number, &action, &old) != 0) return SIG_ERR;
    return old.sa_handler;
}
