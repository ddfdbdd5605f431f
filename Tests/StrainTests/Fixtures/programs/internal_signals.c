// Sets glibc's own signals 32 and 33 to their default ("default") or ignores them
// ("ignore"), by the system call (sigaction refuses them), then executes the rest of its
// arguments: a launcher that starts a program as a shell's fork and exec would, or as
// glibc's posix_spawn does.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct kernel_sigaction {
    void *handler;
    unsigned long words[4];
};

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: internal_signals default|ignore PROGRAM [ARGUMENT...]\n");
        return 2;
    }
    struct kernel_sigaction action;
    memset(&action, 0, sizeof(action));
    action.handler = strcmp(argv[1], "ignore") == 0 ? (void *)SIG_IGN : (void *)SIG_DFL;
    for (int signal_number = 32; signal_number <= 33; signal_number++) {
        if (syscall(SYS_rt_sigaction, signal_number, &action, NULL, sizeof(unsigned long)) != 0) {
            perror("rt_sigaction");
            return 2;
        }
    }
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
