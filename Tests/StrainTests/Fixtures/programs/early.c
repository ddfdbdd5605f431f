// libearly.so: a library of the program whose constructor installs a SIGSEGV
// handler before the probe's constructor runs (the dynamic linker starts a
// program's own libraries before LD_PRELOAD's): the probe must chain to it.
#include <signal.h>
#include <string.h>
#include <unistd.h>

static int installed;

static void early_handler(int signal_number) {
    (void)signal_number;
    static const char text[] = "early handler ran\n";
    write(1, text, sizeof(text) - 1);
    _exit(43);
}

__attribute__((constructor)) static void install(void) {
    struct sigaction action;
    memset(&action, 0, sizeof(action));
    action.sa_handler = early_handler;
    installed = sigaction(SIGSEGV, &action, NULL) == 0;
}

int early_handler_installed(void) { return installed; }
