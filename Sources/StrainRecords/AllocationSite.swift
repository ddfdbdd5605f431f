import Foundation

/// One place the trial's work allocated from, with what it allocated there.
///
/// The place is the first return address outside the Swift runtime and
/// Foundation (the probe follows their frame pointers past `swift_allocObject`
/// and `swift_slowAlloc`), so it names the code that asked: an initializer, an
/// append, a closure. The parent names it like a trace's frame.
public struct AllocationSite: Codable, Hashable, Sendable {
    /// The call site, named with file:line where the module has debug information.
    public var frame: Frame
    /// Allocations made there during the work.
    public var allocations: Int
    /// Bytes they asked for.
    public var bytes: Int

    /// A site at `frame` that made `allocations` allocations of `bytes` bytes in all.
    public init(frame: Frame, allocations: Int, bytes: Int) {
        self.frame = frame
        self.allocations = allocations
        self.bytes = bytes
    }

    /// Where a reader finds it: `OrderModel.swift:42 (OrderModel.init(from:))`,
    /// the function alone without debug information, the address without a name.
    public var place: String {
        let name = frame.symbol ?? String(format: "0x%llx", frame.address)
        guard let file = frame.file, let line = frame.line else { return frame.moduleName.map { "\(name) (\($0))" } ?? name }
        let base = file.split(separator: "/").last.map(String.init) ?? file
        return "\(base):\(line) (\(name))"
    }

    /// The same place, for joining a baseline's sites to a candidate's: the function,
    /// its file's name and the line, what `place` shows a reader.
    ///
    /// Addresses differ between builds, and so do the folders the two were built in:
    /// the CI recipe builds the base in a worktree under `$RUNNER_TEMP` and the head in
    /// the workspace, so joined by the absolute path no site of the team's own files
    /// matched, and the gate named three unchanged lines as the growth.
    public var identity: String {
        if let symbol = frame.symbol {
            let file = frame.file.map { $0.split(separator: "/").last.map(String.init) ?? $0 } ?? ""
            return "\(symbol)|\(file)|\(frame.line.map(String.init) ?? "")"
        }
        return "\(frame.moduleName ?? "?")+\(frame.moduleOffset ?? frame.address)"
    }
}
