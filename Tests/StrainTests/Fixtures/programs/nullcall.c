// A dispatch table whose entry was never filled in: a call through NULL.
#include <stdio.h>
static void (*handlers[2])(int) = {0};
__attribute__((noinline)) static void dispatch(int event) { handlers[event](event); puts("unreachable"); }
__attribute__((noinline)) static void on_request(int event) { dispatch(event); puts("unreachable"); }
int main(void) { on_request(1); return 0; }
