import StrainRecords

/// Sanitizer reports as evidence: per distinct race or memory error, its accesses
/// (for a race, both sides), where the memory came from and where the threads were
/// created, each with its innermost frames and their file:line.
package enum SanitizerText {
    /// Frames shown of each stack on one line.
    static let frameCount = 5

    /// `work (race.c:5) ← strain_thread_trampoline (strain_preload.c:199) ← …`.
    package static func stack(_ frames: [Frame]) -> String {
        frames.prefix(frameCount).map(SanitizerReport.place).joined(separator: " ← ") + (frames.count > frameCount ? " ← …" : "")
    }
}
