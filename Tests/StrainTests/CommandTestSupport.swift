import Foundation
import Glibc
import Testing

/// `strain` run the ways `StrainBinary.run` does not: in a chosen working directory
/// (the defaults `Scenarios/smoke.yaml` and `Reports/…` are relative to it), with
/// variables removed from its environment, or with its output on a pseudo-terminal
/// (where it colours and redraws). Always with a time bound: past it, SIGKILL.
enum CommandRun {
    /// Runs `strain ARGUMENTS` in `directory`. With `terminal`, standard output and
    /// error are one pseudo-terminal, read into `stdout` (and `stderr` is empty).
    static func run(_ arguments: [String], in directory: String, environment: [String: String] = [:], removing: [String] = [],
                    terminal: Bool = false, timeout: Double = 60) async throws -> StrainBinary.Result {
        try await BoundedProcess.slots.withLock {
            try await OffPool.run("strain in \((directory as NSString).lastPathComponent)") {
                try runWaiting(arguments, in: directory, environment: environment, removing: removing, terminal: terminal, timeout: timeout)
            }
        }
    }

    /// The waiting itself; only ever on an `OffPool` thread.
    private static func runWaiting(_ arguments: [String], in directory: String, environment: [String: String], removing: [String],
                                   terminal: Bool, timeout: Double) throws -> StrainBinary.Result {
        OffPool.assertOffPool()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: StrainBinary.path)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var variables = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        for name in removing { variables[name] = nil }
        process.environment = variables
        process.standardInput = FileHandle.nullDevice
        let killer = DispatchWorkItem { if process.isRunning { kill(process.processIdentifier, SIGKILL) } }
        if terminal {
            let (master, slave) = try openTerminal()
            defer { close(master) }
            let slaveHandle = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
            process.standardOutput = slaveHandle
            process.standardError = slaveHandle
            do { try process.run() } catch {
                close(slave)
                throw error
            }
            // Only the child (and its children) hold the terminal now: reading ends with EIO when they are gone.
            close(slave)
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
            let output = drain(master, until: Date().addingTimeInterval(timeout + 5))
            process.waitUntilExit() // off the pool: runWaiting runs on an OffPool thread
            killer.cancel()
            return StrainBinary.Result(status: status(of: process), stdout: String(decoding: output, as: UTF8.self), stderr: "")
        }
        let output = Pipe()
        let error = Pipe()
        process.standardOutput = output
        process.standardError = error
        try process.run()
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        // Both pipes at once, so a child that fills one while the other is read cannot block.
        let errorData = DataBox()
        let errorHandle = error.fileHandleForReading
        let reader = Thread { errorData.set(errorHandle.readDataToEndOfFile()) } // off the pool: a thread of its own
        reader.start()
        let outData = output.fileHandleForReading.readDataToEndOfFile() // off the pool: runWaiting runs on an OffPool thread
        process.waitUntilExit() // off the pool: runWaiting runs on an OffPool thread
        killer.cancel()
        return StrainBinary.Result(status: status(of: process), stdout: String(decoding: outData, as: UTF8.self),
                                   stderr: String(decoding: errorData.wait(until: Date().addingTimeInterval(10)), as: UTF8.self))
    }

    /// A process's status as a shell gives it: 128 + N for a signal.
    static func status(of process: Process) -> Int32 {
        process.terminationReason == .uncaughtSignal ? 128 + process.terminationStatus : process.terminationStatus
    }

    /// Data one thread hands another.
    final class DataBox: @unchecked Sendable {
        private let lock = NSCondition()
        private var data: Data?

        func set(_ value: Data) {
            lock.lock()
            data = value
            lock.broadcast()
            lock.unlock()
        }

        /// The data, once set; what there is (nothing) at `deadline`.
        func wait(until deadline: Date) -> Data {
            lock.lock()
            defer { lock.unlock() }
            while data == nil, lock.wait(until: deadline) {}
            return data ?? Data()
        }
    }

    struct TerminalError: Error, CustomStringConvertible {
        var description: String
    }

    /// A new pseudo-terminal pair: the master to read, the slave for the child.
    /// (Glibc's module leaves out posix_openpt and its kin: /dev/ptmx and the two
    /// ioctls they are made of, whose numbers are the same on x86-64 and arm64.)
    static func openTerminal() throws -> (master: Int32, slave: Int32) {
        let unlock: UInt = 0x4004_5431  // TIOCSPTLCK
        let number: UInt = 0x8004_5430  // TIOCGPTN
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0 else { throw TerminalError(description: "/dev/ptmx: \(String(cString: strerror(errno)))") }
        var locked: Int32 = 0
        var index: UInt32 = 0
        guard ioctl(master, unlock, &locked) == 0, ioctl(master, number, &index) == 0 else {
            close(master)
            throw TerminalError(description: "TIOCSPTLCK/TIOCGPTN: \(String(cString: strerror(errno)))")
        }
        // Close-on-exec: only the child gets it (as its stdout and stderr), never a process another test starts meanwhile.
        let slave = open("/dev/pts/\(index)", O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else {
            close(master)
            throw TerminalError(description: "/dev/pts/\(index): \(String(cString: strerror(errno)))")
        }
        return (master, slave)
    }

    /// Everything written to the terminal until every writer closed it, or `deadline`.
    static func drain(_ master: Int32, until deadline: Date) -> Data {
        OffPool.assertOffPool()
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            var descriptor = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            guard poll(&descriptor, 1, 100) > 0 else { continue } // off the pool: drain runs on an OffPool thread
            let count = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
            // EIO: the last writer closed the slave side.
            if count <= 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }
}

/// Files a test writes and reads.
enum TestFiles {
    /// A page's text as a reader sees it: without the spans that keep hyphenated words
    /// whole and the `<wbr>` after a path's slashes, and a no-break space as a space, so a
    /// test can look for a key.
    static func readable(_ html: String) -> String {
        html.replacing(/<span class="nb">([^<]*)<\/span>/) { String($0.1) }.replacingOccurrences(of: "<wbr>", with: "").replacingOccurrences(of: "&nbsp;", with: " ")
    }

    static func write(_ text: String, to path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    static func exists(_ path: String) -> Bool {
        FileManager.default.fileExists(atPath: path)
    }

    /// The folder's entries, sorted; empty when it does not exist.
    static func entries(_ path: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).sorted()
    }

    /// The 1-based line of `text`'s first line that contains `needle`.
    static func line(of needle: String, in text: String) -> Int? {
        text.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains(needle) }.map { $0 + 1 }
    }
}
