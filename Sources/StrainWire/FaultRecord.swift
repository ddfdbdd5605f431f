import Foundation

/// The fault record as the child's handler wrote it: raw addresses, the stack
/// bounds, and a copy of /proc/self/maps at the moment of the fault.
package struct FaultRecord: Sendable {
    package var signal: Int32 = 0
    package var code: Int32 = 0
    package var address: UInt64 = 0
    package var isOverflow = false
    package var threadWasPrepared = false
    package var stackLow: UInt64?
    package var stackHigh: UInt64?
    package var guardSize: Int?
    package var markedDepth: Int = 0
    package var totalFrames = 0
    /// Kept frames: the head as walked from the fault, then the tail.
    package var headFrames: [UInt64] = []
    package var tailFrames: [UInt64] = []
    package var walkNanoseconds = 0
    /// unw_step's last answer (0 at the outermost frame, negative where the walk could
    /// not go on) and the last frame's stack pointer; nil in records without them.
    package var walkEnd: Int?
    package var lastStackPointer: UInt64?
    package var captureNanoseconds: Int?
    /// Which walk made the record: `fast` (libunwind's cached trace) or `step` (the
    /// `unw_step` loop); nil in records from before the fast walk.
    package var walk: String?
    /// Why the fast walk did not make the record ("buffer full", "stopped short",
    /// "thread not warmed", …); nil when it did.
    package var walkFallback: String?
    package var maps = ""
    /// The faulting process, its parent and its command line (records from a probe that wrote them).
    package var pid: Int32?
    package var parentPid: Int32?
    package var commandLine: [String]?
    /// The thread that faulted: its id, and the name the program gave it (15 bytes at most).
    package var threadID: Int32?
    /// See `threadID`.
    package var threadName: String?
    /// The runtime's last words, read by the handler: glibc's abort message
    /// (`free(): double free detected in tcache 2`), the Swift runtime's fatal error.
    package var lastWords: String?
    /// The process's threads and peak RSS (`VmHWM`) as it faulted, from its status
    /// file; nil in records without them, or out of range (1…1,000,000 threads, up to 4 TiB).
    package var threads: Int?
    /// See `threads`.
    package var peakRSSBytes: Int?
    /// Whether the record ran to its `END` line.
    package var isComplete = false

    /// The room a walk that reached the thread's outermost frame may leave above its
    /// last frame: the main thread's arguments, environment and auxiliary vector sit
    /// there (a few KiB; 256 KiB is far past any environment seen).
    package static let outermostFrameRoom: UInt64 = 256 << 10

    /// Whether the walk stopped before the thread's outermost frame: the unwinder
    /// could not go on (code without unwind information, a JIT's frames), or its last
    /// frame is far below the top of a stack whose bounds are known.
    package var walkStoppedShort: Bool {
        if let walkEnd, walkEnd < 0 { return true }
        if let last = lastStackPointer, last != 0, let high = stackHigh, high > last { return high - last > Self.outermostFrameRoom }
        return false
    }

    /// Frames counted by the handler but kept in neither head nor tail.
    package var omittedFrames: Int { max(0, totalFrames - headFrames.count - tailFrames.count) }

    /// The marker that opens a fault record on the result pipe.
    package static let marker = "STRAIN-FAULT "

    /// Parses the record starting at the marker in `text`; nil when there is none.
    package init?(parsing text: Substring) {
        guard let start = text.range(of: Self.marker) else { return nil }
        let body = text[start.lowerBound...]
        var lines = body.split(separator: "\n", omittingEmptySubsequences: false)[...]
        _ = lines.popFirst()
        var headCount = 0
        var framesRead = 0
        while let line = lines.popFirst() {
            if line == "maps" {
                var mapLines: [Substring] = []
                while let mapLine = lines.popFirst(), mapLine != "end-maps" { mapLines.append(mapLine) }
                maps = mapLines.joined(separator: "\n")
                continue
            }
            if line == "END" {
                isComplete = true
                break
            }
            guard let space = line.firstIndex(of: " ") else { continue }
            let key = line[..<space]
            let value = line[line.index(after: space)...]
            switch key {
            case "f":
                guard let frame = Self.hex(value) else { continue }
                if framesRead < headCount { headFrames.append(frame) } else { tailFrames.append(frame) }
                framesRead += 1
            case "signal": signal = Int32(value) ?? 0
            case "code": code = Int32(value) ?? 0
            case "address": address = Self.hex(value) ?? 0
            case "overflow": isOverflow = value == "1"
            case "prepared": threadWasPrepared = value == "1"
            case "stack_low": stackLow = Self.hex(value)
            case "stack_high": stackHigh = Self.hex(value)
            case "guard": guardSize = Int(value)
            case "depth": markedDepth = Int(value) ?? 0
            case "frames_total": totalFrames = Int(value) ?? 0
            case "frames_head": headCount = Int(value) ?? 0
            case "walk_ns": walkNanoseconds = Int(value) ?? 0
            case "walk_end": walkEnd = Int(value)
            case "last_sp": lastStackPointer = Self.hex(value)
            case "capture_ns": captureNanoseconds = Int(value)
            case "walk": walk = String(value)
            case "walk_fallback": walkFallback = String(value)
            case "pid": pid = Int32(value)
            case "ppid": parentPid = Int32(value)
            case "tid": threadID = Int32(value)
            case "thread_name": threadName = Self.unescaped(value)
            case "threads": threads = Int(value).flatMap { (1...1_000_000).contains($0) ? $0 : nil }
            case "peak_rss_kb": peakRSSBytes = Int(value).flatMap { (1...(1 << 32)).contains($0) ? $0 * 1024 : nil }
            case "cmdline": commandLine = Self.unescaped(value).split(separator: "\0", omittingEmptySubsequences: false).map(String.init)
            case "last_words":
                let words = Self.unescaped(value).trimmingCharacters(in: .whitespacesAndNewlines)
                if !words.isEmpty { lastWords = lastWords.map { $0 + "\n" + words } ?? words }
            default: continue
            }
        }
    }

    /// A text field as the handler escaped it (`\\`, `\n`, `\xHH`), back to its bytes.
    static func unescaped(_ text: Substring) -> String {
        var bytes: [UInt8] = []
        var input = Array(text.utf8)[...]
        while let byte = input.popFirst() {
            guard byte == UInt8(ascii: "\\"), let next = input.popFirst() else { bytes.append(byte); continue }
            switch next {
            case UInt8(ascii: "n"): bytes.append(10)
            case UInt8(ascii: "x"):
                let digits = input.prefix(2)
                input = input.dropFirst(2)
                bytes.append(UInt8(String(decoding: digits, as: UTF8.self), radix: 16) ?? 0)
            default: bytes.append(next)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func hex(_ text: Substring) -> UInt64? {
        guard text.hasPrefix("0x") else { return nil }
        return UInt64(text.dropFirst(2), radix: 16)
    }
}
