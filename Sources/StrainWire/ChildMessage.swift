import Foundation

/// One message from a `_trial` child to its parent on the result pipe (fd 3).
///
/// The wire format is line-framed text, because the fault record is written by
/// a signal handler that can only `write(2)` preformatted bytes:
///
/// - `METRICS {json}\n`: what `prepare` recorded (`PreparedMetrics`), before the work starts;
/// - `RESULT {json}\n`: the child's `HostReport`, whose `version` is checked first;
/// - `REMOTE-UNWIND tid tid …\n`: after a report, threads the parent should walk;
/// - `STRAIN-FAULT 1\n` … `END\n`: the fault handler's record, version on its first line.
///
/// Every message starts at the beginning of the stream or right after the one
/// before; anything else on the pipe is a protocol error, never guessed at.
package enum ChildMessage: Sendable {
    /// The metrics `prepare` recorded, sent before the work starts.
    case preparedMetrics(PreparedMetrics)
    /// The child finished its work and measured it.
    case report(HostReport)
    /// The child's fault handler ran (a crash or a stack overflow).
    case fault(FaultRecord)
    /// Threads the child could not dump itself; it waits to be walked and killed.
    case remoteUnwindRequest([Int])
}

/// The parent's reading of the result pipe: the messages in order, and the
/// first protocol error if the bytes stopped making sense.
package struct ChildMessages: Sendable {
    package var messages: [ChildMessage] = []
    /// Why the rest of the pipe could not be read (garbage, a version this runner does not read).
    package var problem: String?

    package var report: HostReport? {
        for case .report(let report) in messages { return report }
        return nil
    }

    package var fault: FaultRecord? {
        for case .fault(let fault) in messages { return fault }
        return nil
    }

    package var remoteUnwindRequest: [Int]? {
        for case .remoteUnwindRequest(let tids) in messages { return tids }
        return nil
    }

    package var preparedMetrics: PreparedMetrics? {
        for case .preparedMetrics(let metrics) in messages { return metrics }
        return nil
    }

    package var isEmpty: Bool { messages.isEmpty && problem == nil }

    /// Whether the child said how its trial ended (a report, a fault, an unwind
    /// request) or broke the protocol: the prepared metrics alone say nothing of the end.
    package var saysHowItEnded: Bool { report != nil || fault != nil || remoteUnwindRequest != nil || problem != nil }
}

