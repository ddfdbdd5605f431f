import Foundation

/// Escapes text for HTML and SVG: every string from a suite, a scenario, a
/// symbol or an error goes through here.
public enum HTMLText {
    public static func escape(_ text: String) -> String {
        MarkupText.escape(text, extra: ["\"": "&quot;", "'": "&#39;"], control: "\u{FFFD}")
    }
}

/// Small SVG charts drawn by Strain itself: no scripts, no fonts fetched.
enum SVGChart {
    static let width = 600.0
    static let palette = ["#3366cc", "#dc7f00", "#2b9348", "#c1121f", "#7b2cbf", "#00838f", "#8d6e63", "#5c677d"]
    static let outcomeColors: [String: String] = [
        "completed": "#2b9348", "threw": "#dc7f00", "invariantViolated": "#e85d04", "stackOverflow": "#c1121f",
        "crashed": "#9d0208", "starved": "#7b2cbf", "deadlocked": "#5a189a", "timedOut": "#5c677d", "harnessError": "#000000",
    ]

    /// One bar per category, with an optional low–high whisker (the spread
    /// across repetitions) and a marker for categories that have no value.
    struct Bar {
        var label: String
        var value: Double?
        var low: Double?
        var high: Double?
        var limit: Double?
        var marked: Bool = false
        var note: String?
    }

    /// Horizontal bars: labels on the left, values to the right.
    static func bars(_ bars: [Bar], title: String, format: (Double) -> String, limitLabel: String? = nil) -> String {
        let rowHeight = 22.0
        let labelWidth = 190.0
        let plotWidth = width - labelWidth - 90
        let height = Double(bars.count) * rowHeight + 34
        let maximum = bars.flatMap { [$0.value, $0.high, $0.limit].compactMap { $0 } }.max() ?? 1
        let scale = maximum > 0 ? plotWidth / maximum : 0
        var svg = header(height: height, title: title)
        for (index, bar) in bars.enumerated() {
            let y = 24 + Double(index) * rowHeight
            svg += text(x: labelWidth - 6, y: y + 14, bar.label, anchor: "end", cssClass: "label")
            if let value = bar.value {
                let length = max(1, value * scale)
                svg += "<rect class=\"bar\" x=\"\(f(labelWidth))\" y=\"\(f(y + 3))\" width=\"\(f(length))\" height=\"\(f(rowHeight - 8))\" fill=\"\(palette[index % palette.count])\"><title>\(HTMLText.escape(bar.label)): \(HTMLText.escape(format(value)))</title></rect>"
                if let low = bar.low, let high = bar.high, high > low {
                    let mid = y + rowHeight / 2 - 1
                    svg += "<line class=\"whisker\" x1=\"\(f(labelWidth + low * scale))\" x2=\"\(f(labelWidth + high * scale))\" y1=\"\(f(mid))\" y2=\"\(f(mid))\" stroke=\"#222\"/>"
                }
                let end = max(length, (bar.high ?? 0) * scale)
                svg += text(x: labelWidth + end + 6, y: y + 14, format(value) + (bar.note.map { " " + $0 } ?? ""), cssClass: "value")
            } else {
                svg += text(x: labelWidth + 4, y: y + 14, bar.note ?? "no value", cssClass: "value muted")
            }
            if let limit = bar.limit {
                let x = labelWidth + limit * scale
                svg += "<line class=\"limit\" x1=\"\(f(x))\" x2=\"\(f(x))\" y1=\"\(f(y + 1))\" y2=\"\(f(y + rowHeight - 3))\" stroke=\"#c1121f\" stroke-width=\"2\"><title>\(HTMLText.escape(limitLabel ?? "limit")): \(HTMLText.escape(format(limit)))</title></line>"
            }
            if bar.marked {
                svg += text(x: labelWidth - 180, y: y + 14, "✕", cssClass: "overflow-mark")
            }
        }
        return svg + "</svg>"
    }

    /// Stacked counts per category (an outcome histogram).
    static func stacked(_ rows: [(label: String, counts: [(name: String, count: Int)])], title: String) -> String {
        let rowHeight = 22.0
        let labelWidth = 190.0
        let plotWidth = width - labelWidth - 20
        let height = Double(rows.count) * rowHeight + 34
        let maximum = Double(rows.map { $0.counts.reduce(0) { $0 + $1.count } }.max() ?? 1)
        var svg = header(height: height, title: title)
        for (index, row) in rows.enumerated() {
            let y = 24 + Double(index) * rowHeight
            svg += text(x: labelWidth - 6, y: y + 14, row.label, anchor: "end", cssClass: "label")
            var x = labelWidth
            for part in row.counts where part.count > 0 {
                let length = Double(part.count) / maximum * plotWidth
                let kind = part.name.split(separator: "(").first.map(String.init) ?? part.name
                svg += "<rect class=\"outcome\" x=\"\(f(x))\" y=\"\(f(y + 3))\" width=\"\(f(length))\" height=\"\(f(rowHeight - 8))\" fill=\"\(outcomeColors[kind] ?? "#888")\"><title>\(part.count) \(HTMLText.escape(part.name))</title></rect>"
                if length > 60 { svg += text(x: x + 4, y: y + 14, "\(part.count) \(part.name)", cssClass: "in-bar") }
                x += length
            }
        }
        return svg + "</svg>"
    }

