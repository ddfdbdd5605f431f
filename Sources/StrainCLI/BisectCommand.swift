import ArgumentParser
import Foundation
import StrainKit
import StrainReports
import StrainRunner
import StrainSuite
import StrainText

/// `strain bisect`: how much stack a scenario needs, or how large a parameter
/// can be on a given stack, found by experiment, each probe a trial of its own.
struct BisectCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bisect",
        abstract: "Find by experiment the smallest thread stack a scenario completes on, or the largest parameter value that completes on a strategy.",
        discussion: """
        Without --over: binary search over thread(stack) from 32KiB to 1GiB, to one page (4KiB). \
        With --over PARAM: the largest value of that integer parameter that completes on --strategy and --profile. \
        Either way the boundary is confirmed with --repetitions on both sides; where they disagree the range \
        where outcomes mix is reported. Recursion that overflows every stack in the same cycle, deeper the \
        larger the stack, is reported as unbounded. Each probe is a trial in run.json; the answers are its `bisect` section.

        Examples:
          strain bisect cyclic-graph -p operation=unarchive -p shape=chain \\
              -p size=2000 --per size
          strain bisect cyclic-graph -p operation=unarchive -p shape=chain \\
              --over size --strategy 'thread(512KiB)'
          strain bisect nested-json -p operation=serialize --over depth

        """ + "\nExit codes (as in `strain --help`): " + ExitCodeContract.otherCommands[0]
    )

    @Argument(help: "The scenario (see `strain list`).", completion: .list(scenarioNames()))
    var scenario: String

    @Option(name: [.customShort("p"), .customLong("parameter")], help: "A parameter value, name=value (repeatable); unset ones take their defaults.")
    var parameter: [String] = []

    @Option(help: "Search this integer parameter for its largest completing value, instead of searching the stack.")
    var over: String?

    @Option(help: "For --over: the strategy the probes run on (default thread(512KiB)).", completion: .custom { _, _, _ in strategyCompletions() })
    var strategy: String?

    @Option(help: "The profile the probes emulate: linux, ios or macos.", completion: .list(Profile.allCases.map(\.rawValue)))
    var profile: String = "linux"

    @Option(help: "For a stack search: an integer parameter to measure the stack per unit of; a second search runs at twice its value.")
    var per: String?

    @Flag(help: "For --over on a sized strategy: skip the second search (at twice the stack) that gives bytes per unit.")
    var noSlope = false

    @Option(help: "The low end of the range: a stack (32KiB to 1GiB, in whole pages) or a parameter value (default: the smallest allowed).")
    var low: String?

    @Option(help: "The high end of the range (default: 1GiB, or the parameter's largest value).")
    var high: String?

    @Option(parsing: .unconditional, help: "Repetitions of the probes either side of the boundary, 1 to 20.")
    var repetitions: Int = 3

    @Option(parsing: .unconditional, help: "Each probe's deadline: 100ms to 10m.")
    var timeout: String = "60s"

    @Option(parsing: .unconditional, help: "The watchdog's threshold in each probe: 100ms to 10m.")
    var stall: String = "2s"

    @Option(help: "How each probe runs: spawn (the whole binary started anew, as a program of its own: the default, so the answer holds for a real program) or server (a copy of the trial server: faster, and may fit a level more).")
    var isolation: TrialIsolation = .spawn

    @Flag(help: "Keep trying larger stacks up to --high even when the overflows already say unbounded.")
    var exhaustive = false

    @Option(help: "Where to write run.json, trials.jsonl and the reports (default: Reports/bisect-<scenario>-<timestamp>).")
    var out: String?

    @Option(parsing: .upToNextOption, help: "Reports to write besides run.json: html (report.html), md (summary.md), junit (junit.xml).")
    var format: [ReportFormat] = [.html, .md, .junit]

    /// Bad input: printed as one line naming the option and the fix, exit code 2, no probe started.
    struct InputError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    func run() throws {
        let requests: [BisectRequest]
        let slopeParameter: String?
        do {
            (requests, slopeParameter) = try makeRequests(catalog: activeCatalog.withLock { $0 })
        } catch {
            writeStandardError("error: \(error.description)")
            throw ExitCode(StrainExitCode.inputError)
        }
        let directory = out ?? "Reports/bisect-\(scenario)-\(runTimestamp())"
        let terminal = RunCommand.terminalReport()
        let controller = BisectController(runner: TrialSupervisor(executable: currentExecutablePath(), isolation: isolation), outputDirectory: directory)
        print(terminal.fit("Bisecting \(scenario): \(requests.map(Self.describe).joined(separator: "; then "))"))
        var count = 0
        let record: RunRecord
        do {
            record = try controller.run(requests, slopeParameter: slopeParameter) { trial in
                count += 1
                print(TerminalStyle.safe(terminal.fit(terminal.probeLine(trial, index: count))))
            }
        } catch {
            writeStandardError("error: \(error.description)")
            throw ExitCode(StrainExitCode.harnessError)
        }
        var written = [controller.runJSONPath, controller.journalPath]
        for format in format where format != .json {
            let path = (directory as NSString).appendingPathComponent(format.fileName)
            do {
                try format.render(record).write(to: URL(fileURLWithPath: path), options: .atomic)
                written.append(path)
            } catch {
                writeStandardError("error: could not write \(path): \(error)")
                throw ExitCode(StrainExitCode.harnessError)
            }
        }
        print("")
        print(TerminalStyle.safe(terminal.fit(terminal.renderBisect(record))))
        print(terminal.fit("Wrote " + written.dropLast().joined(separator: ", ") + " and " + written.last!))
    }

    static func describe(_ request: BisectRequest) -> String {
        let fixed = request.parameters.sorted { $0.key < $1.key }
        switch request.question {
        case .stack:
            return "the smallest thread(stack) from \(ByteSize.format(request.low)) to \(ByteSize.format(request.high)) for \(fixed.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")) on \(request.profile.rawValue)"
        case .parameter(let name):
            return "the largest \(name) from \(Format.count(Double(request.low))) to \(Format.count(Double(request.high))) on \(request.strategy) (\(request.profile.rawValue))"
        }
    }

    // MARK: - Validation: every value checked, nothing started until all pass

    func makeRequests(catalog: ScenarioCatalog) throws(InputError) -> ([BisectRequest], String?) {
        guard let type = catalog.scenario(named: scenario) else {
            // Worded as a suite's and `explain`'s unknown scenario are.
            let hint = Suggestion.nearest(to: scenario, among: catalog.names).map { " (did you mean '\($0)'?)" } ?? ""
            throw InputError("unknown scenario '\(scenario)'\(hint); valid scenarios: \(catalog.names.joined(separator: ", "))")
        }
        let specs = Dictionary(uniqueKeysWithValues: type.parameterSpecs.map { ($0.name, $0) })
        var values = Dictionary(uniqueKeysWithValues: type.parameterSpecs.map { ($0.name, $0.defaultValue) })
        for item in parameter {
            let parts = item.split(separator: "=", maxSplits: 1).map { String($0).trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, !parts[0].isEmpty else {
                throw InputError("-p '\(item)' is not name=value; write e.g. -p size=2000")
            }
            guard let spec = specs[parts[0]] else {
                throw InputError("-p \(item): \(scenario) has no parameter '\(parts[0])'; its parameters: \(type.parameterSpecs.map(\.name).joined(separator: ", "))")
            }
            if let problem = spec.problem(with: parts[1]) { throw InputError("-p \(item): \(problem)") }
            values[parts[0]] = parts[1]
        }
        let profile = try parseProfile()
        guard (1...20).contains(repetitions) else {
            throw InputError("--repetitions \(repetitions) is out of range; use 1 to 20")
        }
        let timeoutSeconds = try Self.duration(timeout, option: "--timeout")
        let stallSeconds = try Self.duration(stall, option: "--stall")
        let seed = UInt64(truncatingIfNeeded: "\(scenario)|\(values.sorted { $0.key < $1.key })".hashValueStable)
        func request(_ question: BisectRequest.Question, strategy: StrategySpec, parameters: [String: String], low: Int, high: Int) -> BisectRequest {
            BisectRequest(scenario: scenario, parameters: parameters, parameterOrder: type.parameterSpecs.map(\.name), question: question, strategy: strategy, profile: profile,
                          low: low, high: high, repetitions: repetitions, timeoutSeconds: timeoutSeconds,
                          stallSeconds: stallSeconds, exhaustive: exhaustive, seed: seed)
        }

        if let over {
            guard let spec = specs[over] else {
                throw InputError("--over \(over): \(scenario) has no parameter '\(over)'; its integer parameters: \(Self.integerNames(type.parameterSpecs))")
            }
            guard case .integer(let range) = spec.kind else {
                throw InputError("--over \(over): '\(over)' is not an integer parameter (\(spec.validValues)); search one of: \(Self.integerNames(type.parameterSpecs))")
            }
            if parameter.contains(where: { $0.hasPrefix("\(over)=") }) {
                throw InputError("-p \(over)=… and --over \(over) both set \(over); drop the -p, or bound the search with --low and --high")
            }
            if per != nil { throw InputError("--per goes with a stack search; with --over the slope comes from a second search at twice the stack (--no-slope skips it)") }
            let strategy: StrategySpec
            do {
                strategy = try StrategySpec(parsing: self.strategy ?? "thread(512KiB)")
            } catch {
                throw InputError("--strategy: \(error.description)")
            }
            let low = try Self.integer(self.low, option: "--low", default: range.lowerBound, range: range, name: over)
            let high = try Self.integer(self.high, option: "--high", default: range.upperBound, range: range, name: over)
            guard low < high else { throw InputError("--low \(low) is not below --high \(high); give a range to search") }
            var requests = [request(.parameter(over), strategy: strategy, parameters: values, low: low, high: high)]
            if !noSlope, let stack = strategy.chosenStackBytes, stack * 2 <= BisectRequest.maximumStackBytes,
               let doubled = strategy.withStack(stack * 2) {
                requests.append(request(.parameter(over), strategy: doubled, parameters: values, low: low, high: high))
            }
            return (requests, requests.count == 2 ? over : nil)
        }

        if strategy != nil {
            throw InputError("--strategy goes with --over; a stack search always runs on thread(stack)")
        }
        if noSlope { throw InputError("--no-slope goes with --over; a stack search gives a slope only with --per") }
        let low = try Self.stack(self.low, option: "--low", default: BisectRequest.minimumStackBytes)
        let high = try Self.stack(self.high, option: "--high", default: BisectRequest.maximumStackBytes)
        guard low < high else { throw InputError("--low \(ByteSize.format(low)) is not below --high \(ByteSize.format(high)); give a range to search") }
        var requests = [request(.stack, strategy: .thread(stackBytes: low), parameters: values, low: low, high: high)]
        if let per {
            guard let spec = specs[per], case .integer(let range) = spec.kind else {
                throw InputError("--per \(per): not an integer parameter of \(scenario); use one of: \(Self.integerNames(type.parameterSpecs))")
            }
            let value = Int(values[per]!)!
            let doubled = value * 2
            guard range.contains(doubled) else {
                throw InputError("--per \(per): the second search would run at \(per)=\(doubled), outside \(spec.validValues); set a smaller -p \(per)=…")
            }
            requests.append(request(.stack, strategy: .thread(stackBytes: low), parameters: values.merging([per: String(doubled)]) { $1 }, low: low, high: high))
        }
        return (requests, per)
    }

    func parseProfile() throws(InputError) -> Profile {
        guard let profile = Profile(rawValue: profile) else {
            throw InputError("--profile '\(profile)' is not a profile; use one of \(Profile.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        return profile
    }

    static func integerNames(_ parameters: [ParameterSpec]) -> String {
        let names = parameters.filter { if case .integer = $0.kind { true } else { false } }.map(\.name)
        return names.isEmpty ? "(none)" : names.joined(separator: ", ")
    }

    static func integer(_ text: String?, option: String, default value: Int, range: ClosedRange<Int>, name: String) throws(InputError) -> Int {
        guard let text else { return value }
        guard let number = Int(text.trimmingCharacters(in: .whitespaces)), range.contains(number) else {
            throw InputError("\(option) '\(text)' is not a valid value for \(name); use a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
    }

    static func stack(_ text: String?, option: String, default value: Int) throws(InputError) -> Int {
        guard let text else { return value }
        guard let bytes = ByteSize.parse(text) else {
            throw InputError("\(option) '\(text)' is not a stack size; write a size such as 32KiB, 512KiB or 1GiB")
        }
        guard (BisectRequest.minimumStackBytes...BisectRequest.maximumStackBytes).contains(bytes) else {
            throw InputError("\(option) \(text) is outside 32KiB to 1GiB (a smaller stack leaves Swift's runtime no room; Foundation clamps larger ones); use a size in that range")
        }
        guard bytes % BisectRequest.pageBytes == 0 else {
            throw InputError("\(option) \(text) is not a whole number of 4KiB pages; use e.g. \(ByteSize.format(bytes / 4096 * 4096 + 4096))")
        }
        return bytes
    }

    static func duration(_ text: String, option: String) throws(InputError) -> Double {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var seconds: Double?
        for (suffix, factor) in [("ms", 0.001), ("s", 1.0), ("m", 60.0)] where trimmed.hasSuffix(suffix) {
            seconds = Double(trimmed.dropLast(suffix.count)).map { $0 * factor }
            break
        }
        guard let seconds = seconds ?? Double(trimmed), (0.1...600).contains(seconds) else {
            throw InputError("\(option) '\(text)' is not a duration from 100ms to 10m; write e.g. 500ms, 60s or 5m")
        }
        return seconds
    }
}

private extension String {
    /// FNV-1a of the text: the same on every run, unlike `hashValue`.
    var hashValueStable: UInt64 { StableHash.fnv1a(self) }
}
