import Foundation
import StrainRecords
@testable import StrainReports
import StrainText
import Testing

/// report.html's charts as a reader meets them: no two axis labels printed over each
/// other, a bisect's every probe labelled with its value, and charts that shrink to a
/// phone's width with text still readable, each on an axis that fits its own bars.
extension ChartReadingTests {
    /// Each `<text class="tick">` of `svg`: where its ink lies, ``ChartAxis/textWidth(_:)``
    /// wide (never less than a browser draws it: `aChartsWidthOfATextIsNeverLessThanABrowserDrawsIt`).
    static func tickExtents(_ svg: String) -> [(text: String, range: ClosedRange<Double>)] {
        svg.matches(of: /<text class="tick" x="([0-9.]+)" y="[0-9.]+" text-anchor="(start|middle|end)">([^<]*)<\/text>/).map { match in
            let x = Double(match.1) ?? 0, width = ChartAxis.textWidth(String(match.3))
            let start = match.2 == "start" ? x : match.2 == "end" ? x - width : x - width / 2
            return (String(match.3), start...(start + width))
        }
    }

    /// Whether any two of `ranges` come within 2 px of each other.
    static func overlap(_ ranges: [ClosedRange<Double>]) -> Bool {
        let sorted = ranges.sorted { $0.lowerBound < $1.lowerBound }
        return zip(sorted, sorted.dropFirst()).contains { $0.upperBound + 2 > $1.lowerBound }
    }

