import StrainRecords

/// Every trial's place on report.html, where a gate row or a person links to one trial
/// by its ``StrainRecords/TrialID/anchor``. A trial is anchored on the evidence the page shows for it (its trace,
/// dump, sanitizer or confinement entry: its own, or the one its key's first such trial
/// stands for), else on its key's table row; each id is on the page once.
package struct TrialAnchors: Sendable {
    /// The trials each evidence entry (`trace-2`, `stall-1`, `sanitizer-1`) stands for.
    private var shown: [String: [TrialID]] = [:]
    private var place: [TrialID: String] = [:]

    /// No trial anchored: a page of no run.
    package init() {}

    init(_ run: RunRecord, traces: TraceSection, stalls: StallSection, sanitizer: EvidenceSection, confinement: EvidenceSection) {
        for trial in run.trials {
            let place = trial.trace.flatMap { trace in traces.entries.first { $0.trial.key == trial.key && $0.trace.signal == trace.signal }?.anchor }
                ?? (trial.dump == nil ? nil : stalls.entries.first { $0.trial.key == trial.key && $0.trial.outcome.kind == trial.outcome.kind }?.anchor)
                ?? (trial.sanitizerReports?.isEmpty == false ? sanitizer.anchor(of: trial) : nil)
                ?? (trial.confinementViolations?.isEmpty == false ? confinement.anchor(of: trial) : nil)
            guard let place else { continue }
            shown[place, default: []].append(trial.id)
            self.place[trial.id] = place
        }
    }

    /// The anchor of the trace, dump or evidence entry that shows `trial`, if the page shows one.
    package func evidence(of trial: TrialRecord) -> String? { place[trial.id] }

    /// An empty `<span>` per id the evidence entry `anchor` holds, for its visible heading.
    package func markers(at anchor: String) -> String { (shown[anchor] ?? []).map(Self.marker).joined() }

    /// The ids of those of a table row's `trials` that have no evidence on the page.
    package func rowMarkers(_ trials: [TrialRecord]) -> String { trials.map(\.id).filter { place[$0] == nil }.map(Self.marker).joined() }

    static func marker(_ trial: TrialID) -> String { "<span id=\"\(trial.anchor)\"></span>" }
}
