// Shared between the fault handler and the dumps: not part of the module's API.
#ifndef STRAIN_INTERNAL_H
#define STRAIN_INTERNAL_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#pragma GCC visibility push(hidden)

/// Whether a SIGSYS is the watchdog's dump request rather than a real fault.
int strain_is_dump_request(const siginfo_t *info);

/// Walks the calling thread's stack from `context` into its dump slot.
void strain_dump_answer(const siginfo_t *info, void *context);

/// Whether a signal asks for a whole-process dump: the dump signal (SIGQUIT), or
/// a SIGSYS queued from another process with STRAIN_DUMP_REQUEST_VALUE.
int strain_is_process_dump_request(int signal_number, const siginfo_t *info);

/// Dumps every thread of the process into `dump-PID-N.txt` in the record
/// directory, from a signal handler: the calling thread walks itself from
/// `context`, the others answer SIGSYS requests. One dump at a time.
void strain_dump_process(int signal_number, const siginfo_t *info, void *context);

/// The signals the probe's handler holds back while it runs: the program's
/// asynchronous ones (not the faults, SIGSYS or SIGQUIT, which it answers itself).
void strain_handler_mask(sigset_t *mask);

/// At the end of a dump's handler: a blocking call the dump interrupted fails with
/// EINTR when a signal of the program's came meanwhile, as it would have without the dump.
void strain_dump_keep_interruption(void *context);

/// Buffered write(2) into a caller's buffer: the only output the handlers use.
typedef struct {
    int fd;
    char *buffer;
    size_t capacity;
    size_t used;
} strain_writer;

void strain_writer_flush(strain_writer *writer);
void strain_writer_put(strain_writer *writer, const char *text, size_t length);
void strain_writer_string(strain_writer *writer, const char *text);
void strain_writer_hex(strain_writer *writer, uintptr_t value);
void strain_writer_decimal(strain_writer *writer, long long value);
void strain_writer_field_hex(strain_writer *writer, const char *name, uintptr_t value);
void strain_writer_field_decimal(strain_writer *writer, const char *name, long long value);
/// A walk's kept frames, one `f 0x…` line each, in call order (strain_fault_walk.c).
void strain_writer_walk_frames(strain_writer *writer, const strain_fault_walk *walk);
/// Copies a whole file (a /proc file) into the writer; `skip_newline_end` drops a trailing newline.
void strain_writer_file(strain_writer *writer, const char *path, int skip_newline_end);

/// `<stem><pid>[-<sequence>]<extension>`, a name in the record directory, into
/// `out`; 0 when there is no record directory or it does not fit.
int strain_record_name(char *out, size_t capacity, const char *stem, long sequence, const char *extension);

/// renameat(2) of `from` to `to`, both names in the record directory, while it is the
/// folder the probe was given; -1 otherwise. Async-signal-safe.
int strain_record_rename(const char *from, const char *to);

/// unlinkat(2) of `name` in the record directory, under the same check.
int strain_record_remove(const char *name);

/// The record directory, "" when records go to the descriptor.
extern char strain_record_directory[];

/// sigaction(2) as the probe calls it (libc's, past the preload's interposer).
extern strain_sigaction_function strain_sigaction;

#pragma GCC visibility pop

#endif
