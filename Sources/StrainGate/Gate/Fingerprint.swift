import StrainRecords

/// One field in which two runs' machines differ.
package struct FingerprintDifference: Codable, Hashable, Sendable {
    package var field: String
    package var baseline: String
    package var candidate: String
    /// A hard field refuses a cross-run comparison unless allowed; a soft one warns.
    package var hard: Bool
}

/// What two runs must share for their timings to compare.
///
/// Hard fields (architecture, cores, the cgroup's CPU limit, the build
/// configuration, Swift and Strain versions, the suite) change what is measured;
/// soft fields (host, kernel, CPU model, memory) usually do not, and only warn.
package enum MachineFingerprint {
    package static func differences(_ baseline: RunRecord, _ candidate: RunRecord) -> [FingerprintDifference] {
        let b = baseline.environment
        let c = candidate.environment
        func text<T>(_ value: T?) -> String { value.map { "\($0)" } ?? "unknown" }
        let fields: [(String, String, String, Bool)] = [
            ("architecture", b.architecture, c.architecture, true),
            ("cores", "\(b.cores)", "\(c.cores)", true),
            ("cgroup CPU limit", text(b.cgroupCPULimit), text(c.cgroupCPULimit), true),
            ("build configuration", text(b.buildConfiguration), text(c.buildConfiguration), true),
            ("Swift version", b.swiftVersion, c.swiftVersion, true),
            ("Strain version", baseline.strainVersion, candidate.strainVersion, true),
            ("suite", baseline.suite.name, candidate.suite.name, true),
            ("host", b.host, c.host, false),
            ("kernel", b.kernel, c.kernel, false),
            ("CPU model", text(b.cpuModel), text(c.cpuModel), false),
            // In MiB, as `baseline show` writes it: raw bytes (25269460992) read as noise.
            ("memory", "\(MetricDescriptor.Unit.grouped(Double(b.memoryBytes / (1 << 20)))) MiB", "\(MetricDescriptor.Unit.grouped(Double(c.memoryBytes / (1 << 20)))) MiB", false),
        ]
        return fields.compactMap { field, old, new, hard in
            old == new ? nil : FingerprintDifference(field: field, baseline: old, candidate: new, hard: hard)
        }
    }
}
