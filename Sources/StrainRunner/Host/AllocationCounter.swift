import CStrainProbe
import Foundation
import StrainKit

/// One call site as the child counted it: a raw return address, named by the parent.
public struct RawAllocationSite: Codable, Hashable, Sendable {
    /// The first return address outside the Swift runtime and Foundation.
    public var address: UInt64
    /// Allocations made there during the work.
    public var allocations: Int
    /// Bytes they asked for.
    public var bytes: Int
}

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
        var entries = [strain_alloc_site_count](repeating: strain_alloc_site_count(), count: siteCapacity)
        let count = entries.withUnsafeMutableBufferPointer { strain_alloc_read_sites($0.baseAddress, siteCapacity) }
        var merged: [UInt64: (allocations: Int, bytes: Int)] = [:]
        for entry in entries.prefix(count) {
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
            let line = String(cString: buffer)
            if !lines.contains(line) { lines.append(line) }
        }
        return lines.joined(separator: "\n")
    }

    /// The sites with their frames named, in the parent; the same function and line
    /// reached from several addresses (inlined copies) are one site.
    static func named(_ raw: [RawAllocationSite], maps: String, symbolizer: Symbolizer) -> [AllocationSite] {
        let frames = symbolizer.frames(for: raw.map(\.address), maps: maps, firstIsExact: false)
        var sites: [AllocationSite] = []
        var index: [String: Int] = [:]
        for (site, frame) in zip(raw, frames) {
            let named = AllocationSite(frame: frame, allocations: site.allocations, bytes: site.bytes)
            if let known = index[named.identity] {
                sites[known].allocations += site.allocations
                sites[known].bytes += site.bytes
            } else {
                index[named.identity] = sites.count
                sites.append(named)
            }
        }
        return sites.sorted { $0.allocations > $1.allocations }
    }
}
