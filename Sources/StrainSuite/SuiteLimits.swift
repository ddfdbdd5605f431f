import Foundation
import Glibc
import StrainKit

/// The range of every number a suite or the command line gives, checked before
/// anything runs. The README's "Limits" section lists the same values.
package enum SuiteLimits {
    /// Repetitions of a run (`repetitions:`, `--repetitions`).
    package static let repetitions = RecordRanges.repetitions
    /// Trials run at once (`--jobs`, and a resumed journal's `jobs`).
    package static let jobs = RecordRanges.jobs
    /// A trial's deadline (`timeout:`): 10 ms to 24 h.
    package static let timeoutSeconds = 0.01...86_400.0
    /// The watchdog's no-progress threshold (`stall:`): 100 ms to 24 h. The
    /// watchdog looks every 1 to 10 ms; below about ten looks, plain lock
    /// contention would read as a stall.
    package static let stallSeconds = 0.1...86_400.0
    /// A run's `memory-limit:` (the child's RLIMIT_AS): 64 MiB (the runtime and a
    /// few threads' stacks reserve tens of MiB) to 1 TiB.
    package static let memoryLimitBytes = (64 << 20)...(1 << 40)
    /// A run's `thread-limit:`: the parent kills a child with more threads.
    package static let threadLimit = 4...100_000
    /// Trials in one plan, over every run, before filters.
    package static let maximumTrials = RecordRanges.trialCount.upperBound
    /// Stack sizes are whole pages.
    package static let pageBytes = Int(sysconf(Int32(_SC_PAGESIZE)))
    /// The smallest stack a strategy's thread may have: the strategies' one floor.
    package static let minimumStackBytes = StrategySpec.minimumStackBytes
    /// Memory for the threads of one `thread-pool`: count × stack.
    package static let maximumPoolStackBytes = 16 << 30

    /// The most threads a `thread-pool` may ask for on this machine: the lower of
    /// the strategy's own cap, a quarter of the kernel's `threads-max` and of the
    /// process limit (`RLIMIT_NPROC`).
    package static var maximumPoolThreads: Int {
        var cap = StrategySpec.maximumPoolThreads
        if let text = try? String(contentsOfFile: "/proc/sys/kernel/threads-max", encoding: .utf8),
           let value = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)), value > 0 {
            cap = min(cap, max(1, value / 4))
        }
        var limit = rlimit()
        if getrlimit(__rlimit_resource_t(6) /* RLIMIT_NPROC */, &limit) == 0, limit.rlim_cur != rlim_t.max {
            cap = min(cap, max(1, Int(clamping: limit.rlim_cur) / 4))
        }
        return cap
    }

    /// The trials one run plans, counted without building them; nil past `Int.max`.
    package static func trialCount(of run: SuiteRun) -> Int? {
        var count = 1
        for factor in run.parameters.map(\.values.count) + [run.profiles.count, run.repetitions, run.strategies.count] {
            let (product, overflow) = count.multipliedReportingOverflow(by: factor)
            if overflow { return nil }
            count = product
        }
        return count
    }

    /// The trials a suite plans, counted without building them; nil past `Int.max`.
    package static func trialCount(_ suite: Suite) -> Int? {
        var total = 0
        for run in suite.runs {
            guard let count = trialCount(of: run) else { return nil }
            let (sum, overflow) = total.addingReportingOverflow(count)
            if overflow { return nil }
            total = sum
        }
        return total
    }

    /// Why a suite's plan is too large to build, or nil.
    package static func planSizeProblem(_ suite: Suite) -> String? {
        let count = trialCount(suite)
        guard let count, count <= maximumTrials else {
            let size = count.map { "\($0)" } ?? "more than \(Int.max)"
            return "the plan has \(size) trials (parameter values × profiles × repetitions × strategies, summed over the runs); the limit is \(maximumTrials): sweep fewer values, or split the suite"
        }
        return nil
    }

    /// A suite name as one safe path component: letters, digits, `.`, `-` and `_`,
    /// no leading dot, at most 64 characters (`../../x` becomes `x`).
    package static func safeFileName(_ name: String) -> String {
        var result = ""
        for scalar in name.unicodeScalars {
            if scalar.isASCII, CharacterSet.alphanumerics.contains(scalar) || "-_.".unicodeScalars.contains(scalar) {
                result.unicodeScalars.append(scalar)
            } else if !result.hasSuffix("-") {
                result += "-"
            }
        }
        while let first = result.first, first == "." || first == "-" { result.removeFirst() }
        while let last = result.last, last == "." || last == "-" { result.removeLast() }
        return result.isEmpty ? "suite" : String(result.prefix(64))
    }
}
