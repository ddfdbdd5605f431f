import Foundation
import StrainText

/// Escapes text for HTML and SVG: every string from a suite, a scenario, a
/// symbol or an error goes through here.
package enum HTMLText {
    package static func escape(_ text: String) -> String {
        MarkupText.escape(text, extra: ["\"": "&quot;", "'": "&#39;"], control: "\u{FFFD}")
    }
}

/// Small SVG charts drawn by Strain itself: no scripts, no fonts fetched. Each is drawn
/// ``width`` units wide with 11-unit text and shrinks with its box (`max-width:100%`), so
/// a 400 px phone shows the whole chart, legend included, with text of about 9 px.
///
/// Colours keep one meaning each: strategies and series take the palette, which
/// has no red, green or purple; red is only an overflow or a failure, and the
/// outcome colours are those of the outcome histogram.
package enum SVGChart {
    static let width = 440.0
    /// The room left of a bar for its category's label.
    static let labelWidth = 150.0
    /// The first six are far apart in hue and lightness, at least 35 apart in CIELAB
    /// (a six-strategy guard chart had orange beside gold, #b08900, 25 apart; the slate
    /// #5c677d was 27 from the brown): blue, orange, teal, brown, ink, pink.
    static let palette = ["#3366cc", "#dc7f00", "#00838f", "#8d6e63", "#2d3142", "#c05299", "#b08900", "#5c677d"]
    static let barColor = "#3366cc"
    static let failureColor = "#c1121f"
    static let outcomeColors: [String: String] = [
        "completed": "#2b9348", "threw": "#dc7f00", "invariantViolated": "#e85d04", "stackOverflow": "#c1121f",
        "crashed": "#9d0208", "crashed(SIGABRT)": "#ff758f", "crashed(SIGILL)": "#6a040f", "crashed(SIGTRAP)": "#6a040f", "starved": "#7b2cbf", "deadlocked": "#5a189a", "timedOut": "#5c677d", "harnessError": "#000000",
    ]

    /// The model's chart drawn: an `<svg>`, or "" when it has nothing to draw.
    package static func svg(_ chart: Chart) -> String {
        switch chart {
        case .bars(let c):
            bars(c.bars, title: c.title, format: { c.format($0) }, limitLabel: c.limitLabel, scaleMaximum: c.scaleMaximum, binary: c.binary,
                 logScale: c.logScale, scaleMinimum: c.scaleMinimum)
        case .stacked(let c):
            stacked(c.rows, title: c.title)
        case .lines(let c):
            lines(c.series, title: c.title, xLabel: c.xLabel, yLabel: c.yLabel, logX: c.logX, logY: c.logY, formatX: { c.formatX($0) },
                  formatY: { c.formatY($0) }, step: c.step, xTicks: c.xTicks, yTicks: c.yTicks, labelPoints: c.labelPoints)
        }
    }

    /// Horizontal bars on a labelled axis from 0 to `scaleMaximum` (default: the
    /// largest value), so charts that share a maximum share a scale. `logScale`: an
    /// axis of powers (of 2 when `binary`, else of 10) from below the smallest positive
    /// value, or `scaleMinimum`, to the largest.
    static func bars(_ bars: [ChartBar], title: String, format: (Double) -> String, limitLabel: String? = nil, scaleMaximum: Double? = nil, binary: Bool = false,
                     logScale: Bool = false, scaleMinimum: Double? = nil) -> String {
        let rowHeight = 22.0
        let plotWidth = width - labelWidth - 24
        let top = 24.0
        let height = Double(bars.count) * rowHeight + top + 26
        let values = bars.flatMap { [$0.value, $0.high, $0.limit].compactMap { $0 } }
        let lows = bars.compactMap(\.low)
        let largest = values.max() ?? 1
        let axisTicks: [Double]
        // The length of a bar of `value`.
        let at: (Double) -> Double
        if logScale, let ticks = ChartAxis.powerTicks(values + lows + [scaleMinimum, scaleMaximum].compactMap { $0 }, binary: binary) {
            axisTicks = ticks
            let low = log(ticks[0]), span = log(ticks[ticks.count - 1]) - low
            at = { $0 > 0 && $0.isFinite ? max(0, (log($0) - low) / span * plotWidth) : 0 }
        } else {
            axisTicks = ChartAxis.niceTicks(upTo: max(largest, scaleMaximum ?? 0), binary: binary)
            let maximum = axisTicks.last ?? 1
            let scale = maximum > 0 ? plotWidth / maximum : 0
            at = { $0 * scale }
        }
        var svg = header(height: height, title: title)
        let axisY = top + Double(bars.count) * rowHeight + 2
        for tick in axisTicks {
            let x = labelWidth + at(tick)
            svg += "<line class=\"grid\" x1=\"\(f(x))\" x2=\"\(f(x))\" y1=\"\(f(top))\" y2=\"\(f(axisY))\" stroke=\"#eee\"/>"
        }
        let placed = axisTicks.map { tick in
            let x = labelWidth + at(tick), text = ChartAxis.tickText(format(tick)), half = ChartAxis.textWidth(text) / 2
            // Each under its gridline where the chart has room, the ends too: starting or ending
            // there, an end ran into its neighbour and dropped it (`600 k/s`, `96 MiB`, `512 KiB`).
            return ChartAxis.TickLabel(x: x, text: text, anchor: x - half < 0 ? "start" : x + half > width ? "end" : "middle")
        }
        for label in ChartAxis.fitted(placed) { svg += text(x: label.x, y: axisY + 14, label.text, anchor: label.anchor, cssClass: "tick") }
        svg += "<line class=\"axis\" x1=\"\(f(labelWidth))\" x2=\"\(f(labelWidth + plotWidth))\" y1=\"\(f(axisY))\" y2=\"\(f(axisY))\" stroke=\"#999\"/>"
        for (index, bar) in bars.enumerated() {
            let y = top + Double(index) * rowHeight
            svg += label(x: labelWidth - 6, y: y + 14, bar.label, room: labelWidth - 6 - (bar.marked ? 14 : 0))
            let limitX = bar.limit.map { labelWidth + at($0) }
            if let value = bar.value {
                let length = max(1, at(value))
                let color = bar.marked ? failureColor : barColor
                svg += "<rect class=\"bar\" x=\"\(f(labelWidth))\" y=\"\(f(y + 3))\" width=\"\(f(length))\" height=\"\(f(rowHeight - 8))\" fill=\"\(color)\"><title>\(HTMLText.escape(bar.label)): \(HTMLText.escape(format(value)))</title></rect>"
                if let low = bar.low, let high = bar.high, high > low {
                    let mid = y + rowHeight / 2 - 1
                    svg += "<line class=\"whisker\" x1=\"\(f(labelWidth + at(low)))\" x2=\"\(f(labelWidth + at(high)))\" y1=\"\(f(mid))\" y2=\"\(f(mid))\" stroke=\"#222\"/>"
                }
                let label = format(value) + (bar.note.map { " " + $0 } ?? "")
                let labelWidthEstimate = ChartAxis.textWidth(label)
                var end = max(length, at(bar.high ?? 0))
                // Past the limit line rather than across it.
                if let limitX, labelWidth + end + 6 + labelWidthEstimate > limitX - 2, labelWidth + end < limitX + 4 { end = limitX - labelWidth + 2 }
                if labelWidth + end + 6 + labelWidthEstimate <= width - 2 {
                    svg += text(x: labelWidth + end + 6, y: y + 14, label, cssClass: "value")
                } else {
                    // No room to the right: inside the bar's end, in white.
                    svg += text(x: labelWidth + length - 4, y: y + 14, label, anchor: "end", cssClass: "value in-bar")
                }
            } else {
                svg += text(x: labelWidth + 4, y: y + 14, bar.note ?? "no value", cssClass: "value muted")
            }
            if let limitX, let limit = bar.limit {
                svg += "<line class=\"limit\" x1=\"\(f(limitX))\" x2=\"\(f(limitX))\" y1=\"\(f(y + 1))\" y2=\"\(f(y + rowHeight - 3))\" stroke=\"#222\" stroke-width=\"2\" stroke-dasharray=\"3 2\"><title>\(HTMLText.escape(limitLabel ?? "limit")): \(HTMLText.escape(format(limit)))</title></line>"
            }
            if bar.marked {
                // Just left of its row's label (it sat at the chart's left edge, far from a short label).
                let shown = ChartAxis.textWidth(shownLabel(bar.label, room: labelWidth - 6 - 14))
                svg += text(x: max(4, labelWidth - 6 - shown - 12), y: y + 14, "✕", cssClass: "overflow-mark")
            }
        }
        return svg + "</svg>"
    }

    /// Stacked counts per category (an outcome histogram).
    static func stacked(_ rows: [(label: String, counts: [(name: String, count: Int)])], title: String) -> String {
        let rowHeight = 22.0, plotWidth = width - labelWidth - 20
        // A key under the bars, two a row: a part too narrow for its name was named only in its tooltip, and SIGABRT beside SIGSEGV read as one (35n, F4).
        let names = rows.flatMap { $0.counts.filter { $0.count > 0 }.map(\.name) }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
        let color = { (name: String) in outcomeColors[name] ?? outcomeColors[name.split(separator: "(").first.map(String.init) ?? name] ?? "#888" }
        let keyTop = 24 + Double(rows.count) * rowHeight + 8, height = keyTop + Double((names.count + 1) / 2) * 18 + 4, maximum = Double(rows.map { $0.counts.reduce(0) { $0 + $1.count } }.max() ?? 1)
        var svg = header(height: height, title: title)
        for (index, row) in rows.enumerated() {
            let y = 24 + Double(index) * rowHeight
            svg += label(x: labelWidth - 6, y: y + 14, row.label, room: labelWidth - 6)
            var x = labelWidth
            for part in row.counts where part.count > 0 {
                let length = Double(part.count) / maximum * plotWidth
                svg += "<rect class=\"outcome\" x=\"\(f(x))\" y=\"\(f(y + 3))\" width=\"\(f(length))\" height=\"\(f(rowHeight - 8))\" fill=\"\(color(part.name))\" stroke=\"#fff\"><title>\(part.count) \(HTMLText.escape(part.name))</title></rect>"
                let label = "\(part.count) \(part.name)"
                if length > ChartAxis.textWidth(label) + 8 { svg += text(x: x + 4, y: y + 14, label, cssClass: "in-bar") }
                x += length
            }
        }
        for (index, name) in names.enumerated() {
            let keyX = 8 + Double(index % 2) * (width / 2), keyY = keyTop + Double(index / 2) * 18
            svg += "<rect x=\"\(f(keyX))\" y=\"\(f(keyY))\" width=\"10\" height=\"10\" fill=\"\(color(name))\"/>" + text(x: keyX + 14, y: keyY + 9, Self.legend(name), cssClass: "legend")
        }
        return svg + "</svg>"
    }

    /// A line per series, on linear or logarithmic axes.
    static func lines(_ series: [ChartSeries], title: String, xLabel: String, yLabel: String, logX: Bool = false, logY: Bool = false,
                      formatX: (Double) -> String, formatY: (Double) -> String, step: Bool = false, xTicks: [Double]? = nil,
                      yTicks: [Double]? = nil, labelPoints: Bool = false) -> String {
        // The legend goes under the plot, two entries a row: beside it, it took 170 of the width.
        let legendRows = (series.count + 1) / 2
        let left = 70.0, right = 24.0, top = 26.0, bottom = 40.0
        let plotWidth = width - left - right
        let plotHeight = 194.0
        let legendTop = top + plotHeight + bottom + 6
        let height = legendTop + Double(legendRows) * 18
        let textBottom = top + plotHeight + bottom
        let usable = { (point: (x: Double, y: Double)) in
            point.x.isFinite && point.y.isFinite && (!logX || point.x > 0) && (!logY || point.y > 0)
        }
        let all = series.flatMap(\.points).filter(usable)
        guard !all.isEmpty else { return "" }
        func transform(_ value: Double, _ log: Bool) -> Double { log ? log10(value) : value }
        // Linear axes start at 0 and end on a round tick; log axes span the data, padded a little.
        let xValues = all.map(\.x), yValues = all.map(\.y)
        let chosenX = xTicks ?? (logX ? ChartAxis.logTicks(spanning: xValues.min()!, xValues.max()!) : ChartAxis.niceTicks(upTo: xValues.max()!))
        let chosenY = yTicks ?? (logY ? ChartAxis.logTicks(spanning: yValues.min()!, yValues.max()!) : ChartAxis.niceTicks(upTo: yValues.max()!))
        var minX = logX ? log10(min(xValues.min()!, chosenX.first ?? .infinity)) : min(0, xValues.min()!)
        var maxX = logX ? log10(max(xValues.max()!, chosenX.last ?? 0)) : max(xValues.max()!, chosenX.last ?? 0)
        var minY = logY ? log10(min(yValues.min()!, chosenY.first ?? .infinity)) : 0
        var maxY = logY ? log10(max(yValues.max()!, chosenY.last ?? 0)) : max(yValues.max()!, chosenY.last ?? 0)
        if logX { let pad = min(0.05, (maxX - minX) * 0.05); minX -= pad; maxX += pad }
        if logY { let pad = min(0.05, (maxY - minY) * 0.05); minY -= pad; maxY += pad }
        if maxX <= minX { maxX = minX + 1 }
        if maxY <= minY { maxY = minY + 1 }
        let px = { (x: Double) in left + (transform(x, logX) - minX) / (maxX - minX) * plotWidth }
        let py = { (y: Double) in top + plotHeight - (transform(y, logY) - minY) / (maxY - minY) * plotHeight }
        var svg = header(height: height, title: title)
        svg += "<rect class=\"plot\" x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" height=\"\(f(plotHeight))\" fill=\"none\" stroke=\"#bbb\"/>"
        var seenY = Set<String>()
        for tick in chosenY where transform(tick, logY) >= minY - 1e-9 && transform(tick, logY) <= maxY + 1e-9 {
            let label = ChartAxis.tickText(formatY(tick))
            guard seenY.insert(label).inserted else { continue }
            let y = py(tick)
            svg += "<line class=\"grid\" x1=\"\(f(left))\" x2=\"\(f(left + plotWidth))\" y1=\"\(f(y))\" y2=\"\(f(y))\" stroke=\"#eee\"/>"
            svg += text(x: left - 6, y: y + 4, label, anchor: "end", cssClass: "tick")
        }
        var seenX = Set<String>()
        var xLabels: [ChartAxis.TickLabel] = []
        for tick in chosenX where transform(tick, logX) >= minX - 1e-9 && transform(tick, logX) <= maxX + 1e-9 {
            let label = ChartAxis.tickText(formatX(tick))
            guard seenX.insert(label).inserted else { continue }
            let x = px(tick)
            svg += "<line class=\"grid\" x1=\"\(f(x))\" x2=\"\(f(x))\" y1=\"\(f(top))\" y2=\"\(f(top + plotHeight))\" stroke=\"#eee\"/>"
            xLabels.append(ChartAxis.TickLabel(x: x, text: label, anchor: "middle"))
        }
        for label in ChartAxis.fitted(xLabels) { svg += text(x: label.x, y: top + plotHeight + 16, label.text, anchor: label.anchor, cssClass: "tick") }
        svg += text(x: left + plotWidth / 2, y: textBottom - 6, xLabel, anchor: "middle", cssClass: "axis")
        svg += "<text class=\"axis\" transform=\"translate(14 \(f(top + plotHeight / 2))) rotate(-90)\" text-anchor=\"middle\">\(HTMLText.escape(yLabel))</text>"
        for (index, line) in series.enumerated() {
            let color = palette[index % palette.count]
            let points = line.points.filter(usable)
            guard let first = points.first else { continue }
            var path = "M\(f(px(first.x))) \(f(py(first.y)))"
            for (previous, point) in zip(points, points.dropFirst()) {
                if step { path += " L\(f(px(point.x))) \(f(py(previous.y)))" }
                path += " L\(f(px(point.x))) \(f(py(point.y)))"
            }
            svg += "<path class=\"series\" d=\"\(path)\" fill=\"none\" stroke=\"\(color)\" stroke-width=\"2\"><title>\(HTMLText.escape(line.name))</title></path>"
            if !step {
                for point in points {
                    svg += "<circle cx=\"\(f(px(point.x)))\" cy=\"\(f(py(point.y)))\" r=\"3\" fill=\"\(color)\"><title>\(HTMLText.escape(line.name)): \(HTMLText.escape(formatX(point.x))), \(HTMLText.escape(formatY(point.y)))</title></circle>"
                    if labelPoints, series.count == 1 {
                        let rightHalf = px(point.x) > left + plotWidth / 2
                        svg += text(x: px(point.x) + (rightHalf ? -5 : 5), y: py(point.y) - 6, formatY(point.y), anchor: rightHalf ? "end" : "start", cssClass: "point-label")
                    }
                }
            }
            let legendX = 8 + Double(index % 2) * (width / 2), legendY = legendTop + Double(index / 2) * 18
            svg += "<rect x=\"\(f(legendX))\" y=\"\(f(legendY))\" width=\"10\" height=\"10\" fill=\"\(color)\"/>"
            svg += text(x: legendX + 14, y: legendY + 9, Self.legend(line.name), cssClass: "legend")
        }
        return svg + "</svg>"
    }

    /// A legend entry within 24 characters, an ellipsis where it was cut.
    package static func legend(_ name: String) -> String {
        name.count <= 24 ? name : String(name.prefix(23)) + "…"
    }

    /// A category's label, right-aligned at `x` and cut with an ellipsis to the `room`
    /// left of it (``ChartAxis/textWidth(_:)``), the whole label then in its tooltip: a
    /// long one ran past the chart's left edge.
    static func label(x: Double, y: Double, _ label: String, room: Double) -> String {
        let shown = shownLabel(label, room: room)
        guard shown != label else { return text(x: x, y: y, label, anchor: "end", cssClass: "label") }
        return "<text class=\"label\" x=\"\(f(x))\" y=\"\(f(y))\" text-anchor=\"end\">\(HTMLText.escape(shown))<title>\(HTMLText.escape(label))</title></text>"
    }

    /// `label` whole where it fits in `room`, else its longest start that fits with a `…`.
    static func shownLabel(_ label: String, room: Double) -> String {
        guard ChartAxis.textWidth(label) > room else { return label }
        var cut = label
        while cut.count > 1, ChartAxis.textWidth(cut + "…") > room { cut.removeLast() }
        return cut + "…"
    }

    private static func header(height: Double, title: String) -> String {
        // Its size in the attributes, scaled down by the page's `max-width:100%; height:auto`.
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Int(width))\" height=\"\(Int(height.rounded(.up)))\" viewBox=\"0 0 \(f(width)) \(f(height))\" role=\"img\" aria-label=\"\(HTMLText.escape(title))\">"
            + text(x: 4, y: 14, title, cssClass: "chart-title")
    }

    private static func text(x: Double, y: Double, _ content: String, anchor: String = "start", cssClass: String) -> String {
        "<text class=\"\(cssClass)\" x=\"\(f(x))\" y=\"\(f(y))\" text-anchor=\"\(anchor)\">\(HTMLText.escape(content))</text>"
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }
}

