internal import CStrainProbe
import Foundation

/// The allocator trials count through. Strain's malloc family (CStrainProbe/strain_alloc.c)
/// forwards to the next definition in lookup order: an allocator the environment preloads
/// (`LD_PRELOAD=libjemalloc.so.2`), else glibc's. Trials start with the runner's
/// environment, so they resolve the same library the runner did.
package enum TrialAllocator {
    /// The library the family forwards to, as the loader names it (`/lib/x86_64-linux-gnu/libc.so.6`,
    /// `/usr/lib/x86_64-linux-gnu/libjemalloc.so.2`), or `sanitizer`; nil if the loader named none.
    package static var library: String? {
        strain_alloc_forwarding(nil).map { String(cString: $0) }
    }

    /// Why trials cannot count through the allocator the environment chose, or nil when
    /// they can. A library whose malloc comes next but which lacks other members of the
    /// family (or whose members another library defines) is not forwarded to: trials
    /// would then count through glibc's allocator while the functions Strain does not
    /// define (valloc, malloc_usable_size) stay that library's, two allocators on the
    /// same blocks. `strain exec` does not refuse: there the probe forwards each function
    /// to its own next definition, so the program keeps the allocators it chose, each
    /// call where it would go alone (mixed or not, as the program has them).
    package static func refusal(environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        var missing: UnsafePointer<CChar>?
        let library = strain_alloc_forwarding(&missing).map { String(cString: $0) }
        guard let missing else { return nil }
        let preload = environment["LD_PRELOAD"].map { "LD_PRELOAD=\($0)" } ?? "the environment"
        return "\(preload) chose an allocator trials cannot count through: the next malloc is \(library ?? "in no library the loader names"), "
            + "which does not define \(String(cString: missing)) (missing, or another library's), so Strain's counting malloc family "
            + "would forward to glibc's allocator instead and a trial's blocks would pass between the two. Preload an allocator "
            + "that defines malloc, calloc, realloc, free, memalign, posix_memalign, aligned_alloc and malloc_usable_size (jemalloc, mimalloc and "
            + "tcmalloc do), or run without LD_PRELOAD; nothing ran"
    }
}
