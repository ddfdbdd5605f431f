import StrainHelpers
import StrainKit

/// How a worker picks its next operation.
struct OperationMix: Sendable {
    /// Percent of operations that read.
    var readPercent: Int
    /// Every this many writes, one is `removeAll` (0: never).
    var clearEvery: Int
    /// Only the guard's cost: every operation is `.nothing`.
    var emptyCriticalSection: Bool
}

/// Picks a worker's operations: reads by the mix's percentage (by index 89%,
/// count 10%, iterate 1%), the rest appends with ids only this worker makes,
/// every `clearEvery`-th write a `removeAll`. xorshift64: cheap, and the same
/// sequence for the same seed.
struct OperationPicker {
    /// Appended ids are `worker << idShift | n`, so the check can tell whose each one is.
    static let idShift = 40

    let worker: Int
    let mix: OperationMix
    private var random: UInt64
    private var writes = 0
    private var lastAppended: Int
    private(set) var appended = 0

    init(worker: Int, seed: UInt64, mix: OperationMix) {
        self.worker = worker
        self.mix = mix
        random = seed | 1
        lastAppended = worker << Self.idShift
    }

    @inline(__always)
    mutating func next() -> CollectionOperation {
        random ^= random << 13
        random ^= random >> 7
        random ^= random << 17
        let reads = Int(random % 100) < mix.readPercent
        if mix.emptyCriticalSection { return reads ? .peek : .nothing }
        if reads {
            let pick = (random >> 8) % 100
            return pick == 0 ? .iterate : pick <= 10 ? .count : .read(lastAppended)
        }
        writes += 1
        if mix.clearEvery > 0 && writes % mix.clearEvery == 0 { return .removeAll }
        lastAppended = worker << Self.idShift | appended
        appended += 1
        return .append(lastAppended)
    }
}

