internal import CStrainProbe
import Foundation
import StrainKit
import StrainWire

/// The child's allocation count around the scenario's measured work: the probe's
/// malloc family (CStrainProbe/strain_alloc.c) counts while it is on.
///
/// - Important: counting is process-wide. Harness threads that run during the
///   work call `strain_alloc_exclude_thread` (the watchdog does), so what is
///   counted is the scenario's work and the strategy's threads.
enum AllocationCounter {
    /// Sites a trial reports, most allocations first: enough to name what grew.
    static let reportedSites = 16
    /// Site entries read back: 16 threads' worth of the probe's 256 sites each
    /// (a trial's threads rarely fill more; the totals never depend on it).
    static let siteCapacity = 16 * 256

    /// Zeroes the counts and starts counting, by call site too unless
    /// STRAIN_ALLOCATION_SITES=off (for measuring what the sites cost).
    static func begin() { strain_alloc_begin(getenv("STRAIN_ALLOCATION_SITES").map { String(cString: $0) } == "off" ? 0 : 1) }

    /// Stops counting.
    static func end() { strain_alloc_end() }

    /// The counts so far into `metrics`.
    static func add(to metrics: inout TrialMetrics) {
        let totals = strain_alloc_read_totals()
        metrics.allocations = Int(totals.allocations)
        metrics.allocatedBytes = Int(clamping: totals.bytes)
        metrics.frees = Int(totals.frees)
    }

    /// The sites that allocated most, merged across threads.
    static func topSites() -> [RawAllocationSite] {
        // Only what the probe wrote is read: zeroing the 96 KiB first faulted in its pages on every trial.
        let entries = [strain_alloc_site_count](unsafeUninitializedCapacity: siteCapacity) { buffer, count in
            count = strain_alloc_read_sites(buffer.baseAddress, siteCapacity)
        }
        return merged(entries)
    }

    /// `entries` (several threads' entries of one address among them) as sites, most allocations first, the first `reportedSites`.
    static func merged(_ entries: [strain_alloc_site_count]) -> [RawAllocationSite] {
        var merged: [UInt64: (allocations: Int, bytes: Int)] = [:]
        for entry in entries {
            let old = merged[UInt64(entry.address)] ?? (0, 0)
            merged[UInt64(entry.address)] = (old.allocations + Int(entry.allocations), old.bytes + Int(clamping: entry.bytes))
        }
        return merged.map { RawAllocationSite(address: $0.key, allocations: $0.value.allocations, bytes: $0.value.bytes) }
            .sorted { ($0.allocations, $0.address) > ($1.allocations, $1.address) }
            .prefix(reportedSites).map { $0 }
    }
}

extension AllocationCounter {
    /// The lines of `/proc/self/maps` that hold the sites, from the loader's tables:
    /// all the parent needs to name them.
    static func mappings(of sites: [RawAllocationSite]) -> String {
        var lines: [String] = []
        var buffer = [CChar](repeating: 0, count: 4096 + 128)
        for site in sites {
            let length = buffer.withUnsafeMutableBufferPointer { strain_alloc_describe_mapping(UInt(site.address), $0.baseAddress, $0.count) }
            guard length > 0 else { continue }
            let line = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if !lines.contains(line) { lines.append(line) }
        }
        return lines.joined(separator: "\n")
    }
}

/// A trial's allocation count narrowed to one closure, for a scenario whose work is a
/// single call (StrainTesting's expectations): counting restarts, zeroed, as the call
/// begins and stops as it returns, so the strategy's own thread start, the unit's
/// bookkeeping and the result's hand-off around it are not counted. Allocations on
/// threads the call starts are counted, as in any trial; the watchdog's are not.
package enum AllocationWindow {
    /// Runs `body` with the trial's count restarted around it; when the trial does not
    /// count allocations (`STRAIN_ALLOCATIONS=off`), it only runs `body`.
    package static func around<T>(_ body: () throws -> T) rethrows -> T {
        guard strain_alloc_is_counting() != 0 else { return try body() }
        AllocationCounter.begin()
        defer { AllocationCounter.end() }
        return try body()
    }
}
