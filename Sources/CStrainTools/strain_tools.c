// Ordinary code the probe must not carry: names for frames (the parent's
// symbolizer). The faults on purpose and the reference loop are in CStrainFaults.
#include "strain_tools.h"

// Never instrumented by a sanitizer (why: CStrainProbe/strain_alloc.c).
#pragma clang attribute push(__attribute__((disable_sanitizer_instrumentation)), apply_to = function)

#include <string.h>

// MARK: - Demangling (used by the parent's symbolizer)

// Exported by the Swift runtime (libswiftCore) and by libstdc++ respectively:
// the reason this file is not part of the preloadable probe.
extern char *swift_demangle(const char *mangled, size_t length, char *buffer, size_t *buffer_size, uint32_t flags);
extern char *__cxa_demangle(const char *mangled, char *buffer, size_t *length, int *status);

char *strain_demangle_swift(const char *name) {
    if (name == NULL) return NULL;
    return swift_demangle(name, strlen(name), NULL, NULL, 0);
}

char *strain_demangle_cxx(const char *name) {
    if (name == NULL || strncmp(name, "_Z", 2) != 0) return NULL;
    int status = 0;
    char *result = __cxa_demangle(name, NULL, NULL, &status);
    return status == 0 ? result : NULL;
}

#pragma clang attribute pop