/// The versions and markers of the child protocol, and its one decoder.
package enum ChildProtocol {
    /// The fault record's version, written on its first line by `strain_probe.c`.
    package static let faultRecordVersion = 1
    static let report = Array(HostReport.linePrefix.utf8)
    static let prepared = Array(PreparedMetrics.linePrefix.utf8)
    static let remoteUnwind = Array(HostReport.remoteUnwindPrefix.utf8)
    static let fault = Array(FaultRecord.marker.utf8)

    /// Decodes every message in `bytes`; a trailing line without its newline is
    /// left for later unless `final` (the pipe is closed), when it is a cut message.
    package static func decode(_ bytes: [UInt8], final: Bool = true) -> ChildMessages {
        var result = ChildMessages()
        var position = 0
        while position < bytes.count {
            let rest = bytes[position...]
            let lineEnd = rest.firstIndex(of: UInt8(ascii: "\n"))
            if rest.starts(with: fault) {
                let text = String(decoding: rest, as: UTF8.self)
                let firstLine = text.prefix { $0 != "\n" }
                let version = Int(firstLine.dropFirst(FaultRecord.marker.count).trimmingCharacters(in: .whitespaces))
                guard version == faultRecordVersion else {
                    result.problem = "a fault record of version \(String(firstLine.dropFirst(FaultRecord.marker.count).prefix(20))); this runner reads version \(faultRecordVersion) (a child built from another Strain?)"
                    return result
                }
                guard let record = FaultRecord(parsing: text[...]) else {
                    result.problem = "a fault record that could not be read"
                    return result
                }
                result.messages.append(.fault(record))
                // The record runs to its END line; whatever follows is another message.
                guard let end = text.range(of: "\nEND\n") else { return result }
                position += text[..<end.upperBound].utf8.count
                continue
            }
            guard let lineEnd else {
                if final, !rest.allSatisfy({ $0 == 0 || $0 == UInt8(ascii: "\n") }) {
                    result.problem = "a message cut short: \(printable(rest))"
                }
                return result
            }
            let line = bytes[position..<lineEnd]
            if line.starts(with: report) {
                let json = Data(line.dropFirst(report.count))
                struct Version: Decodable { var version: Int }
                guard let version = try? JSONDecoder().decode(Version.self, from: json) else {
                    result.problem = "a RESULT line that is not a versioned JSON report: \(printable(line))"
                    return result
                }
                guard version.version == HostReport.currentVersion else {
                    result.problem = "a report of version \(version.version); this runner reads version \(HostReport.currentVersion) (a child built from another Strain?)"
                    return result
                }
                do {
                    result.messages.append(.report(try JSONDecoder().decode(HostReport.self, from: json)))
                } catch {
                    result.problem = "a report that could not be decoded: \(error)"
                    return result
                }
            } else if line.starts(with: prepared) {
                let json = Data(line.dropFirst(prepared.count))
                struct Version: Decodable { var version: Int }
                guard let version = try? JSONDecoder().decode(Version.self, from: json) else {
                    result.problem = "a METRICS line that is not versioned JSON: \(printable(line))"
                    return result
                }
                guard version.version == PreparedMetrics.currentVersion else {
                    result.problem = "prepared metrics of version \(version.version); this runner reads version \(PreparedMetrics.currentVersion) (a child built from another Strain?)"
                    return result
                }
                do {
                    result.messages.append(.preparedMetrics(try JSONDecoder().decode(PreparedMetrics.self, from: json)))
                } catch {
                    result.problem = "prepared metrics that could not be decoded: \(error)"
                    return result
                }
            } else if line.starts(with: remoteUnwind) {
                let fields = String(decoding: line.dropFirst(remoteUnwind.count), as: UTF8.self).split(separator: " ")
                let tids = fields.compactMap { Int($0) }
                guard tids.count == fields.count else {
                    result.problem = "a REMOTE-UNWIND line with something other than thread ids: \(printable(line))"
                    return result
                }
                result.messages.append(.remoteUnwindRequest(tids))
            } else if !line.isEmpty {
                result.problem = "bytes that are no Strain message: \(printable(line))"
                return result
            }
            position = lineEnd + 1
        }
        return result
    }

    /// The first 80 bytes, control characters and non-ASCII shown escaped.
    static func printable(_ bytes: ArraySlice<UInt8>) -> String {
        var text = ""
        for byte in bytes.prefix(80) {
            if (0x20..<0x7F).contains(byte) { text.unicodeScalars.append(Unicode.Scalar(byte)) } else { text += String(format: "\\x%02x", byte) }
        }
        return "'\(text)'" + (bytes.count > 80 ? " (\(bytes.count) bytes)" : "")
    }

    /// The tids of a complete `REMOTE-UNWIND` line that ends the bytes so far, if
    /// any: checked as bytes arrive, cheaply, without decoding a whole report again.
    package static func pendingRemoteUnwind(in bytes: [UInt8]) -> [Int]? {
        guard bytes.count > remoteUnwind.count, bytes.last == UInt8(ascii: "\n") else { return nil }
        let lineStart = bytes.dropLast().lastIndex(of: UInt8(ascii: "\n")).map { $0 + 1 } ?? 0
        let line = bytes[lineStart..<(bytes.count - 1)]
        guard line.starts(with: remoteUnwind) else { return nil }
        return String(decoding: line.dropFirst(remoteUnwind.count), as: UTF8.self).split(separator: " ").compactMap { Int($0) }
    }
}
