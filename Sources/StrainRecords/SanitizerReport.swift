import Foundation

/// One report of a sanitizer (ThreadSanitizer or AddressSanitizer) about a trial's
/// process: what it found, the stacks it gave, each frame named by Strain's own
/// symbolizer, and its text as the sanitizer wrote it.
///
/// Reports are read from the file the sanitizer was told to write for the trial
/// (`log_path` in `TSAN_OPTIONS`/`ASAN_OPTIONS`), never scraped from a standard error
/// the program also writes. Reports with the same pair of locations are one record
/// with a count.
public struct SanitizerReport: Codable, Hashable, Sendable {
    /// Which sanitizer wrote it.
    public enum Tool: String, Codable, Hashable, Sendable, CaseIterable {
        /// ThreadSanitizer (`-sanitize=thread`, `-fsanitize=thread`).
        case threadSanitizer
        /// AddressSanitizer (`-sanitize=address`, `-fsanitize=address`).
        case addressSanitizer

        /// `ThreadSanitizer`, as the sanitizer names itself.
        public var displayName: String {
            switch self {
            case .threadSanitizer: "ThreadSanitizer"
            case .addressSanitizer: "AddressSanitizer"
            }
        }
    }

    /// One stack of the report: an access, the allocation, a thread's creation.
    public struct Stack: Codable, Hashable, Sendable {
        /// The sanitizer's own heading for it (`Read of size 4 at 0x7b04… by thread T2`).
        public var title: String
        /// Its frames, innermost first.
        public var frames: [Frame]

        /// A stack with this heading and these frames.
        public init(title: String, frames: [Frame]) {
            self.title = title
            self.frames = frames
        }
    }

    /// The sanitizer that wrote the report.
    public var tool: Tool
    /// What it found: `data race`, `Swift access race`, `heap-use-after-free`, `attempting double-free`.
    public var kind: String
    /// The process the report came from.
    public var pid: Int
    /// The conflicting or faulty accesses, the current one first (for a race: both sides).
    public var accesses: [Stack]
    /// Where the memory came from (allocated, or freed before it was used), when the report says.
    public var location: [Stack]
    /// Where each thread that appears in the report was created.
    public var threads: [Stack]
    /// The report's last line (`SUMMARY: ThreadSanitizer: data race …`), without the prefix.
    public var summary: String
    /// How many reports had the same kind and the same pair of locations.
    public var count: Int
    /// The report as the sanitizer wrote it (its own frames unsymbolized), capped.
    public var text: String

    /// A report of these values.
    public init(tool: Tool, kind: String, pid: Int, accesses: [Stack], location: [Stack], threads: [Stack],
                summary: String, count: Int, text: String) {
        self.tool = tool
        self.kind = kind
        self.pid = pid
        self.accesses = accesses
        self.location = location
        self.threads = threads
        self.summary = summary
        self.count = count
        self.text = text
    }

    /// Whether it reports a race (ThreadSanitizer's `data race` or `Swift access race`).
    public var isRace: Bool { tool == .threadSanitizer && kind.contains("race") }

    /// `data race: race.c:5 work / race.c:5 work` — the kind and where each access was, once per distinct pair.
    public var headline: String {
        let places = accesses.prefix(2).map { stack in stack.frames.first { $0.location != nil || $0.symbol != nil }.map(Self.place) ?? "?" }
        return "\(tool.displayName): \(kind)" + (places.isEmpty ? "" : " at " + places.joined(separator: " and ")) + (count > 1 ? " (×\(count))" : "")
    }

    /// `work (race.c:5)`, or the symbol alone, or the module and offset.
    public static func place(_ frame: Frame) -> String {
        let name = frame.symbol ?? frame.moduleName.map { "\($0)+0x\(String(frame.moduleOffset ?? 0, radix: 16))" } ?? "?"
        guard let file = frame.file, let line = frame.line else { return name }
        return "\(name) (\((file as NSString).lastPathComponent):\(line))"
    }

    /// The identity reports are deduplicated by: the tool, the kind and each access's first named place.
    public var identity: String {
        ([tool.rawValue, kind] + accesses.map { $0.frames.first.map(Self.place) ?? "" }).joined(separator: "|")
    }
}
