// A healthy program that waits quietly in a call a signal handler ends with EINTR whatever
// SA_RESTART says (signal(7)), and does not retry it, as many programs do not:
//   poll   the main thread polls a pipe its child writes to after 3 s, then reads it
// It prints what it got and exits 0, or says which call failed and exits 1.
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    setvbuf(stdout, NULL, _IONBF, 0);
    if (strcmp(argv[1], "poll") == 0) {
        int fds[2];
        if (pipe(fds) != 0) return 2;
        pid_t child = fork();
        if (child == 0) {
            close(fds[0]);
            sleep(3);
            (void)write(fds[1], "x", 1);
            _exit(0);
        }
        close(fds[1]);
        struct pollfd wanted = {fds[0], POLLIN, 0};
        if (poll(&wanted, 1, -1) < 0) {
            printf("poll failed: %s\n", strerror(errno));
            return 1;
        }
        char byte = 0;
        if (read(fds[0], &byte, 1) != 1) {
            printf("read failed: %s\n", strerror(errno));
            return 1;
        }
        waitpid(child, NULL, 0);
        printf("got %c\n", byte);
        return 0;
    }
    return 2;
}
