import ArgumentParser
import StrainKit
import StrainRecords
import StrainReports
import StrainSuite
import StrainText

struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Explain one scenario: what it does, its parameters with types, ranges and defaults, its metrics, the outcomes it typically ends in, and a suite to start from.",
        discussion: ExitCodeContract.section(for: "list")
    )

    @Argument(help: "The scenario's name, as 'strain list' shows it.", completion: .list(scenarioNames()))
    var name: String

    func run() throws {
        let catalog = activeCatalog.withLock { $0 }
        guard let scenario = catalog.scenario(named: name) else {
            // Worded as a suite's and `bisect`'s unknown scenario are.
            let hint = Suggestion.nearest(to: name, among: catalog.names).map { " (did you mean '\($0)'?)" } ?? ""
            throw CommandFailure.input("unknown scenario '\(name)'\(hint); valid scenarios: \(catalog.names.joined(separator: ", ")).")
        }
        // Fitted as `strain list` is: to the terminal, else COLUMNS, else 80, also in a pipe.
        print(Self.text(scenario, style: TerminalStyle(color: false, width: RunCommand.terminalColumns() - 1)), terminator: "")
    }

    /// The explanation, as printed: its prose broken between words to `style`'s width,
    /// each line after the first of an entry under the entry's text, and the starter
    /// suite's long flow lists broken after a comma, where YAML reads them the same.
    static func text(_ scenario: any Scenario.Type, style: TerminalStyle = TerminalStyle(color: false)) -> String {
        var lines = style.fit("\(scenario.name): \(scenario.summary)", hanging: 2) + [""]
        let specs = scenario.parameterSpecs
        if specs.isEmpty {
            lines.append("Parameters: none")
        } else {
            lines.append("Parameters:")
            lines += parameterLines(specs, indent: "  ", style: style)
        }
        if !scenario.metricDescriptors.isEmpty {
            lines += ["", "Metrics (besides Strain's own):"]
            let width = scenario.metricDescriptors.map(\.name.count).max() ?? 0
            for metric in scenario.metricDescriptors {
                let pad = String(repeating: " ", count: width - metric.name.count)
                let direction = switch metric.polarity {
                case .lowerIsBetter: "lower is better"
                case .higherIsBetter: "higher is better"
                case nil: "shown, not judged"
                }
                lines += style.fit("  \(metric.name)\(pad)  \(metric.unit.rawValue), \(direction), \(metric.noise.rawValue): \(metric.summary)",
                                   hanging: width + 4)
            }
            // The tables write a camelCase name in words and a time's name without its unit;
            // a threshold and run.json keep it as declared.
            let shown = scenario.metricDescriptors.filter { MetricDescriptor.displayName(of: $0.name) != $0.name }
            if let first = shown.first {
                let shownAs = MetricDescriptor.displayName(of: first.name)
                let how = shownAs.hasSuffix("time") && !first.name.hasSuffix("time") ? "as a time, its cells giving the unit" : "in words"
                lines += [""] + style.fit("Reports write \(shown.count == 1 ? "this name" : "these names") \(how) (\(first.name) as \"\(shownAs)\"); "
                                          + "run.json, metrics.csv and the thresholds under a suite's gate key use \(shown.count == 1 ? "it" : "them") as above.", hanging: 2)
            }
        }
        if !scenario.typicalOutcomes.isEmpty {
            lines += ["", "Typical outcomes:"]
            let width = scenario.typicalOutcomes.map(\.outcome.rawValue.count).max() ?? 0
            for typical in scenario.typicalOutcomes {
                lines += style.fit("  \(typical.outcome.rawValue)\(String(repeating: " ", count: width - typical.outcome.rawValue.count))  \(typical.because)",
                                   hanging: width + 4)
            }
        }
        lines += [""] + style.fit("A suite to start from (it passes as it is):") + ["", "name: \(scenario.name)", "runs:"]
        for run in scenario.starterRuns {
            lines.append("  - scenario: \(scenario.name)")
            if !specs.isEmpty {
                let values = specs.map { "\($0.name): \(run.parameters[$0.name] ?? yaml($0.defaultValue))" }
                lines += flowLines("    parameters: {", values, "}", style: style)
            }
            lines += flowLines("    strategies: [", run.strategies.map(yaml), "]", style: style)
            if let stall = run.stall { lines.append("    stall: \(stall)") }
            if run.expectOn.isEmpty {
                if run.expect != [.completed] { lines.append("    expect: \(outcomes(run.expect))") }
            } else {
                lines.append("    expect:")
                for strategy in run.strategies {
                    if let kinds = run.expectOn[strategy] { lines.append("      \(yaml(strategy)): \(outcomes(kinds))") }
                }
                lines.append("      default: \(outcomes(run.expect))")
            }
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// Each parameter as two lines, its name in a column of its own: its type,
    /// values and default, then its help under them, each wrapped in that column
    /// to `style`'s width. `strain list` lays its scenarios' parameters out the same way.
    static func parameterLines(_ specs: [ParameterSpec], indent: String, style: TerminalStyle = TerminalStyle(color: false)) -> [String] {
        let width = specs.map(\.name.count).max() ?? 0
        let column = indent.count + width + 2
        return specs.flatMap { spec in
            let pad = String(repeating: " ", count: width - spec.name.count)
            return ["\(indent)\(spec.name)\(pad)  \(spec.typeName): \(spec.validValues); default \(spec.defaultValue)",
                    "\(indent)\(String(repeating: " ", count: width))  \(spec.help)"].flatMap { style.fit($0, hanging: column) }
        }
    }

    /// `    strategies: [main, thread(512KiB)]`: a YAML flow list or mapping on one line,
    /// or, when wider than `style`'s width, broken after a comma with the lines after
    /// the first under its first item (YAML reads a flow collection across lines when
    /// they are indented past its key).
    static func flowLines(_ opening: String, _ items: [String], _ closing: String, style: TerminalStyle) -> [String] {
        let whole = opening + items.joined(separator: ", ") + closing
        guard let width = style.width, whole.count > width else { return [whole] }
        let indent = String(repeating: " ", count: opening.count)
        var lines: [String] = []
        var line = opening
        for (index, item) in items.enumerated() {
            let piece = item + (index == items.count - 1 ? closing : ",")
            if line != opening, line.count + 1 + piece.count > width {
                lines.append(line)
                line = indent + piece
            } else {
                line += (line == opening ? "" : " ") + piece
            }
        }
        return lines + [line]
    }

    /// `starved`, or `[completed, crashed]` where several may happen.
    static func outcomes(_ kinds: [TrialOutcome.Kind]) -> String {
        kinds.count == 1 ? kinds[0].rawValue : "[" + kinds.map(\.rawValue).joined(separator: ", ") + "]"
    }

    /// A value as a YAML flow mapping takes it: quoted when YAML would read it otherwise.
    static func yaml(_ value: String) -> String {
        let plain = value.allSatisfy { $0.isLetter || $0.isNumber || "-.()".contains($0) } && value.first != "-" && !["yes", "no", "true", "false", "null", "on", "off"].contains(value.lowercased())
        return plain ? value : "\"\(value)\""
    }
}
