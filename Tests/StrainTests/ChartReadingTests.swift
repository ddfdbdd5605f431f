import Foundation
import StrainRecords
import StrainReports
import StrainText
import Testing

/// What report.html's charts draw, read from the report model and from the SVG
/// drawn from it: every guard accounted for, only the percentiles the samples
/// support, named exactly; small bars legible beside a scenario's largest; labels
/// inside the chart; a stall dump's line that wraps on a phone.
@Suite struct ChartReadingTests {
    static let longGuard = "a-guard-with-a-name-far-too-long-for-the-label-column"

    /// The fixture, and: ten more guards with NSLock's trials (g1 at 46 M/s, g2 at
    /// 85 k/s, one with a long name), 1,562 latency samples a trial, and a second
    /// cyclic-graph group whose threads had 64 MiB and 8 MiB stacks beside the
    /// 512 KiB-against-8 MiB chain group.
    static func fabricated() throws -> RunRecord {
        var run = try ReportTests.fixture()
        let locked = run.trials.filter { $0.scenario == "contended-collection" && $0.parameters["guard"] == "NSLock" }
        for (index, name) in ((1...9).map { "g\($0)" } + [longGuard]).enumerated() {
            for trial in locked {
                var copy = trial
                copy.id.key.parameters = trial.key.parameters.map { $0.name == "guard" ? TrialKey.Parameter(name: "guard", value: name) : $0 }
                copy.metrics.throughputPerSecond = index == 0 ? 46e6 : index == 1 ? 85e3 : 1e6 + Double(index)
                copy.index = 1_000 + run.trials.count
                run.trials.append(copy)
            }
        }
        for index in run.trials.indices { run.trials[index].metrics.latency?.count = 1_562 }
        let chain = try #require(run.trials.first { $0.scenario == "cyclic-graph" && $0.strategy == .thread(stackBytes: 8 << 20) && $0.outcome.kind == .completed })
        for (stack, used) in [(64 << 20, 40 << 20), (8 << 20, 6 << 20)] {
            var copy = chain
            copy.id.key.parameters = chain.key.parameters.map { $0.name == "shape" ? TrialKey.Parameter(name: "shape", value: "league") : $0 }
            copy.id.key.strategy = .thread(stackBytes: stack)
            copy.metrics.stackSizeBytes = stack
            copy.metrics.stackHighWaterBytes = used
            copy.index = 2_000 + run.trials.count
            run.trials.append(copy)
        }
        return run
    }

    static func lineCharts(_ charts: [Chart]) -> [LineChart] { charts.compactMap { if case .lines(let chart) = $0 { chart } else { nil } } }
    static func barCharts(_ charts: [Chart]) -> [BarChart] { charts.compactMap { if case .bars(let chart) = $0 { chart } else { nil } } }

    /// The widths of the bars an SVG draws, top to bottom.
    static func barWidths(_ svg: String) -> [Double] {
        svg.matches(of: /<rect class="bar" x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)"/).compactMap { Double($0.1) }
    }

    @Test func theLatencyChartSaysWhichGuardsItLeavesOut() throws {
        let report = RunReport(try Self.fabricated())
        let table = try #require(report.rankings.tables.first)
        #expect(table.source.rows.count == 13)
        let latency = try #require(Self.lineCharts(table.charts).first)
        #expect(latency.series.count == 8, "eight colours, eight curves")
        let caption = try #require(latency.caption, "the chart says that 5 guards are not drawn")
        #expect(caption.contains("5 more guards") && caption.contains("g2"), "\(caption)")
        #expect(TestFiles.readable(HTMLReport.render(report)).contains("<figcaption>\(HTMLText.escape(caption))</figcaption>"))
    }

    @Test func theLatencyCurveStopsWhereTooFewSamplesLieBeyondAPercentile() throws {
        var run = try Self.fabricated()
        let report = RunReport(run)
        let table = try #require(report.rankings.tables.first)
        let latency = try #require(Self.lineCharts(table.charts).first)
        // 1,562 samples: 7.8 beyond p99.5, 1.6 beyond p99.9, where the table prints "–".
        for series in latency.series {
            #expect(series.points.map { ChartFormat.nines($0.x) } == ["p0", "p25", "p50", "p75", "p90", "p95", "p99", "p99.5"], "\(series.name)")
        }
        #expect(latency.caption?.contains("2,000") == true, "the chart says why p99.9 is missing: \(latency.caption ?? "no caption")")
        // 2,000 samples: p99.9 as the table's column, not p99.95.
        for index in run.trials.indices { run.trials[index].metrics.latency?.count = 2_000 }
        let moreTable = try #require(RunReport(run).rankings.tables.first)
        let more = try #require(Self.lineCharts(moreTable.charts).first)
        #expect(more.series.allSatisfy { $0.points.map { ChartFormat.nines($0.x) }.suffix(2) == ["p99.5", "p99.9"] })
    }

