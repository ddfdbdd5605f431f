import StrainKit

extension CapVerdict {
    /// The verdicts for a trial on `strategy` whose peak of blocked workers was
    /// `needed`: every platform whose GCD cap is below it. A runner policy, decided
    /// when the trial is recorded.
    package static func verdicts(strategy: StrategySpec, needed: Int?) -> [CapVerdict] {
        guard strategy.usesDispatchPool, let needed else { return [] }
        let byCap = Dictionary(grouping: Profile.allCases.filter { needed > $0.gcdThreadCap }, by: \.gcdThreadCap)
        return byCap.keys.sorted().map { cap in
            CapVerdict(platforms: byCap[cap]!.map(\.rawValue).joined(separator: " and "), cap: cap, needed: needed)
        }
    }
}
