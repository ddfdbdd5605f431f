// A recursion without end started from a std::thread's lambda (ExecEntryTests): in an
// optimised build the lambda is inlined into std::thread's invoker, and the recursion
// was entered at the lambda's line (line 12), not at the invoker's.
#include <cstdio>
#include <thread>

static int depth(int n) {
    volatile char pad[4096];
    pad[0] = (char)n;
    return depth(n + 1) + pad[0];
}
static void start() { std::thread worker([] { std::printf("%d\n", depth(0)); }); worker.join(); }

int main() {
    start();
    return 0;
}
