import Foundation
import StrainRecords
import StrainWire

/// What ThreadSanitizer and AddressSanitizer write about a process, read from the
/// files they were told to write (`log_path`), and turned into `SanitizerReport`s
/// whose frames Strain's own symbolizer names.
///
/// The sanitizers are asked not to symbolize (`symbolize=0`: their frames read
/// `(module+0xoffset)`, the offset being the ELF virtual address) and to print the
/// process's module map after every report (`print_module_map=2`), which gives each
/// module's path. (Printed at exit only, `print_module_map=1`, it was missing from trials
/// that end with `_exit`, and their frames stayed `strain+0x…`.)
package struct SanitizerLog: Sendable {
    /// The files' name in the folder: the sanitizer adds `.PID`.
    package static let fileName = "sanitizer"
    /// The most of one sanitizer log read: 16 MiB from its start (a report is a few KiB;
    /// a bigger log holds thousands, or was planted by the program under test).
    package static let logByteLimit = 16 << 20
    /// The most sanitizer logs read from one folder: one is written per process.
    package static let fileLimit = 64
    /// The most of all a trial's or a program's sanitizer logs read together: 64 logs of
    /// 16 MiB of reports, planted, took more than 60 s to read (each log is parsed whole
    /// before its repeats are merged); logs past it are not read, and the record says how many.
    package static let totalByteLimit = 32 << 20
    /// The most of a report's own text a record keeps.
    package static let textLimit = 16_384
    /// The most distinct reports named (symbolized) from one trial or program: a report
    /// past it is counted, not read, and the record says how many were (100,000 planted
    /// reports, each symbolized before duplicates were merged, took 100 s and 404 MB).
    package static let distinctLimit = 256

    /// What was read from a process's sanitizer logs, and what was left out.
    package struct Read: Sendable {
        /// The reports, distinct ones once with a count.
        package var reports: [SanitizerReport] = []
        /// What was not read, one sentence each (a log cut at its limit, reports past `distinctLimit`).
        package var leftOut: [String] = []

        /// Nothing read yet.
        package init() {}
    }

    /// One stack as the sanitizer printed it.
    package struct RawStack: Equatable, Sendable {
        package var title: String
        /// `(module as printed, virtual address)`, innermost first.
        package var frames: [(module: String, address: UInt64)]

        package static func == (left: RawStack, right: RawStack) -> Bool {
            left.title == right.title && left.frames.elementsEqual(right.frames) { $0.module == $1.module && $0.address == $1.address }
        }
    }

    /// One report as the sanitizer printed it.
    package struct RawReport: Equatable, Sendable {
        package var tool: SanitizerReport.Tool
        package var kind: String
        package var pid: Int
        package var stacks: [RawStack]
        package var summary: String
        package var text: String
    }

    /// The options for `TSAN_OPTIONS` and `ASAN_OPTIONS`: the program's own, then
    /// Strain's (the sanitizers read them in order and the last setting wins, so
    /// the report goes where Strain reads it while every other choice stays the user's).
    package static func options(existing: String?, folder: String, extra: String = "") -> String {
        let ours = "log_path=\((folder as NSString).appendingPathComponent(fileName)) symbolize=0 print_module_map=2" + extra
        guard let existing, !existing.trimmingCharacters(in: .whitespaces).isEmpty else { return ours }
        return existing + " " + ours
    }

    /// The environment a process is started with so that its sanitizer reports land in `folder`.
    package static func environment(_ base: [String: String], folder: String) -> [String: String] {
        var environment = base
        environment["TSAN_OPTIONS"] = options(existing: base["TSAN_OPTIONS"], folder: folder)
        // `strain exec` preloads a shared libasan ahead of the probe, but another preload the
        // user gives, or a runtime linked in, would make AddressSanitizer refuse to start.
        environment["ASAN_OPTIONS"] = options(existing: base["ASAN_OPTIONS"], folder: folder, extra: " verify_asan_link_order=0")
        return environment
    }

    /// Reports and the module paths (by file name) of one log file's text.
    package static func parse(_ text: String) -> (reports: [RawReport], modules: [String: String]) {
        var reports: [RawReport] = []
        var modules: [String: String] = [:]
        var current: RawReport?
        var stack: RawStack?
        var lastHeading: String?
        var lines: [Substring] = []
        func closeStack() {
            if let done = stack { current?.stacks.append(done) }
            stack = nil
        }
        func closeReport() {
            closeStack()
            if var done = current {
                done.text = String(lines.joined(separator: "\n").prefix(textLimit))
                reports.append(done)
            }
            current = nil
            lines = []
            lastHeading = nil
        }
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            // The module map: `0x55d4…-0x55d4… /path/to/module` (tab-separated), possibly with flags after.
            if trimmed.hasPrefix("0x"), let path = modulePath(trimmed) {
                let name = (path as NSString).lastPathComponent
                if modules[name] == nil { modules[name] = path }
                continue
            }
            if let start = reportStart(trimmed) {
                closeReport()
                current = RawReport(tool: start.tool, kind: start.kind, pid: start.pid, stacks: [], summary: "", text: "")
                lines = [line]
                if start.tool == .addressSanitizer { lastHeading = start.heading }
                continue
            }
            guard current != nil else { continue }
            lines.append(line)
            if trimmed.hasPrefix("SUMMARY: ") {
                let rest = trimmed.dropFirst("SUMMARY: ".count)
                let tool = current!.tool.displayName + ": "
                current!.summary = rest.hasPrefix(tool) ? String(rest.dropFirst(tool.count)) : String(rest)
                closeReport()
                continue
            }
            if let frame = frame(trimmed) {
                if stack == nil { stack = RawStack(title: lastHeading ?? "", frames: []) }
                if let frame = frame.place { stack!.frames.append(frame) }
                continue
            }
            closeStack()
            if !trimmed.isEmpty { lastHeading = trimmed.hasSuffix(":") ? String(trimmed.dropLast()) : trimmed }
        }
        // A log cut short (the process killed while writing) still keeps what it had.
        closeReport()
        return (reports, modules)
    }

    /// `WARNING: ThreadSanitizer: data race (pid=6127)` or
    /// `==6127==ERROR: AddressSanitizer: heap-use-after-free on address 0x… at pc …`.
    static func reportStart(_ line: String) -> (tool: SanitizerReport.Tool, kind: String, pid: Int, heading: String)? {
        if line.hasPrefix("WARNING: ThreadSanitizer: "), let open = line.range(of: " (pid=", options: .backwards) {
            let kind = line[line.index(line.startIndex, offsetBy: "WARNING: ThreadSanitizer: ".count)..<open.lowerBound]
            let pid = Int(line[open.upperBound...].prefix { $0.isNumber }) ?? 0
            return (.threadSanitizer, String(kind), pid, line)
        }
        if line.hasPrefix("=="), let marker = line.range(of: "==ERROR: AddressSanitizer: ") {
            let pid = Int(line.dropFirst(2).prefix { $0.isNumber }) ?? 0
            let rest = line[marker.upperBound...]
            let kind = rest.range(of: " on ").map { rest[..<$0.lowerBound] } ?? rest.prefix { $0 != " " }
            return (.addressSanitizer, String(kind), pid, rest.hasSuffix(":") ? String(rest.dropLast()) : String(rest))
        }
        return nil
    }

    /// A frame line: `#3 <null> <null> (race+0x121a) (BuildId: …)` (ThreadSanitizer) or
    /// `#0 0x55d4e2c6f1e9  (/tmp/a.out+0x11e9) (BuildId: …)` (AddressSanitizer). The place
    /// is nil for a frame without a module (`<unknown module>`).
    static func frame(_ line: String) -> (number: Int, place: (module: String, address: UInt64)?)? {
        guard line.hasPrefix("#"), let number = Int(line.dropFirst().prefix { $0.isNumber }) else { return nil }
        // The place is the last parenthesised `module+0xhex` on the line (BuildId comes after it).
        var searchEnd = line.endIndex
        while let close = line[..<searchEnd].lastIndex(of: ")"), let open = line[..<close].lastIndex(of: "(") {
            let inside = line[line.index(after: open)..<close]
            if let plus = inside.range(of: "+0x", options: .backwards),
               let address = UInt64(inside[plus.upperBound...], radix: 16) {
                return (number, (String(inside[..<plus.lowerBound]), address))
            }
            searchEnd = open
        }
        return (number, nil)
    }

    /// The path of a module-map line, or nil for a line that maps no file.
    static func modulePath(_ line: String) -> String? {
        let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
        guard fields.count >= 2, fields[0].contains("-0x") else { return nil }
        return fields.dropFirst().first { $0.hasPrefix("/") }.map(String.init)
    }

    /// The file of a module the sanitizer named: its own path when it printed one, else the
    /// mapped file of that name, else the mapped file the name is a link to (`libtsan.so.2`
    /// for `libtsan.so.2.0.0`).
    package static func path(of module: String, modules: [String: String]) -> String {
        if module.hasPrefix("/") { return module }
        if let path = modules[module] { return path }
        return modules.first { $0.key.hasPrefix(module + ".") }?.value ?? module
    }

    /// `16 MiB`, or `512 KiB` under a MiB (a budget's last part: it read "cut at 0 MiB").
    static func size(_ bytes: Int) -> String {
        bytes >= 1 << 20 ? "\(bytes >> 20) MiB" : "\(max(1, bytes >> 10)) KiB"
    }

    /// Paths by file name of the files this process maps (its executable and libraries).
    package static func ownModules() -> [String: String] {
        // Read to its end: /proc says its size is 0, and Foundation's reader may stop short.
        let maps = ProcFile.contents(of: "/proc/self/maps")
        var modules: [String: String] = [:]
        for line in maps.split(separator: "\n") {
            guard let slash = line.firstIndex(of: "/") else { continue }
            let path = String(line[slash...])
            modules[(path as NSString).lastPathComponent] = modules[(path as NSString).lastPathComponent] ?? path
        }
        return modules
    }

    /// The reports in `folder`'s sanitizer files, each frame named, distinct ones once with a count.
    package static func reports(in folder: String, symbolizer: Symbolizer) -> Read {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        // The program under test can write in `folder` (the path is in its options): at most `fileLimit` logs.
        let logs = names.sorted().filter { $0.hasPrefix(fileName + ".") }
        var read = reports(inFiles: logs.prefix(fileLimit).map { (folder as NSString).appendingPathComponent($0) }, symbolizer: symbolizer)
        if logs.count > fileLimit {
            read.leftOut.append("\(logs.count - fileLimit) further sanitizer logs not read (the first \(fileLimit) by name were)")
        }
        return read
    }

    /// The reports in these sanitizer files (a missing one has none), each frame named, distinct ones once with a count.
    /// `fallbackModules`: paths by file name for modules a log's own map does not name
    /// (a trial runs the runner's own binary and libraries: the runner's map serves).
    ///
    /// A report that repeats one already read (the same stacks at the same addresses) is
    /// counted without being named again; past `distinctLimit` distinct reports, the rest
    /// are counted, not read, and `leftOut` says how many.
    package static func reports(inFiles paths: [String], symbolizer: Symbolizer, fallbackModules: [String: String] = [:]) -> Read {
        var read = Read()
        var seen: [String: Int] = [:]
        var rawSeen: [RawKey: Int] = [:]
        var unread = 0
        var budget = totalByteLimit
        for (position, path) in paths.enumerated() {
            guard budget > 0 else {
                let rest = paths.count - position
                read.leftOut.append("\(rest) further sanitizer log\(rest == 1 ? "" : "s") not read (\(totalByteLimit >> 20) MiB of logs were)")
                break
            }
            let limit = min(logByteLimit, budget)
            guard let file = ProgramFile.head(path, limit: limit) else { continue }
            budget -= file.data.count
            if file.cut {
                read.leftOut.append("sanitizer log \((path as NSString).lastPathComponent) cut at \(Self.size(limit)) of \(Self.size(file.fileBytes))")
            }
            let (raws, logged) = parse(file.text)
            let modules = logged.merging(fallbackModules) { own, _ in own }
            for raw in raws {
                let key = RawKey(raw, modules: modules)
                if let index = rawSeen[key] {
                    read.reports[index].count += 1
                    continue
                }
                guard rawSeen.count < distinctLimit else {
                    unread += 1
                    continue
                }
                let report = symbolized(raw, modules: modules, symbolizer: symbolizer)
                let index: Int
                if let known = seen[report.identity] {
                    index = known
                    read.reports[index].count += 1
                } else {
                    index = read.reports.count
                    seen[report.identity] = index
                    read.reports.append(report)
                }
                rawSeen[key] = index
            }
        }
        if unread > 0 {
            read.leftOut.append("\(unread) further sanitizer reports counted, not read (\(distinctLimit) distinct ones were named)")
        }
        return read
    }

    /// A report as printed, for merging repeats before naming their frames: the tool,
    /// the kind and every stack's frames (module path and address), not the stacks'
    /// titles, which carry the memory's address and the thread's number.
    struct RawKey: Hashable {
        var tool: SanitizerReport.Tool
        var kind: String
        var frames: [[String]]

        init(_ raw: RawReport, modules: [String: String]) {
            tool = raw.tool
            kind = raw.kind
            frames = raw.stacks.map { stack in stack.frames.map { "\(path(of: $0.module, modules: modules))+\($0.address)" } }
        }
    }

    /// `raw` with its frames named; a stack is an access, the memory's history, or a thread's creation by its heading.
    package static func symbolized(_ raw: RawReport, modules: [String: String], symbolizer: Symbolizer) -> SanitizerReport {
        var accesses: [SanitizerReport.Stack] = []
        var location: [SanitizerReport.Stack] = []
        var threads: [SanitizerReport.Stack] = []
        for stack in raw.stacks {
            let places = stack.frames.map { frame in
                (module: path(of: frame.module, modules: modules), virtualAddress: frame.address)
            }
            let named = SanitizerReport.Stack(title: stack.title, frames: symbolizer.frames(inModules: places))
            let title = stack.title.lowercased()
            if title.hasPrefix("thread ") && title.contains("created") {
                threads.append(named)
            } else if title.hasPrefix("location is") || title.contains("allocated by") || title.contains("freed by") {
                location.append(named)
            } else if title.hasPrefix("mutex ") {
                location.append(named)
            } else {
                accesses.append(named)
            }
        }
        return SanitizerReport(tool: raw.tool, kind: raw.kind, pid: raw.pid, accesses: accesses, location: location,
                               threads: threads, summary: raw.summary, count: 1, text: raw.text)
    }
}
