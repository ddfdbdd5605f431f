// A C++ program for `strain exec`'s last-words tests (ExecStandardErrorWordsTests):
// throws an exception nothing catches, so libstdc++'s verbose terminate handler says
// "terminate called after throwing an instance of 'std::runtime_error'" and its
// what() on standard error (by fputs, fwrite and fputc) before it aborts. Built by the
// tests with c++; it knows nothing of Strain.
#include <cstdio>
#include <stdexcept>

int main() {
    std::printf("counting widgets\n");
    std::fflush(stdout);
    throw std::runtime_error("the widget count went negative");
}
