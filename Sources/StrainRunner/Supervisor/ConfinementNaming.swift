import StrainRecords
import StrainSymbols
import StrainWire

/// Names the frames of the violations a trial reported, in the parent.
enum ConfinementNaming {
    /// The violation with its frames named, in the parent.
    static func named(_ raw: RawConfinementViolation, maps: String, symbolizer: Symbolizer) -> ConfinementViolation {
        ConfinementViolation(
            object: raw.object, access: raw.access, owner: raw.owner, threadID: raw.threadID, threadName: raw.threadName,
            count: raw.count,
            accessStack: outsideChecker(symbolizer.frames(for: raw.accessStack.map(UInt64.init), maps: maps, firstIsExact: false)),
            ownerStack: outsideChecker(symbolizer.frames(for: raw.ownerStack.map(UInt64.init), maps: maps, firstIsExact: false))
        )
    }

    /// The stack from the scenario's own frame out: the checker's frames on top dropped.
    /// (Unoptimised builds add frames of their own there: closures, `withUnsafeMutableBufferPointer`.)
    static func outsideChecker(_ frames: [Frame]) -> [Frame] {
        let checker = ["ConfinementLog.", "Confined.", "ConfinementChecker.", "strain_capture_stack", "withUnsafeMutableBufferPointer"]
        let window = frames.prefix(16)
        guard let last = window.lastIndex(where: { frame in checker.contains { frame.symbol?.contains($0) == true } }),
              last + 1 < frames.count else { return frames }
        return Array(frames.dropFirst(last + 1))
    }
}