    /// A line per series, on linear or logarithmic axes.
    struct Series {
        var name: String
        var points: [(x: Double, y: Double)]
    }

    static func lines(_ series: [Series], title: String, xLabel: String, yLabel: String, logX: Bool = false, logY: Bool = false,
                      formatX: (Double) -> String, formatY: (Double) -> String, step: Bool = false, xTicks: [Double]? = nil) -> String {
        let height = 260.0
        let left = 70.0, right = 190.0, top = 26.0, bottom = 40.0
        let plotWidth = width - left - right
        let plotHeight = height - top - bottom
        let usable = { (point: (x: Double, y: Double)) in
            point.x.isFinite && point.y.isFinite && (!logX || point.x > 0) && (!logY || point.y > 0)
        }
        let all = series.flatMap(\.points).filter(usable)
        guard !all.isEmpty else { return "" }
        func transform(_ value: Double, _ log: Bool) -> Double { log ? log10(value) : value }
        var minX = all.map { transform($0.x, logX) }.min()!, maxX = all.map { transform($0.x, logX) }.max()!
        var minY = logY ? all.map { transform($0.y, true) }.min()! : 0, maxY = all.map { transform($0.y, logY) }.max()!
        if maxX == minX { maxX = minX + 1; minX -= 0 }
        if maxY == minY { maxY = minY + 1 }
        if logY { minY = floor(minY); maxY = ceil(maxY) }
        let px = { (x: Double) in left + (transform(x, logX) - minX) / (maxX - minX) * plotWidth }
        let py = { (y: Double) in top + plotHeight - (transform(y, logY) - minY) / (maxY - minY) * plotHeight }
        var svg = header(height: height, title: title)
        svg += "<rect class=\"plot\" x=\"\(f(left))\" y=\"\(f(top))\" width=\"\(f(plotWidth))\" height=\"\(f(plotHeight))\" fill=\"none\" stroke=\"#bbb\"/>"
        // Y ticks: decades on a log axis, quarters on a linear one.
        let yTicks = ticks(from: minY, to: maxY, log: logY)
        for tick in yTicks {
            let y = py(tick)
            svg += "<line class=\"grid\" x1=\"\(f(left))\" x2=\"\(f(left + plotWidth))\" y1=\"\(f(y))\" y2=\"\(f(y))\" stroke=\"#eee\"/>"
            svg += text(x: left - 6, y: y + 4, formatY(tick), anchor: "end", cssClass: "tick")
        }
        let xs = xTicks ?? ticks(from: logX ? floor(minX) : minX, to: logX ? ceil(maxX) : maxX, log: logX)
        for tick in xs where transform(tick, logX) >= minX - 1e-9 && transform(tick, logX) <= maxX + 1e-9 {
            let x = px(tick)
            svg += "<line class=\"grid\" x1=\"\(f(x))\" x2=\"\(f(x))\" y1=\"\(f(top))\" y2=\"\(f(top + plotHeight))\" stroke=\"#eee\"/>"
            svg += text(x: x, y: top + plotHeight + 16, formatX(tick), anchor: "middle", cssClass: "tick")
        }
        svg += text(x: left + plotWidth / 2, y: height - 6, xLabel, anchor: "middle", cssClass: "axis")
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
                }
            }
            svg += "<rect x=\"\(f(left + plotWidth + 12))\" y=\"\(f(top + Double(index) * 18))\" width=\"10\" height=\"10\" fill=\"\(color)\"/>"
            svg += text(x: left + plotWidth + 26, y: top + Double(index) * 18 + 9, line.name, cssClass: "legend")
        }
        return svg + "</svg>"
    }

    /// Decades on a log axis (bounds given as exponents), quarters on a linear one.
    private static func ticks(from low: Double, to high: Double, log: Bool) -> [Double] {
        if log {
            var result: [Double] = []
            var exponent = low
            while exponent <= high + 1e-9 {
                result.append(pow(10, exponent))
                exponent += 1
            }
            return result
        }
        var result: [Double] = []
        for quarter in 0...4 { result.append(low + (high - low) * Double(quarter) / 4) }
        return result
    }

    private static func header(height: Double, title: String) -> String {
        "<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(f(width))\" height=\"\(f(height))\" viewBox=\"0 0 \(f(width)) \(f(height))\" role=\"img\" aria-label=\"\(HTMLText.escape(title))\">"
            + text(x: 4, y: 14, title, cssClass: "chart-title")
    }

    private static func text(x: Double, y: Double, _ content: String, anchor: String = "start", cssClass: String) -> String {
        "<text class=\"\(cssClass)\" x=\"\(f(x))\" y=\"\(f(y))\" text-anchor=\"\(anchor)\">\(HTMLText.escape(content))</text>"
    }

    static func f(_ value: Double) -> String { String(format: "%.1f", value) }
}

/// A power law fitted to a sweep: `y ≈ a·x^exponent`, by least squares on the logs.
public struct GrowthFit: Sendable, Equatable {
    public var exponent: Double
    public var rSquared: Double

    public init?(_ points: [(x: Double, y: Double)]) {
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
    public func description(of quantity: String, over parameter: String) -> String {
        String(format: "%@ ∝ %@^%.1f, R² %.2f", quantity, parameter, exponent, rSquared)
    }
}