/// A power law fitted to a sweep: `y ≈ a·x^exponent`, by least squares on the logs.
package struct GrowthFit: Sendable, Equatable {
    package var exponent: Double
    package var rSquared: Double

    package init?(_ points: [(x: Double, y: Double)]) {
        let logs = points.filter { $0.x > 0 && $0.y > 0 }.map { (log($0.x), log($0.y)) }
        guard logs.count >= 3 else { return nil }
        let n = Double(logs.count)
        let meanX = logs.map(\.0).reduce(0, +) / n
        let meanY = logs.map(\.1).reduce(0, +) / n
        let sxx = logs.reduce(0) { $0 + ($1.0 - meanX) * ($1.0 - meanX) }
        let sxy = logs.reduce(0) { $0 + ($1.0 - meanX) * ($1.1 - meanY) }
        let syy = logs.reduce(0) { $0 + ($1.1 - meanY) * ($1.1 - meanY) }
        guard sxx > 0 else { return nil }
        exponent = sxy / sxx
        rSquared = syy > 0 ? (sxy * sxy) / (sxx * syy) : 1
    }

    /// `time ∝ n^2.0, R² 0.99`.
    package func description(of quantity: String, over parameter: String) -> String {
        String(format: "%@ ∝ %@^%.1f, R² %.2f", quantity, parameter, exponent, rSquared)
    }
}
