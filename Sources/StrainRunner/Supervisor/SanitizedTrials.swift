import Foundation
import Synchronization
import Glibc
import StrainKit
import StrainSymbols

/// Trials of a `strain` built with ThreadSanitizer (`-Xswiftc -sanitize=thread`): where
/// each trial's reports go, and what they make of its outcome.
///
/// Every trial is spawned: the trial server's copies are made by a raw `clone` that the
/// sanitizer does not follow, so a copy would run with the server's shadow state. The
/// reports go to a folder of the runner's own (`log_path`, one file per trial process,
/// named by its pid), never read from the trial's standard error.
package struct SanitizedTrials: Sendable {
    /// The folder the sanitizer writes each trial's reports to.
    package let folder: String

    /// Whether this process (and so every trial it spawns of the same binary) runs under ThreadSanitizer.
    package static let threadSanitizer: Bool = dlsym(nil, "__tsan_init") != nil

    /// The runner's own modules: a trial runs the same binary and libraries.
    static let runnerModules = SanitizerLog.ownModules()

    /// Why the trial server is not used, for run.json's execution record.
    package static let serverNote = "this strain is built with ThreadSanitizer, which does not follow the trial server's copies (a raw clone): every trial was spawned"

    /// A folder of its own for this runner's trials' reports, or nil when the binary is not
    /// sanitized; removed when the runner exits (each trial's reports were read then).
    package static func make() -> SanitizedTrials? {
        guard threadSanitizer else { return nil }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("strain-sanitizer-\(getpid())-\(UUID().uuidString.prefix(8))").path
        guard (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil else { return nil }
        if made.withLock({ $0.append(folder); return $0.count == 1 }) {
            atexit { SanitizedTrials.made.withLock { $0.forEach { try? FileManager.default.removeItem(atPath: $0) } } }
        }
        return SanitizedTrials(folder: folder)
    }

    /// The folders `make()` made in this process: every run left one behind, empty, in /tmp.
    private static let made = Mutex<[String]>([])

    /// The sanitizer's default that trials change, before the user's own options (which
    /// may set it again): the longest per-thread history. With the default, ThreadSanitizer
    /// drops a race whose earlier access it can no longer restore: 8 workers of the
    /// unguarded array on gcd-global had their race named in 2 of 8 trials, 8 of 8 with this.
    package static let defaults = "history_size=7"

    /// The trial's environment with the sanitizer told where to write, not to symbolize
    /// (Strain names the frames), and not to change the trial's exit status (the
    /// harness's protocol owns it; the reports are the evidence).
    package func environment(_ base: [String: String]) -> [String: String] {
        var environment = base
        let existing = [Self.defaults, base["TSAN_OPTIONS"]].compactMap { $0 }.joined(separator: " ")
        environment["TSAN_OPTIONS"] = SanitizerLog.options(existing: existing, folder: folder, extra: " exitcode=0")
        return environment
    }

    /// The reports of the trial process `pid`, named and deduplicated; its file is removed.
    package func reports(pid: Int32, symbolizer: Symbolizer) -> SanitizerLog.Read {
        let path = (folder as NSString).appendingPathComponent("\(SanitizerLog.fileName).\(pid)")
        defer { unlink(path) }
        return SanitizerLog.reports(inFiles: [path], symbolizer: symbolizer, fallbackModules: Self.runnerModules)
    }

    /// The outcome with the reports taken into account. A trial that ThreadSanitizer saw
    /// race is `dataRace` when its work ended (it completed, threw, or broke its
    /// invariant) and when it crashed or its child ended without a result
    /// (`childEndedWithoutResult`): a race corrupts memory, so the crash is the race's
    /// (9 of 16 racing trials of an outside team's cache crashed with SIGSEGV, their
    /// races reported; a fresh-clone test run had an unguarded array's trial exit 0
    /// without its result). What the trial did is kept in the message, its trace in
    /// the record. An overflow, a stall or a timeout stays what it was, with the races
    /// as its evidence, as does a failure on the runner's side.
    package static func outcome(_ outcome: TrialOutcome, reports: [SanitizerReport], childEndedWithoutResult: Bool = false) -> TrialOutcome {
        let races = reports.filter(\.isRace)
        let childFailed = outcome.kind == .harnessError && childEndedWithoutResult
        guard !races.isEmpty, childFailed || [.completed, .threw, .invariantViolated, .crashed].contains(outcome.kind) else { return outcome }
        let count = races.reduce(0) { $0 + $1.count }
        let work: String
        switch outcome.kind {
        case .completed: work = ""
        case .harnessError: work = "; then " + (outcome.message ?? "the child ended without a result") + " (the race may have corrupted the harness's memory)"
        case .crashed: work = "; then the trial crashed" + (outcome.signal.map { " with \(SignalName.of($0))" } ?? "") + (outcome.message.map { ": \($0)" } ?? "")
        default: work = "; the work \(outcome.kind == .threw ? "threw" : "broke its invariant")" + (outcome.message.map { ": \($0)" } ?? "")
        }
        return TrialOutcome(kind: .dataRace, message: "ThreadSanitizer reported \(count) race\(count == 1 ? "" : "s") (\(races.count) distinct)\(work)")
    }
}
