import Foundation
import StrainRecords
import StrainReports
import StrainText
import Testing

/// report.html's charts as a reader meets them: no two axis labels printed over each
/// other, a bisect's every probe labelled with its value, and charts that keep their
/// size on a phone (scaled to 400 px their text was about 5 px).
extension ChartReadingTests {
    /// Each `<text class="tick">` of `svg`: where its ink lies, at 6 px a character of the 10 px font.
    static func tickExtents(_ svg: String) -> [(text: String, range: ClosedRange<Double>)] {
        svg.matches(of: /<text class="tick" x="([0-9.]+)" y="[0-9.]+" text-anchor="(start|middle|end)">([^<]*)<\/text>/).map { match in
            let x = Double(match.1) ?? 0, width = Double(match.3.count) * 6
            let start = match.2 == "start" ? x : match.2 == "end" ? x - width : x - width / 2
            return (String(match.3), start...(start + width))
        }
    }

    /// Whether any two of `ranges` come within 2 px of each other.
    static func overlap(_ ranges: [ClosedRange<Double>]) -> Bool {
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        return zip(sorted, sorted.dropFirst()).contains { $0.upperBound + 2 > $1.lowerBound }
    }

    @Test func aStackAxisFrom32KiBTo128MiBPrintsNoTwoLabelsOverEachOther() throws {
        // A group whose threads had 64 KiB and 128 MiB: ticks every fourth power of two
        // from 32 KiB, whose last two labels printed as "32.0 MiB128.0 MiB".
        var run = try ReportTests.fixture()
        let chain = try #require(run.trials.first { $0.scenario == "cyclic-graph" && $0.strategy == .thread(stackBytes: 8 << 20) && $0.outcome.kind == .completed })
        for (stack, used) in [(64 << 10, 60 << 10), (8 << 20, 1_600 << 10), (128 << 20, 1_600 << 10)] {
            var copy = chain
            copy.id.key.parameters = chain.key.parameters.map { $0.name == "shape" ? TrialKey.Parameter(name: "shape", value: "wide") : $0 }
            copy.id.key.strategy = .thread(stackBytes: stack)
            copy.metrics.stackSizeBytes = stack
            copy.metrics.stackHighWaterBytes = used
            copy.index = 3_000 + run.trials.count
            run.trials.append(copy)
        }
        let group = try #require(RunReport(run).outcomes.tables.first { $0.title.contains("shape=wide") })
        let stack = try #require(Self.barCharts(group.charts).first { $0.title.hasPrefix("stack used") })
        let ticks = Self.tickExtents(SVGChart.svg(.bars(stack)))
        #expect(ticks.first?.text == "32 KiB" && ticks.last?.text == "128 MiB", "both ends written, without a decimal that is zero: \(ticks.map(\.text))")
        #expect(ticks.count >= 5, "\(ticks.map(\.text))")
        #expect(!Self.overlap(ticks.map(\.range)), "\(ticks)")
    }

    @Test func crowdedAxisLabelsKeepBothEndsAndDropOnlyWhatWouldRunIntoAnother() {
        // Ten 7-character labels 20 px apart: about 42 px each.
        let labels = (0..<10).map { ChartAxis.TickLabel(x: 20 + Double($0) * 20, text: "\($0)00 KiB", anchor: $0 == 0 ? "start" : $0 == 9 ? "end" : "middle") }
        let kept = ChartAxis.fitted(labels)
        #expect(kept.first == labels.first && kept.last == labels.last, "\(kept.map(\.text))")
        #expect(kept.count >= 3 && kept.count < labels.count, "\(kept.map(\.text))")
        #expect(!Self.overlap(kept.map(\.extent)), "\(kept.map(\.text))")
        #expect(ChartAxis.tickText("32.0 MiB") == "32 MiB" && ChartAxis.tickText("1.05 ms") == "1.05 ms" && ChartAxis.tickText("20.0 ms") == "20 ms")
    }

    @Test func chartsKeepTheirSizeOnAPhoneAndScrollSidewaysInsideTheirOwnBox() throws {
        let html = HTMLReport.render(try BisectReportLayoutTests.bisectRun())
        let css = try #require(html.components(separatedBy: "<style>").dropFirst().first?.components(separatedBy: "</style>").first)
        #expect(css.contains("svg.chart{width:600px;max-width:none;"), "a chart is not scaled down to the page: \(css)")
        #expect(css.contains("figure{max-width:100%;box-sizing:border-box;overflow-x:auto}"), "its figure scrolls: \(css)")
        #expect(css.contains("div.chart-scroll{max-width:100%;overflow-x:auto}svg.probes{max-width:none;"), "\(css)")
        #expect(html.contains("<div class=\"chart-scroll\"><svg class=\"probes\" width=\""), "the probes at their own width, in a box that scrolls")
    }
}

extension BisectReportLayoutTests {
    /// Every probed value written under its dot, the dots and labels apart (the last
    /// probes, a unit or a page apart, drew as one blot labelled only at the strip's ends),
    /// and a legend a screenshot keeps.
    @Test func everyProbeIsLabelledWithItsValueAndNoDotOrLabelOverlapsAnother() throws {
        let run = try Self.bisectRun()
        let html = HTMLReport.render(run)
        let svg = try #require(html.components(separatedBy: "<svg class=\"probes\"").dropFirst().first?.components(separatedBy: "</svg>").first)
        let search = try #require(run.bisect?.searches.first)
        let trials = Dictionary(uniqueKeysWithValues: run.trials.map { ($0.index, $0) })
        let values = Set(search.probes.compactMap { trials[$0]?.key.strategy.chosenStackBytes }).sorted()
        let labels = svg.matches(of: /<text x="([0-9.]+)" y="([0-9]+)" class="tick probe-value" text-anchor="middle">([^<]*)<\/text>/)
            .map { (x: Double($0.1) ?? 0, y: String($0.2), text: String($0.3)) }
        #expect(labels.map(\.text) == values.map { ByteSize.exact($0) }, "each value once, in order: \(labels.map(\.text))")
        for row in Set(labels.map(\.y)) {
            let extents = labels.filter { $0.y == row }.map { label in (label.x - Double(label.text.count) * 3)...(label.x + Double(label.text.count) * 3) }
            #expect(!ChartReadingTests.overlap(extents), "labels on the row at y=\(row): \(labels.filter { $0.y == row })")
        }
        let dots = svg.matches(of: /<circle class="probe-(?:ok|failed)" cx="([0-9.]+)" cy="12"/).compactMap { Double($0.1) }
        #expect(dots.count == values.count && zip(dots, dots.dropFirst()).allSatisfy { $1 - $0 >= 9 }, "dots 4 px in radius, apart: \(dots)")
        #expect(svg.contains(">completed</text>") && svg.contains(">failed</text>") && svg.contains("the answer;"), "the legend: \(svg.suffix(600))")
    }
}
