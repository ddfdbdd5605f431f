import StrainKit
import StrainSymbols
import StrainWire

/// The allocation sites a trial's child counted, named in the parent.
package enum AllocationNaming {
    /// The sites with their frames named, in the parent; the same function and line
    /// reached from several addresses (inlined copies) are one site.
    package static func named(_ raw: [RawAllocationSite], maps: String, symbolizer: Symbolizer) -> [AllocationSite] {
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
