import Foundation

/// A chart's axis laid out: the ticks of its scale (round steps, powers, decades) and
/// the labels of those ticks that can be read without running into each other.
package enum ChartAxis {
    /// The decimals a tick step needs to be written exactly: 0.25 needs 2 (it was
    /// counted from log10 of the step, which gave 1 and labels 0.2 and 0.8).
    package static func decimals(for step: Double) -> Int {
        guard step.isFinite, step > 0 else { return 0 }
        return (0...6).first { digits in
            let scaled = step * pow(10, Double(digits))
            return abs(scaled - scaled.rounded()) < 1e-6 * max(1, scaled)
        } ?? 6
    }

    /// 0 and round steps (1, 2 or 5 × 10ⁿ) up to the first at or above `maximum`: 4 to 6 ticks.
    /// `binary`: steps that are powers of two (bytes: 0, 2, 4, 6, 8 MiB).
    package static func niceTicks(upTo maximum: Double, binary: Bool = false) -> [Double] {
        // Below the smallest normal Double (a denormal such as 5e-324) the chart's
        // scale, width / maximum, would be infinite: such values draw as 0.
        guard maximum.isFinite, maximum >= .leastNormalMagnitude else { return [0, 1] }
        let rough = maximum / 4
        let magnitude = pow(10, floor(log10(rough)))
        let step = binary ? pow(2, ceil(log2(rough))) : [1.0, 2, 2.5, 5, 10].map { $0 * magnitude }.first { $0 >= rough } ?? 10 * magnitude
        // The step is at least a quarter of the maximum, so there are at most 5
        // ticks; a maximum too small for a step (a denormal: a quarter of it is 0)
        // or too near the largest Double for the last tick gets its two ends.
        let steps = (maximum / step - 1e-9).rounded(.up)
        guard step > 0, steps.isFinite, steps <= 8, (steps * step).isFinite else { return [0, maximum] }
        return (0...Int(max(1, steps))).map { Double($0) * step }
    }

    /// The round values a log axis over `decades` ticks at: every decade over a wide range.
    static func logMultipliers(decades: Double) -> [Double] {
        decades > 3 ? [1] : decades > 1.2 ? [1, 2, 5] : [1, 1.5, 2, 3, 5, 7]
    }

    /// The ends of a log axis that shows [low, high]: each widened to the nearest round
    /// value outside it, so the axis begins and ends on a labelled gridline (a latency
    /// chart's curves ran on to 922 µs above its top label, 100 µs: re-trial 35j).
    package static func logBounds(from low: Double, to high: Double) -> (low: Double, high: Double) {
        guard low > 0, high >= low, low.isFinite, high.isFinite else { return (low, high) }
        var bounds = (low: low, high: high)
        // Widening can cross into a coarser set of round values: then widen again, by it.
        for _ in 0..<3 {
            let multipliers = logMultipliers(decades: log10(bounds.high) - log10(bounds.low))
            let exponents = Int(floor(log10(low))) - 1...Int(ceil(log10(high))) + 1
            let round = exponents.flatMap { exponent in multipliers.map { $0 * pow(10, Double(exponent)) } }.sorted()
            let widened = (low: round.last { $0 <= low * 1.001 } ?? low, high: round.first { $0 >= high * 0.999 } ?? high)
            if widened == bounds { break }
            bounds = widened
        }
        return bounds
    }

    /// The round values of a log axis that shows [low, high], from ``logBounds(from:to:)`` to its ends.
    package static func logTicks(spanning low: Double, _ high: Double) -> [Double] {
        let bounds = logBounds(from: low, to: high)
        return logTicks(from: bounds.low, to: bounds.high)
    }

    /// Round values (1, 2, 5 × 10ⁿ, or every decade over a wide range) within [low, high], at least two.
    package static func logTicks(from low: Double, to high: Double) -> [Double] {
        guard low > 0, high >= low else { return [] }
        let decades = log10(high) - log10(low)
        let multipliers = logMultipliers(decades: decades)
        var ticks: [Double] = []
        var exponent = floor(log10(low))
        while exponent <= ceil(log10(high)) {
            for multiplier in multipliers {
                let value = multiplier * pow(10, exponent)
                if value >= low * 0.999 && value <= high * 1.001 { ticks.append(value) }
            }
            exponent += 1
        }
        if ticks.count < 2 { ticks = [low, high] }
        return ticks
    }

    /// Powers of two in bytes (1 MiB, 2 MiB, 4 MiB …) within [low, high], for memory on a log axis.
    package static func byteTicks(from low: Double, to high: Double) -> [Double] {
        guard low > 0, high >= low else { return [] }
        var ticks: [Double] = []
        var value = pow(2, floor(log2(low)))
        while value <= high * 1.001 {
            if value >= low * 0.999 { ticks.append(value) }
            value *= 2
        }
        guard ticks.count < 2 else { return ticks }
        // No two powers of 2 inside (a bisect's peak RSS, 28.2–31.6 MiB): round steps of a
        // power of 2 around the data, so the axis begins and ends on a label (it was
        // labelled at the data's two ends, two thirds of the plot without one; re-trial 35k).
        guard high > low else { return [low] }
        let step = pow(2, floor(log2((high - low) / 2)))
        return Array(stride(from: floor(low / step) * step, through: ceil(high / step) * step + step / 2, by: step))
    }

    /// Ticks at powers of 10 (of 2 when `binary`) from the one below the smallest
    /// positive value to the first at or above the largest, every second or third
    /// power when there would be more than 7; nil without a positive value or
    /// where a power would not be a finite, normal Double.
    package static func powerTicks(_ values: [Double], binary: Bool) -> [Double]? {
        let positive = values.filter { $0 > 0 && $0.isFinite }
        guard let smallest = positive.min(), let largest = positive.max() else { return nil }
        let base = binary ? 2.0 : 10.0
        let low = ceil(log(smallest) / log(base) - 1e-9) - 1
        var high = max(low + 1, ceil(log(largest) / log(base) - 1e-9))
        let stride = max(1, ((high - low) / 6).rounded(.up))
        high = low + stride * ((high - low) / stride).rounded(.up)
        let ticks = Swift.stride(from: low, through: high, by: stride).map { pow(base, $0) }
        // Values near the ends of Double (a denormal, 1e308) have no power to stand on: a linear axis then.
        guard ticks.count >= 2, ticks.allSatisfy({ $0.isFinite && $0 >= .leastNormalMagnitude }) else { return nil }
        return ticks
    }

    /// An axis's label at `x`, anchored `start`, `middle` or `end` there.
    package struct TickLabel: Equatable, Sendable {
        package var x: Double
        package var text: String
        package var anchor: String

        package init(x: Double, text: String, anchor: String) {
            self.x = x
            self.text = text
            self.anchor = anchor
        }

        /// Where the label's ink lies, ``textWidth(_:)`` wide.
        package var extent: ClosedRange<Double> {
            let width = ChartAxis.textWidth(text)
            let start = anchor == "start" ? x : anchor == "end" ? x - width : x - width / 2
            return start...(start + width)
        }
    }

    /// About how wide `text` is in the charts' 11 px sans-serif, from Arial's widths, a
    /// little wider (`thread-pool(64, 512KiB)` is about 117 px, where 6.6 px a character
    /// made it 152 and cut it to `thread-pool(64, 512K…` in a 144 px column): narrow
    /// letters and punctuation 3.7 px, digits and most lowercase 6.1, capitals 7.9, `m`,
    /// `w`, `M`, `W`, `%` and `@` 9.9, any other character (`…` is a whole em) 11.
    package static func textWidth(_ text: String) -> Double {
        let narrow = Set(" ilj.,:;'!|()[]-/tfrI"), wide = Set("mwMW%@")
        return text.reduce(0) { sum, character in
            sum + (narrow.contains(character) ? 3.7 : wide.contains(character) ? 9.9
                   : character.isASCII && character.isUppercase ? 7.9 : character.isASCII ? 6.1 : 11)
        }
    }

    /// The labels that can be read: the two ends first, then each other from the left
    /// unless it would come within 2 px of one kept (on a log axis whose last two ticks
    /// are 32 MiB and 128 MiB apart by 64 px, their labels printed over each other).
    package static func fitted(_ labels: [TickLabel]) -> [TickLabel] {
        guard labels.count > 2 else { return labels }
        var kept = [labels[0], labels[labels.count - 1]]
        for label in labels.dropFirst().dropLast() {
            let range = label.extent
            if kept.allSatisfy({ $0.extent.upperBound + 2 <= range.lowerBound || range.upperBound + 2 <= $0.extent.lowerBound }) { kept.append(label) }
        }
        return kept.sorted { $0.x < $1.x }
    }

    /// A tick's value without decimals that are all zero (`32 MiB`, not `32.0 MiB`;
    /// `10 µs`, not `10.0 µs`), and zero as `0` whatever the unit (`0 µs` beside
    /// `20 ms` reads as two units): shorter labels crowd an axis less.
    package static func tickText(_ label: String) -> String {
        if label.wholeMatch(of: /0(\.0+)?( \S+)?/) != nil { return "0" }
        // `2.50 ms` as `2.5 ms` beside `5 ms`: no zero ends a decimal part.
        return label.replacingOccurrences(of: #"(\d\.\d*?[1-9])0+(?!\d)"#, with: "$1", options: .regularExpression)
            .replacingOccurrences(of: #"(\d)\.0+(?!\d)"#, with: "$1", options: .regularExpression)
    }
}
