import Foundation
import StrainKit
import StrainSuite

/// What `strain run` was asked, as the command line gave it (each number already
/// checked against its range by the command line).
package struct RunRequest: Sendable {
    /// The suite file; nil for the resumed run's, else the default suite.
    package var suite: String?
    /// The run's folder; nil for `Reports/<suite>-<timestamp>`.
    package var out: String?
    /// The folder of a stopped run to continue.
    package var resume: String?
    /// Replace the run `out` holds.
    package var force = false
    package var filters: [String] = []
    package var skips: [String] = []
    package var repetitions: Int?
    /// `K/N`, as typed.
    package var shard: String?
    package var jobs: Int?
    package var isolation: TrialIsolation?

    package init() {}
}

/// Why `strain run` will not start: nothing was run, and exit 2 says so.
package struct RunRefusal: Error, Sendable, CustomStringConvertible {
    /// The suite file's own mistakes, `FILE:LINE:COLUMN: error: …` a line each, are
    /// printed as they are; every other refusal is a sentence of the command's.
    package var isSuiteText: Bool
    package var message: String

    package var description: String { message }

    init(_ message: String, isSuiteText: Bool = false) {
        self.message = message
        self.isSuiteText = isSuiteText
    }
}

/// `strain run`'s policy in one place, the command line's one entry point: what the
/// request and a resumed run's journal say together, the suite read and planned,
/// filtered and sharded, and the folder opened (or resumed, its plan checked).
/// The command line parses arguments, prints and renders; the trials run through
/// `RunController`.
///
/// Two steps, so that `--list` writes nothing and the tools a counted run needs are
/// checked before any folder is made: `plan` then `open`.
package struct RunJob {
    /// The suite file read.
    package let suitePath: String
    package let suite: Suite
    /// The plan after `--filter` and `--skip`, before the shard.
    package let selected: Plan
    /// The trials this run has: the shard's, or all selected.
    package let plan: Plan
    package let planRecord: PlanRecord
    package let shard: Shard?
    package let jobs: Int
    package let isolation: TrialIsolation
    private let request: RunRequest
    private let filters: [String]
    private let skips: [String]
    private let repetitions: Int?
    private let shardText: String?
    /// The resumed run's folder and journal (locked), for `--resume`.
    private let resumed: (directory: OutputDirectory, journal: Journal)?

    /// Reads the request, and the journal of the run it resumes, into a plan. Nothing is
    /// written; a resumed folder is locked.
    package static func plan(_ request: RunRequest, catalog: ScenarioCatalog, defaultSuite: String) throws(RunRefusal) -> RunJob {
        // With --resume, the folder is locked first and its journal says how the run was asked for.
        var resumed: (directory: OutputDirectory, journal: Journal)?
        if let folder = request.resume {
            do {
                let opened = try OutputDirectory(path: folder, mode: .resume)
                resumed = (opened, try Journal(resuming: opened.journalPath))
            } catch {
                throw RunRefusal("\(error)")
            }
        }
        let header = resumed?.journal.header
        let suitePath = request.suite ?? header?.suite ?? defaultSuite
        // The default is Strain's own smoke suite: a package with its own `strain` names its suite.
        if request.suite == nil, header == nil, !FileManager.default.fileExists(atPath: suitePath) {
            throw RunRefusal("no suite given, and there is no \(suitePath) here; name one: strain run SUITE.yaml ('strain explain SCENARIO' prints a suite to start from)")
        }
        let repetitions = request.repetitions ?? header?.repetitions
        let shardText = request.shard ?? header?.shard
        var suite: Suite
        do {
            suite = try SuiteParser(catalog: catalog).parse(contentsOf: suitePath)
        } catch {
            throw RunRefusal(error.description, isSuiteText: true)
        }
        if let repetitions {
            suite.repetitions = repetitions
            for index in suite.runs.indices { suite.runs[index].repetitions = repetitions }
        }
        var shard: Shard?
        if let shardText {
            guard let parsed = Shard(parsing: shardText) else {
                throw RunRefusal("--shard '\(shardText)' is not K/N with 1 ≤ K ≤ N ≤ \(Shard.maximumCount); write e.g. --shard 2/4")
            }
            shard = parsed
        }
        if let problem = SuiteLimits.planSizeProblem(suite) { throw RunRefusal("\(suitePath): \(problem)") }
        let filters = request.filters.isEmpty ? header?.filters ?? [] : request.filters
        let skips = request.skips.isEmpty ? header?.skips ?? [] : request.skips
        let selected = Plan(suite: suite).selecting(TrialSelection(filters: filters, skips: skips))
        guard !selected.trials.isEmpty else {
            throw RunRefusal("no trial of \(suitePath) matches the --filter and --skip given; `strain run \(suitePath) --list` prints the plan")
        }
        let plan = shard.map { selected.shard($0) } ?? selected
        let planRecord = PlanRecord(hash: selected.identity, trialCount: selected.trials.count,
                                    shard: shard.map { ShardRecord(index: $0.index, count: $0.count, trialCount: plan.trials.count) })
        return RunJob(suitePath: suitePath, suite: suite, selected: selected, plan: plan, planRecord: planRecord, shard: shard,
                      jobs: request.jobs ?? header?.jobs ?? 1, isolation: request.isolation ?? header?.isolation ?? .server,
                      request: request, filters: filters, skips: skips, repetitions: repetitions, shardText: shardText, resumed: resumed)
    }

    /// The run's folder and journal: the resumed ones, when the journal's plan is this
    /// plan, or a new folder (`request.out`, else `Reports/<suite>-<timestamp>`) with a
    /// new journal that says how the run was asked for.
    package func open(timestamp: String) throws(RunRefusal) -> (directory: OutputDirectory, journal: Journal) {
        if let resumed {
            if let header = resumed.journal.header, header.plan != planRecord {
                throw RunRefusal("\(request.resume ?? resumed.directory.path): its journal belongs to another plan (hash \(header.plan.hash), \(header.plan.trialCount) trials) than \(suitePath) gives now (hash \(planRecord.hash), \(planRecord.trialCount) trials): the suite, the filters, the repetitions or the shard changed; run it afresh with --force")
            }
            return resumed
        }
        let path = request.out ?? "Reports/\(SuiteLimits.safeFileName(suite.name))-\(timestamp)"
        do {
            let opened = try OutputDirectory(path: path, mode: request.force ? .force : .fresh)
            let journal = try Journal(creating: opened.journalPath, header: JournalHeader(
                plan: planRecord, suite: AtomicFile.canonicalPath(suitePath) ?? suitePath, filters: filters, skips: skips,
                repetitions: repetitions, shard: shardText, startedAt: Date().formatted(.iso8601), jobs: jobs, isolation: isolation))
            return (opened, journal)
        } catch {
            // The folder's and the journal's errors each say what to do (their descriptions).
            throw RunRefusal("\(error)")
        }
    }
}
