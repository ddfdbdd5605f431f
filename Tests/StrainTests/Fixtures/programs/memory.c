// Memory errors AddressSanitizer stops a program for (ExecSanitizerTests). Build with
// -fsanitize=address. Modes: use-after-free, double-free, clean.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int *make(void) {
    int *values = malloc(4 * sizeof *values);
    values[0] = 7;
    return values;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "clean";
    int *values = make();
    if (strcmp(mode, "use-after-free") == 0) {
        free(values);
        printf("%d\n", values[0]);
    } else if (strcmp(mode, "double-free") == 0) {
        free(values);
        free(values);
    } else {
        printf("%d\n", values[0]);
        free(values);
    }
    return 0;
}