    /// The outcomes bar of three repetitions, one SIGABRT and two SIGSEGV: both in one red,
    /// no key, and the narrow part named only in its tooltip, so a screenshot read "2
    /// crashed(SIGSEGV)" across all three (re-trial 35n, F4). Now each outcome has its own
    /// colour and an entry in a key under the bars.
    @Test func anOutcomesBarNamesEveryOutcomeInAKeyEachInItsOwnColour() {
        let chart = StackedChart(title: "outcomes across repetitions", rows: [("gcd-global", [("crashed(SIGABRT)", 1), ("crashed(SIGSEGV)", 2)]), ("main", [("completed", 3)])])
        let svg = SVGChart.svg(.stacked(chart))
        let keys = svg.matches(of: /<text class="legend"[^>]*>([^<]*)<\/text>/).map { String($0.1) }
        #expect(keys == ["crashed(SIGABRT)", "crashed(SIGSEGV)", "completed"], "\(keys)")
        let fills = svg.matches(of: /<rect class="outcome"[^>]*fill="(#[0-9a-f]{6})"/).map { String($0.1) }
        #expect(fills.count == 3 && Set(fills).count == 3, "\(fills)")
        let height = Double(svg.firstMatch(of: /viewBox="0 0 [0-9.]+ ([0-9.]+)"/)?.1 ?? "") ?? 0
        let lowest = svg.matches(of: /<text class="legend" x="[0-9.]+" y="([0-9.]+)"/).compactMap { Double($0.1) }.max() ?? .infinity
        #expect(lowest < height, "the key is inside the chart: \(lowest) of \(height)")
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

    /// A line chart's axes write their ticks as the bars' do: zero as `0` (it read
    /// `0 µs` beside `20 ms`), and no decimal that is zero (`1.0 µs`, `10.0 µs`).
    @Test func lineChartTicksWriteZeroAsZeroAndDropDecimalsThatAreZero() throws {
        let wall = LineChart(title: "wall", series: [ChartSeries(name: "a", points: [(x: 0, y: 0), (x: 1, y: 0.06)])],
                             xLabel: "x", yLabel: "wall", formatX: .count, formatY: .duration, yTicks: [0, 0.02, 0.04, 0.06])
        let wallTicks = Self.tickExtents(SVGChart.svg(.lines(wall))).map(\.text)
        #expect(wallTicks.contains("0") && wallTicks.contains("20 ms") && !wallTicks.contains { $0.hasPrefix("0 ") }, "\(wallTicks)")
        let latency = LineChart(title: "latency", series: [ChartSeries(name: "a", points: [(x: 1, y: 100), (x: 2, y: 100_000)])],
                                xLabel: "x", yLabel: "latency", logY: true, formatX: .count, formatY: .nanoseconds, yTicks: [100, 1_000, 10_000, 100_000])
        let latencyTicks = Self.tickExtents(SVGChart.svg(.lines(latency))).map(\.text)
        #expect(latencyTicks.contains("1 µs") && latencyTicks.contains("100 µs") && !latencyTicks.contains { $0.contains(".0 ") }, "\(latencyTicks)")
        // A log axis begins and ends on a labelled round value: curves ran on to 922 µs above
        // the top label, 100 µs, and below none (re-trial 35j).
        let curves = LineChart(title: "latency", series: [ChartSeries(name: "a", points: [(x: 1, y: 120), (x: 2, y: 922_000)])],
                               xLabel: "x", yLabel: "latency", logY: true, formatX: .count, formatY: .nanoseconds)
        let curveTicks = Self.tickExtents(SVGChart.svg(.lines(curves))).map(\.text)
        #expect(curveTicks.first == "100 ns" && curveTicks.contains("1 ms"), "\(curveTicks)")
        #expect(ChartAxis.logBounds(from: 120, to: 922_000) == (low: 100, high: 1_000_000))
        #expect(ChartAxis.logBounds(from: 150, to: 380) == (low: 150, high: 500) && ChartAxis.logBounds(from: 200, to: 200) == (low: 200, high: 200))
        // A bisect's peak RSS, 28.2–31.6 MiB, no two powers of 2 inside: its axis was labelled
        // only at those two values, two thirds of the plot's height without a label (re-trial
        // 35k). Round steps around the data now, the lowest and highest at the plot's edges.
        let mib = 1_048_576.0
        #expect(ChartAxis.byteTicks(from: 28.2 * mib, to: 31.6 * mib) == [28, 29, 30, 31, 32].map { $0 * mib })
        let rss = LineChart(title: "peak RSS", series: [ChartSeries(name: "a", points: [(x: 100, y: 28.2 * mib), (x: 1_000, y: 31.6 * mib)])],
                            xLabel: "size", yLabel: "peak RSS", logX: true, logY: true, formatX: .count, formatY: .bytes,
                            yTicks: ChartAxis.byteTicks(from: 28.2 * mib, to: 31.6 * mib))
        let rssSVG = SVGChart.svg(.lines(rss))
        let plot = try #require(rssSVG.firstMatch(of: /<rect class="plot" x="[0-9.]+" y="([0-9.]+)" width="[0-9.]+" height="([0-9.]+)"/))
        let (plotTop, plotHeight) = (Double(plot.1)!, Double(plot.2)!)
        let labelled = rssSVG.matches(of: /<text class="tick" x="[0-9.]+" y="([0-9.]+)" text-anchor="end">([^<]*)<\/text>/).map { (y: Double($0.1)! - 4, text: String($0.2)) }
        #expect(labelled.map(\.text) == ["28 MiB", "29 MiB", "30 MiB", "31 MiB", "32 MiB"], "\(labelled)")
        // The ends within 5 % of the plot's height from its edges.
        let ys = labelled.map(\.y)
        #expect(ys.max()! > plotTop + plotHeight * 0.95 && ys.min()! < plotTop + plotHeight * 0.05, "\(ys) in \(plotTop)…\(plotTop + plotHeight)")
        #expect(ChartAxis.tickText("0 µs") == "0" && ChartAxis.tickText("0.0 ms") == "0" && ChartAxis.tickText("0.25 s") == "0.25 s" && ChartAxis.tickText("p0") == "p0")
        // `2.5 ms, 5 ms, 7.5 ms`: no decimal part ends in a zero (it read `2.50 ms, 5 ms, 7.50 ms`).
        #expect(ChartAxis.tickText("2.50 ms") == "2.5 ms" && ChartAxis.tickText("7.50 ms") == "7.5 ms" && ChartAxis.tickText("1.05 ms") == "1.05 ms" && ChartAxis.tickText("100 µs") == "100 µs")
    }

    /// An overflowed row's ✕ stands just left of its own label (it sat at the chart's
    /// left edge, far from a short label such as `gcd-global`).
    @Test func anOverflowsMarkStandsBesideItsRowsLabel() throws {
        let chart = BarChart(title: "stack used", bars: [
            ChartBar(label: "gcd-global", value: 524_288, low: nil, high: nil, limit: 524_288, marked: true, note: nil),
            ChartBar(label: "thread(8MiB)", value: 1_300_000, low: nil, high: nil, limit: 8_388_608, note: nil),
        ], format: .bytes, limitLabel: nil, scaleMaximum: nil, scaleMinimum: nil, logTitle: nil)
        let svg = SVGChart.svg(.bars(chart))
        let mark = try #require(svg.firstMatch(of: /<text class="overflow-mark" x="([0-9.]+)"/).flatMap { Double($0.1) })
        let labelEnd = SVGChart.labelWidth - 6
        let labelStart = labelEnd - ChartAxis.textWidth("gcd-global")
        #expect(mark < labelStart && labelStart - mark < 20, "✕ at \(mark), the label from \(labelStart)")
    }

    /// Every gridline of a bar axis has its label: the last one ended at its gridline,
    /// ran into the one before and dropped it (`600 k/s` and `96 MiB` were unlabelled).
    @Test func everyGridlineOfABarAxisHasItsLabel() {
        let axes: [(ChartFormat, Double, Bool, [String])] = [
            (.rate, 790_000, false, ["0", "200 k/s", "400 k/s", "600 k/s", "800 k/s"]),
            (.bytes, 120 * 1_048_576, true, ["0", "32 MiB", "64 MiB", "96 MiB", "128 MiB"]),
        ]
        for (format, largest, binary, expected) in axes {
            var chart = BarChart(title: "t", bars: [ChartBar(label: "Mutex", value: largest, low: nil, high: nil, limit: nil, note: nil)],
                                 format: format, limitLabel: nil, scaleMaximum: nil, scaleMinimum: nil, logTitle: nil)
            chart.binary = binary
            let svg = SVGChart.svg(.bars(chart))
            let ticks = Self.tickExtents(svg)
            #expect(ticks.map(\.text) == expected, "\(ticks.map(\.text))")
            #expect(svg.matches(of: /class="grid"/).count == expected.count)
            #expect(!Self.overlap(ticks.map(\.range)), "\(ticks)")
            #expect(ticks.allSatisfy { $0.range.upperBound <= SVGChart.width }, "\(ticks)")
        }
        // A log axis of powers of two, 53 px apart: its first label started at its gridline
        // and ran into the second, which was dropped (`256 KiB, ___, 1 MiB`).
        // And a bisect's, seven powers 44 px apart (`16 KiB, 32 KiB, 64 KiB, ___, 256 KiB, ___, 1 MiB`).
        for (low, high) in [(300.0 * 1024, 1_400.0 * 1024), (20.0 * 1024, 900.0 * 1024)] {
            var stack = BarChart(title: "stack", bars: [ChartBar(label: "thread(512KiB)", value: low, low: nil, high: nil, limit: 512 * 1024, note: nil),
                                                        ChartBar(label: "thread(8MiB)", value: high, low: nil, high: nil, limit: high > 1_048_576 ? 8 * 1_048_576 : nil, note: nil)],
                                 format: .stackBytes, limitLabel: nil, scaleMaximum: nil, scaleMinimum: nil, logTitle: nil)
            stack.binary = true
            stack.logScale = true
            let svg = SVGChart.svg(.bars(stack))
            let ticks = Self.tickExtents(svg)
            #expect(ticks.count >= 5 && ticks.count == svg.matches(of: /class="grid"/).count, "every gridline labelled: \(ticks.map(\.text))")
            #expect(!Self.overlap(ticks.map(\.range)) && ticks.allSatisfy { $0.range.lowerBound >= 0 && $0.range.upperBound <= SVGChart.width }, "\(ticks)")
        }
    }

    /// A row's label is cut only where it would not fit its column: `thread-pool(64, 512KiB)`,
    /// about 117 px in the charts' font, was cut to `thread-pool(64, 512K…` in 144 px at
    /// 6.6 px a character; a label too long for the column is still cut, whole in its tooltip.
    @Test func aBarsLabelIsCutOnlyWhereItWouldNotFit() {
        let bars = ["thread-pool(64, 512KiB)", "thread-pool(64, 512KiB) guard=rw-queue-sync-barrier"].map {
            ChartBar(label: $0, value: 1, low: nil, high: nil, limit: nil, marked: true, note: nil)
        }
        let svg = SVGChart.svg(.bars(BarChart(title: "t", bars: bars, format: .count, limitLabel: nil, scaleMaximum: nil, scaleMinimum: nil, logTitle: nil)))
        #expect(svg.contains(">thread-pool(64, 512KiB)</text>"), "\(svg)")
        let cut = svg.firstMatch(of: /<text class="label"[^>]*>([^<]*)<title>thread-pool\(64, 512KiB\) guard=rw-queue-sync-barrier<\/title>/)
        #expect(cut.map { $0.1.hasSuffix("…") && ChartAxis.textWidth(String($0.1)) <= SVGChart.labelWidth - 6 - 14 } == true, "\(svg)")
        #expect(ChartAxis.textWidth("thread-pool(64, 512KiB)") < 130 && ChartAxis.textWidth("MMMM") > ChartAxis.textWidth("iiii") * 2)
    }

    /// The chart's estimate of a text's width is at least what a browser draws: widths
    /// of 11 px text measured in headless Chromium (`getComputedTextLength()`) with
    /// Liberation Sans, which has Arial's metrics, on 30 November 2026.
    @Test func aChartsWidthOfATextIsNeverLessThanABrowserDrawsIt() {
        let measured: [(String, Double)] = [
            ("thread-pool(64, 512KiB)", 116.8), ("a-guard-with-a-name-far-…", 133.3), ("rw-queue-sync-barrier", 107.6), ("gcd-global", 50.8),
            ("MMMMMMMMMM", 91.6), ("iiiiiiiiii", 24.5), ("thread(512KiB) guard=NSLock", 150.1), ("800 k/s", 35.5), ("128 MiB", 40.4), ("cyclic-graph", 58.7),
        ]
        for (text, width) in measured {
            #expect(ChartAxis.textWidth(text) >= width && ChartAxis.textWidth(text) <= width * 1.6, "\(text): \(ChartAxis.textWidth(text)) against \(width)")
        }
    }

    /// The six first colours a chart gives its series are far apart (CIE76 ΔE over 35):
    /// a guard chart of six had orange (#dc7f00) beside gold (#b08900), 25 apart.
    @Test func theFirstSixSeriesColoursAreFarApart() {
        func lab(_ hex: String) -> [Double] {
            let value = Int(hex.dropFirst(), radix: 16)!
            let linear = [value >> 16 & 0xff, value >> 8 & 0xff, value & 0xff].map { channel -> Double in
                let c = Double(channel) / 255
                return c <= 0.04045 ? c / 12.92 : pow((c + 0.055) / 1.055, 2.4)
            }
            let x = (0.4124 * linear[0] + 0.3576 * linear[1] + 0.1805 * linear[2]) / 0.95047
            let y = 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
            let z = (0.0193 * linear[0] + 0.1192 * linear[1] + 0.9505 * linear[2]) / 1.08883
            func f(_ t: Double) -> Double { t > 0.008856 ? cbrt(t) : 7.787 * t + 16.0 / 116 }
            return [116 * f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))]
        }
        let six = SVGChart.palette.prefix(6).map(lab)
        for i in six.indices { for j in six.indices where j > i {
            let distance = zip(six[i], six[j]).map { ($0 - $1) * ($0 - $1) }.reduce(0, +).squareRoot()
            #expect(distance > 35, "\(SVGChart.palette[i]) and \(SVGChart.palette[j]): ΔE \(distance)")
        } }
    }

    /// The width a chart has on a 400 px phone: the page's 8 px padding, and the
    /// figure's border and padding (or a bisect list's indent), taken off each side.
    static let phoneBox = 400.0 - 2 * 8 - 2 * 7

    /// Each chart of report.html (bars, lines, histograms and a bisect's probe strip):
    /// drawn at its own size, it shrinks with its box (`max-width:100%`, `height:auto`
    /// over its `viewBox`) instead of scrolling its right end and legend off a phone's
    /// screen, and is drawn narrow enough that its smallest text, 11 units, is still
    /// 9 px or more there. (600 wide and kept at 600 px, a chart scrolled; scaled to a
    /// phone, its 10-unit text was about 5 px.)
    @Test func chartsShrinkWithTheirBoxAndTheirTextStaysReadableOnAPhone() throws {
        for html in [HTMLReport.render(try BisectReportLayoutTests.bisectRun()), HTMLReport.render(try ChartReadingTests.fabricated())] {
            let css = try #require(html.components(separatedBy: "<style>").dropFirst().first?.components(separatedBy: "</style>").first)
            #expect(css.contains("svg.chart{max-width:100%;height:auto;"), "\(css)")
            #expect(css.contains("svg.probes{max-width:100%;height:auto;"), "\(css)")
            #expect(!css.contains("overflow-x:auto}svg") && !css.contains("width:600px"), "no chart kept at its size in a box that scrolls: \(css)")
            let sizes = css.matches(of: /svg[^{}]*\{[^}]*font-size:([0-9.]+)px/).compactMap { Double($0.1) }
            let smallest = try #require(sizes.min())
            #expect(smallest >= 11, "\(sizes)")
            let svgs = html.matches(of: /<svg class="(chart|probes)"[^>]* width="([0-9]+)" height="([0-9]+)" viewBox="0 0 ([0-9.]+) ([0-9.]+)"/)
            #expect(svgs.count >= 3, "every chart has its size and a viewBox to scale by")
            for svg in svgs {
                let width = Double(svg.2) ?? 0
                #expect(Double(svg.4) == width, "its viewBox is as wide as the chart: \(svg.0)")
                #expect(smallest * min(1, Self.phoneBox / width) >= 9, "\(svg.1) \(width) wide: \(smallest)-unit text is \(smallest * Self.phoneBox / width) px on a phone")
            }
        }
    }

    /// report.html's tables (a group's outcomes, the guards' ranking, a scenario's
    /// metrics) were eight or more columns wide and scrolled sideways on a 400 px phone.
    /// On a narrow screen each row is stacked instead, every cell under its column's
    /// name (`data-label`, shown before it), as gate.html's rows are.
    @Test func reportTablesStackTheirRowsOnAPhoneEachCellNamedByItsColumn() throws {
        for html in [HTMLReport.render(try ChartReadingTests.fabricated()), HTMLReport.render(try BisectReportLayoutTests.bisectRun())] {
            let css = try #require(html.components(separatedBy: "<style>").dropFirst().first?.components(separatedBy: "</style>").first)
            let narrow = String(try #require(css.components(separatedBy: "@media (max-width:640px){").dropFirst().first, "\(css)"))
            #expect(narrow.contains("div.table table,div.table tbody,div.table tr,div.table td{display:block;width:auto}")
                    && narrow.contains("div.table thead{display:none}") && narrow.contains("div.table td[data-label]::before{content:attr(data-label)"), "\(narrow)")
            let tables = html.components(separatedBy: "<div class=\"table\">").dropFirst().map { $0.components(separatedBy: "</table>")[0] }
            #expect(!tables.isEmpty, "the report has tables")
            for table in tables {
                let header = table.matches(of: /<th[^>]*>([^<]*)<\/th>/).map { String($0.1) }
                for row in table.components(separatedBy: "<tr").dropFirst(2) {
                    let labels = row.matches(of: /<td[^>]*data-label="([^"]*)"/).map { String($0.1) }
                    #expect(labels == Array(header.prefix(labels.count)) && labels.count == row.components(separatedBy: "<td").count - 1,
                            "every cell named by its column, in order: \(labels) under \(header)")
                }
            }
        }
    }

    /// The stack chart's axis ran to 128 MiB for bars of 8 MiB at most, and peak RSS to
    /// 192 MiB for 24 MiB: every group of a scenario shared one scale, and another
    /// group's 64 MiB thread stretched it. Each chart's axis now ends where its own bars,
    /// whiskers and the stack sizes it draws as dashed lines end (the next tick up).
    @Test func eachGroupsAxisEndsNearItsOwnLargestBarNotAnotherGroups() throws {
        var run = try ChartReadingTests.fabricated()
        // The league group's 64 MiB thread also took 129 MiB of RSS, as in the default suite.
        for index in run.trials.indices where run.trials[index].key.strategy == .thread(stackBytes: 64 << 20) {
            run.trials[index].metrics.peakRSSBytes = 129 << 20
        }
        let report = RunReport(run)
        let chain = try #require(report.outcomes.tables.first { $0.title.contains("shape=chain") })
        var checked = 0
        for chart in Self.barCharts(chain.charts) {
            guard chart.format == .bytes || chart.format == .stackBytes else { continue }
            let drawn = chart.bars.flatMap { [$0.value, $0.high, $0.limit].compactMap { $0 } }
            let largest = try #require(drawn.max())
            let ticks = Self.tickExtents(SVGChart.svg(.bars(chart)))
            let last = try #require(ticks.last?.text)
            let end = try #require(Self.bytes(last), "\(last)")
            #expect(end >= largest && end <= 4 * largest, "\(chart.title): the axis ends at \(last) for at most \(Format.bytes(largest))")
            checked += 1
        }
        #expect(checked == 2, "peak RSS and stack, in bytes")
    }

    /// `128 MiB`, `12 KiB`, `0 B` as a number of bytes.
    static func bytes(_ text: String) -> Double? {
        let parts = text.split(separator: " ")
        guard parts.count == 2, let number = Double(parts[0]) else { return nil }
        let scale: [Substring: Double] = ["B": 1, "KiB": 1_024, "MiB": 1_048_576, "GiB": 1_073_741_824]
        return scale[parts[1]].map { number * $0 }
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
            let extents = labels.filter { $0.y == row }.map { label in
                (label.x - ChartAxis.textWidth(label.text) / 2)...(label.x + ChartAxis.textWidth(label.text) / 2)
            }
            #expect(!ChartReadingTests.overlap(extents), "labels on the row at y=\(row): \(labels.filter { $0.y == row })")
        }
        let dots = svg.matches(of: /<circle class="probe-(?:ok|failed)" cx="([0-9.]+)" cy="12"/).compactMap { Double($0.1) }
        #expect(dots.count == values.count && zip(dots, dots.dropFirst()).allSatisfy { $1 - $0 >= 9 }, "dots 4 px in radius, apart: \(dots)")
        #expect(svg.contains(">completed</text>") && svg.contains(">failed</text>") && svg.contains(">the answer</text>") && svg.contains(">each stack probed, by value, evenly spaced</text>"), "the legend: \(svg.suffix(600))")
    }
}
