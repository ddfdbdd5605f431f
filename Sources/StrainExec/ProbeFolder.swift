internal import CStrainProbe
import Foundation
import Glibc
import StrainKit
import StrainSymbols
import StrainWire

/// The files the probe writes for a program run under `strain exec`: its fault
/// record (`fault-PID.txt`) and its thread dumps (`dump-PID-N.txt`), each
/// renamed into place whole, and `sigquit-PID` once the program took SIGQUIT for
/// itself. Files are named by pid: a forked child of the program writes its own.
package struct ProbeFolder: Sendable {
    package let path: String
    /// The folder's device and inode when this was made (nil when it was not a folder
    /// then): one found later with others is a folder put in its place.
    let identity: [UInt64]?

    /// Made by the supervisor once it created the folder, before the program starts.
    package init(path: String) {
        self.path = path
        var info = stat()
        identity = lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR ? [UInt64(info.st_dev), UInt64(info.st_ino)] : nil
    }

    /// The program under test can write here too (the folder's path is in its
    /// sanitizers' options), so every file is read as input: at most this many bytes
    /// of the list of images (the probe writes a few lines)...
    package static let recordByteLimit = 1 << 20
    /// ...of a fault record: the probe keeps up to 2^18 frames of an overflow (half from
    /// the fault, half from the thread's start), 21 bytes a line, then the memory map.
    /// A C recursion of 104,804 frames on an 8 MiB stack wrote 1.79 MB, and at the old
    /// 1 MiB limit its map was cut off: the trace had no names at all...
    package static let faultRecordByteLimit = 8 << 20
    /// ...of a thread dump, or the allocation sites' file...
    package static let dumpByteLimit = 16 << 20
    /// ...and at most this many fault records and dumps a process.
    package static let fileCountLimit = 256
    /// A dump's threads past this many are not read: the probe under `strain exec` writes
    /// at most 4,096 (a trial's watchdog 8,192)...
    package static let dumpThreadLimit = 8192
    /// ...and a thread's frames past this many: the probe writes at most 128 (192).
    package static let dumpFramesPerThreadLimit = 256
    /// The dumps read in one run of a program: later ones are counted, not read...
    package static let dumpsReadLimit = 64
    /// ...and the time spent reading and naming them: past it, the rest are counted.
    /// A forged 16 MiB dump of a million frames took 20 s to read and name, and
    /// four of them 89 s (29 November 2026, debug build, under load).
    package static let dumpReadSeconds = 10.0
    /// The fault records of the program's other processes read in a run (a real one of
    /// an overflow holds about 50,000 frames, its cycle found in well under a second)...
    package static let processFaultsReadLimit = 64
    /// ...and the time spent reading and naming them.
    package static let processFaultReadSeconds = 10.0

    /// What the readers of one probe folder left out: each line says what, and why
    /// (a cap of this folder's, stated in Limits.md). Goes into the record's `leftOut`.
    package struct Cuts: Sendable {
        package var notes: [String] = []
        /// Dumps found and not read, by reason: over the count, over the time.
        package var dumpsOverCount = 0
        package var dumpsOverTime = 0

        package init() {}

        /// The notes, with the counted dumps last.
        package var all: [String] {
            var lines = notes
            if dumpsOverCount > 0 {
                lines.append("\(dumpsOverCount) further thread \(dumpsOverCount == 1 ? "dump" : "dumps") not read (at most \(ProbeFolder.dumpsReadLimit) are read in a run)")
            }
            if dumpsOverTime > 0 {
                lines.append("\(dumpsOverTime) further thread \(dumpsOverTime == 1 ? "dump" : "dumps") not read (reading dumps had taken \(Int(ProbeFolder.dumpReadSeconds)) s)")
            }
            return lines
        }
    }

    /// The dump at `path`, read to its cap and parsed to the thread and frame caps,
    /// with what it left out added to `cuts`; nil when it is not a whole dump.
    package static func readDump(_ path: String, cuts: inout Cuts) -> RawDump? {
        guard let read = ProgramFile.head(path, limit: dumpByteLimit) else { return nil }
        let name = (path as NSString).lastPathComponent
        if read.cut {
            cuts.notes.append("thread dump \(name) not read: \(read.fileBytes >> 20) MiB, over the \(dumpByteLimit >> 20) MiB a dump is read to")
            return nil
        }
        var droppedThreads = 0
        var droppedFrames = 0
        guard let raw = parseDump(read.text, droppedThreads: &droppedThreads, droppedFrames: &droppedFrames) else {
            // The probe's own dumps appear whole (renamed into place): this one the
            // program wrote, and it is read once, so the record says it was not.
            cuts.notes.append("thread dump \(name) not read: not a whole dump when it was read (no STRAIN-DUMP 1 head or END line)")
            return nil
        }
        if droppedThreads > 0 || droppedFrames > 0 {
            var parts: [String] = []
            if droppedThreads > 0 { parts.append("\(droppedThreads) threads past the first \(dumpThreadLimit)") }
            if droppedFrames > 0 { parts.append("\(droppedFrames) frames past \(dumpFramesPerThreadLimit) a thread") }
            cuts.notes.append("thread dump \(name): " + parts.joined(separator: " and ") + " not read")
        }
        return raw
    }

    /// The fault record of process `pid`, if its probe wrote one.
    package func faultRecord(pid: Int32) -> FaultRecord? {
        guard let read = ProgramFile.head(file("fault-\(pid).txt"), limit: Self.faultRecordByteLimit) else { return nil }
        // A record cut at the limit ends mid-line: that line is not read (it held half an address).
        let text = read.text
        let whole = read.cut ? text[..<(text.lastIndex(of: "\n").map { text.index(after: $0) } ?? text.startIndex)] : text[...]
        return FaultRecord(parsing: whole)
    }

    /// The tail of what process `pid` wrote to its standard error (`stderr-PID.txt`,
    /// the last 128 KiB), written by its probe when it died of a signal or, for the
    /// program, exited by a nonzero status; nil when it wrote nothing there.
    package func standardErrorTail(pid: Int32) -> String? {
        // The ring's size from the file's end: a bigger file was not written by the probe alone.
        guard var data = ProgramFile.tail(file("stderr-\(pid).txt"), limit: Int(STRAIN_STDERR_TAIL_BYTES))?.data, !data.isEmpty else { return nil }
        // A full ring begins in the middle of a line: that part of a line is not one.
        if data.count >= Int(STRAIN_STDERR_TAIL_BYTES), let newline = data.firstIndex(of: 10) { data = data[(newline + 1)...] }
        return String(decoding: data, as: UTF8.self)
    }

    /// The pids of every process whose probe wrote a fault record, in order.
    package func faultPids() -> [Int32] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.compactMap { name -> Int32? in
            guard name.hasPrefix("fault-"), name.hasSuffix(".txt") else { return nil }
            return Int32(name.dropFirst("fault-".count).dropLast(4))
        }.sorted().prefix(Self.fileCountLimit).map { $0 }
    }

    /// The dumps of process `pid` written so far, oldest first.
    package func dumpFiles(pid: Int32) -> [String] {
        let prefix = "dump-\(pid)-"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
        return names.compactMap { name -> (Int, String)? in
            guard name.hasPrefix(prefix), name.hasSuffix(".txt"), let number = Int(name.dropFirst(prefix.count).dropLast(4)) else { return nil }
            return (number, file(name))
        }.sorted { $0.0 < $1.0 }.prefix(Self.fileCountLimit).map(\.1)
    }

    /// Whether the image the program's pid ran last had the probe.
    package enum ProgramImage: Sendable, Hashable {
        /// The last image was probed: a fault there would have been recorded.
        case probed
        /// No image of the program's pid ever started the probe.
        case neverProbed
        /// The program executed this path, and no probe started in it.
        case executedWithoutProbe(String)
        /// The probe folder itself is gone: deleted while the program ran (by it, or by
        /// something it started), with whatever the probe had written there.
        case folderDeleted
    }

    /// What the program's pid noted of its images (`program-images.txt`: `start`,
    /// `exec PATH`, `exec-failed`, one a line, in order).
    package func programImage(pid: Int32) -> ProgramImage {
        // Gone, or replaced (by a file, a link or another folder): the probe's records
        // went with it, and the probe writes none into a folder it was not given.
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR,
              identity == nil || identity == [UInt64(info.st_dev), UInt64(info.st_ino)] else { return .folderDeleted }
        guard let text = ProgramFile.head(file("program-images.txt"), limit: Self.recordByteLimit)?.text else { return .neverProbed }
        var image = ProgramImage.neverProbed
        for line in text.split(separator: "\n") {
            if line == "start" || line == "exec-failed" {
                image = .probed
            } else if line.hasPrefix("exec ") {
                image = .executedWithoutProbe(String(line.dropFirst(5)))
            }
        }
        return image
    }

    /// Whether the program installed its own SIGQUIT disposition (dumps are then asked with SIGSYS).
    package func programTookDumpSignal(pid: Int32) -> Bool {
        access(file("sigquit-\(pid)"), F_OK) == 0
    }

    /// The wait shown for the thread that took the dump request: it was interrupted, so /proc cannot say.
    package static let tookRequest = ThreadDumpBuilder.tookRequestWait
    /// Its state in the dump's group line (`[main; answering]`).
    package static let answeringState = "answering"

    func file(_ name: String) -> String { (path as NSString).appendingPathComponent(name) }

    /// Seconds since the probe last wrote file `name` (its modification time), or nil when there is none.
    func secondsSinceWritten(_ name: String) -> Double? {
        var info = stat()
        guard stat(file(name), &info) == 0 else { return nil }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec - info.st_mtim.tv_sec) + Double(now.tv_nsec - info.st_mtim.tv_nsec) / 1e9
    }

    /// A dump as the probe wrote it: `STRAIN-DUMP 1`, fields, then per thread its
    /// id, whether it answered, its name, the text of its /proc `stat` and
    /// `syscall` files and its frames, then the maps and `END`. Nil unless whole.
    package static func parseDump(_ text: String) -> RawDump? {
        var threads = 0
        var frames = 0
        return parseDump(text, droppedThreads: &threads, droppedFrames: &frames)
    }

    /// `parseDump(_:)`, counting the threads and frames past the caps it does not keep.
    package static func parseDump(_ text: String, droppedThreads: inout Int, droppedFrames: inout Int) -> RawDump? {
        guard text.hasPrefix("STRAIN-DUMP 1\n"), text.hasSuffix("END\n") else { return nil }
        struct Thread {
            var tid: Int
            var answered = false
            var inWork = false
            var name = "?"
            var stat: String?
            var syscall: String?
            var frames: [UInt64] = []
            var framesTotal: Int?
        }
        var threads: [Thread] = []
        var requestedOn: Int?
        var dumpNanoseconds = 0
        var maps: [Substring] = []
        var inMaps = false
        var skipping = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false).dropFirst() {
            if inMaps {
                if line == "end-maps" { inMaps = false } else { maps.append(line) }
                continue
            }
            if line == "maps" { inMaps = true; continue }
            guard let space = line.firstIndex(of: " ") else { continue }
            let key = line[..<space]
            if skipping && key != "thread" && key != "requested_on" && key != "dump_ns" { continue }
            if key == "f", let last = threads.indices.last, threads[last].frames.count >= dumpFramesPerThreadLimit {
                droppedFrames += 1
                continue
            }
            let value = String(line[line.index(after: space)...])
            switch key {
            case "thread":
                guard let tid = Int(value) else { continue }
                // Past the cap, a thread and its fields are skipped.
                if threads.count < dumpThreadLimit { threads.append(Thread(tid: tid)) } else { droppedThreads += 1; skipping = true; continue }
                skipping = false
            case "requested_on": requestedOn = Int(value)
            case "dump_ns": dumpNanoseconds = Int(value) ?? 0
            case "answered" where !threads.isEmpty: threads[threads.count - 1].answered = value == "1"
            case "in_work" where !threads.isEmpty: threads[threads.count - 1].inWork = value == "1"
            case "name" where !threads.isEmpty: threads[threads.count - 1].name = value
            case "stat" where !threads.isEmpty: threads[threads.count - 1].stat = value
            case "syscall" where !threads.isEmpty: threads[threads.count - 1].syscall = value
            case "frames_total" where !threads.isEmpty: threads[threads.count - 1].framesTotal = Int(value).flatMap { (0...Int(Int32.max)).contains($0) ? $0 : nil }
            case "f" where !threads.isEmpty:
                if value.hasPrefix("0x"), let frame = UInt64(value.dropFirst(2), radix: 16) { threads[threads.count - 1].frames.append(frame) }
            default: continue
            }
        }
        let raw = threads.map { thread -> RawThread in
            // The thread that took the request was interrupted by it: its /proc
            // files show it answering, not what it was doing.
            let tookRequest = thread.tid == requestedOn
            let state = tookRequest ? nil : thread.stat.flatMap { ThreadState(tid: thread.tid, stat: $0, syscall: thread.syscall) }
            // Its state is named for what it did ("answering"), not an unknown "?".
            return RawThread(tid: thread.tid, name: thread.name, state: tookRequest ? Self.answeringState : state?.state ?? "?",
                             wait: tookRequest ? Self.tookRequest : state?.wait,
                             inWork: thread.inWork, frames: thread.answered ? thread.frames : [], viaPtrace: false,
                             framesTotal: thread.answered ? thread.framesTotal : nil)
        }
        return RawDump(method: "signal", threads: raw, maps: maps.joined(separator: "\n"),
                       unanswered: threads.filter { !$0.answered }.map(\.tid), dumpNanoseconds: dumpNanoseconds, waitCycle: nil)
    }
}