    @Test func aPercentileIsNamedExactlyOnTheAxisAndInItsTooltip() throws {
        #expect(ChartFormat.nines(-log10(1 - 0.995)) == "p99.5", "p99.5 read p100")
        #expect(ChartFormat.nines(0) == "p0" && ChartFormat.nines(0.301) == "p50" && ChartFormat.nines(1) == "p90")
        #expect(ChartFormat.nines(2) == "p99" && ChartFormat.nines(3) == "p99.9" && ChartFormat.nines(4) == "p99.99")
        #expect(ChartFormat.nines(-log10(1 - 0.9995)) == "p99.95" && ChartFormat.nines(-log10(1 - 0.25)) == "p25")
        let html = HTMLReport.render(try Self.fabricated())
        #expect(html.contains("<title>NSLock: p99.5, ") && !html.contains(": p100, "))
    }

    @Test func aSmallGroupsStackBarsStayLegibleBesideTheScenariosLargestStack() throws {
        let report = RunReport(try Self.fabricated())
        let chain = try #require(report.outcomes.tables.first { $0.title.contains("shape=chain") })
        let stack = try #require(Self.barCharts(chain.charts).first { $0.title.hasPrefix("stack used") })
        // 512 KiB and 1.6 MiB beside a 64 MiB stack: 3 and 10 px on one linear axis.
        let widths = Self.barWidths(SVGChart.svg(.bars(stack)))
        #expect(widths.count == 2 && widths.allSatisfy { $0 >= 40 }, "\(widths)")
        #expect(widths[1] > widths[0], "the larger value still draws the longer bar")
        #expect(stack.title.contains("log scale"), "\(stack.title)")
    }

    @Test func throughputFrom46MillionTo85ThousandASecondIsDrawnOnALogAxis() throws {
        let report = RunReport(try Self.fabricated())
        let table = try #require(report.rankings.tables.first)
        let throughput = try #require(Self.barCharts(table.charts).first)
        let widths = Self.barWidths(SVGChart.svg(.bars(throughput)))
        #expect(widths.count == 13 && widths.allSatisfy { $0 >= 40 }, "\(widths)")
        #expect(widths == widths.sorted(by: >), "ranked best first, the bars shorten in order")
        #expect(throughput.title.contains("log scale"), "\(throughput.title)")
    }

    @Test func aLongBarLabelIsCutInsideTheChartAndKeptWholeInItsTooltip() throws {
        let report = RunReport(try Self.fabricated())
        let table = try #require(report.rankings.tables.first)
        for chart in table.charts {
            let svg = SVGChart.svg(chart)
            let labels = svg.matches(of: /<text class="label" x="([0-9.]+)" y="[0-9.]+" text-anchor="end">([^<]*)/).map { (x: Double($0.1) ?? 0, text: String($0.2)) }
            guard !labels.isEmpty else { continue }
            // Right-aligned at x, it must start at or after 0 (its width as the chart estimates it,
            // never less than a browser draws it: `aChartsWidthOfATextIsNeverLessThanABrowserDrawsIt`).
            #expect(labels.allSatisfy { $0.x - ChartAxis.textWidth($0.text) >= 0 }, "\(labels.map(\.text))")
            #expect(labels.contains { $0.text.hasSuffix("…") && Self.longGuard.hasPrefix(String($0.text.dropLast())) })
            #expect(svg.contains("<title>\(Self.longGuard)</title>"), "the whole name in the label's tooltip")
        }
    }

    @Test func aStallDumpsSummaryLinesWrapAnywhereSoAPhoneNeedNotScroll() throws {
        let html = HTMLReport.render(try ReportTests.fixture())
        // One long symbol in a dump's summary line made a 400 px page 629 px wide.
        #expect(html.contains("<details class=\"thread-group\"><summary>"))
        #expect(html.contains("summary{overflow-wrap:anywhere}"), "the page's style lets a summary line break inside a word")
    }

    @Test func theThreadsSectionDrawsTwelveTimelinesAndSaysHowManyMoreThereAre() throws {
        var run = try ReportTests.fixture()
        let stalled = try #require(run.trials.first { $0.scenario == "thread-explosion" && $0.stall != nil && ($0.threadTimeline?.count ?? 0) > 1 })
        for item in 1...14 {
            var copy = stalled
            copy.id.key.parameters = stalled.key.parameters.map { $0.name == "items" ? TrialKey.Parameter(name: "items", value: "\(100 + item)") : $0 }
            copy.index = 3_000 + item
            run.trials.append(copy)
        }
        let timelines = try #require(RunReport(run).timelines.timelines(of: "thread-explosion"))
        #expect(timelines.charts.count == 12)
        #expect(timelines.note == "3 more timelines are in run.json (`threadTimeline`); the first 12 are drawn.")
        #expect(HTMLReport.render(run).contains("<p class=\"note\">3 more timelines are in run.json (<code>threadTimeline</code>); the first 12 are drawn.</p>"))
    }
}
