import Foundation

/// One call site as the child counted it: a raw return address, named by the parent.
package struct RawAllocationSite: Codable, Hashable, Sendable {
    /// The first return address outside the Swift runtime and Foundation.
    package var address: UInt64
    /// Allocations made there during the work.
    package var allocations: Int
    /// Bytes they asked for.
    package var bytes: Int

    package init(address: UInt64, allocations: Int, bytes: Int) {
        self.address = address
        self.allocations = allocations
        self.bytes = bytes
    }
}
