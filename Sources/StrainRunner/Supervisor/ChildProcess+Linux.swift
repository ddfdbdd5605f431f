internal import CStrainProbe
internal import CStrainTools
import Foundation
import Glibc
import StrainKit
import StrainWire

/// Errors of the supervisor itself: a child that could not be started.
package struct SupervisorError: Error, Sendable, CustomStringConvertible {
    package var errno: Int32
    package var message: String

    package var description: String {
        "\(message): \(String(cString: strerror(errno))) (errno \(errno))"
    }
}

/// One child started with posix_spawn, in its own process group, with its
/// standard output, standard error and result pipe (fd 3) connected to us.
///
/// posix_spawn, not Foundation's `Process`: `waitUntilExit` costs ~50 ms a
/// child here, more than the whole of a small trial.
struct ChildProcess {
    let pid: pid_t
    /// Read ends in the parent, non-blocking and close-on-exec.
    let resultDescriptor: Int32
    let outputDescriptor: Int32
    let errorDescriptor: Int32

    /// The fd a shared block given to `spawn` gets in the child.
    static let sharedDescriptor = ChildEnvironment.sharedDescriptor

    static func spawn(executable: String, arguments: [String], environment: [String], shared: Int32? = nil) throws(SupervisorError) -> ChildProcess {
        let result = try ChildPipe.make()
        let output = try ChildPipe.make()
        let error = try ChildPipe.make()

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output.write, 1)
        posix_spawn_file_actions_adddup2(&actions, error.write, 2)
        posix_spawn_file_actions_adddup2(&actions, result.write, 3)
        if let shared { posix_spawn_file_actions_adddup2(&actions, shared, Self.sharedDescriptor) }
        // Nothing else the runner has open (or inherited without close-on-exec from
        // whoever started it) reaches the trial: a copy of the trial server closes the same.
        _ = strain_spawn_close_from(&actions, shared != nil ? Self.sharedDescriptor + 1 : 4)

        let (status, pid) = ProcessSpawn.start(executable, arguments: arguments, environment: environment, actions: &actions,
                                               ownGroup: true, defaultSignals: ProcessSpawn.runnersSignals)
        close(result.write)
        close(output.write)
        close(error.write)
        guard status == 0 else {
            [result.read, output.read, error.read].forEach { _ = close($0) }
            throw SupervisorError(errno: status, message: "could not start \(executable)")
        }
        return ChildProcess(pid: pid, resultDescriptor: result.read, outputDescriptor: output.read, errorDescriptor: error.read)
    }

    /// Starts a trial as a copy of the trial server, with the same descriptors a
    /// spawned child gets; nil when the server cannot be had (the caller spawns).
    /// The copy is our child, in its own process group, like a spawned one.
    static func copy(from server: TrialServer, specJSON: String, shared: Int32? = nil) throws(SupervisorError) -> ChildProcess? {
        let result = try ChildPipe.make()
        let output = try ChildPipe.make()
        let error = try ChildPipe.make()
        let pid = server.startTrial(specJSON: specJSON, descriptors: [output.write, error.write, result.write] + (shared.map { [$0] } ?? []))
        close(result.write)
        close(output.write)
        close(error.write)
        guard let pid else {
            [result.read, output.read, error.read].forEach { _ = close($0) }
            return nil
        }
        return ChildProcess(pid: pid, resultDescriptor: result.read, outputDescriptor: output.read, errorDescriptor: error.read)
    }

    /// Sends `signal` to the child's whole process group.
    func signalGroup(_ signal: Int32) {
        kill(-pid, signal)
    }

    /// Reaps the child if it has ended, without waiting.
    func reapIfEnded() -> (TerminationStatus, rusage)? { ProcessSpawn.reapIfEnded(pid) }
}

/// How a child ended, decoded once from its wait status.
package enum TerminationStatus: Sendable, Hashable, CustomStringConvertible {
    /// It called exit (or returned from main) with this code.
    case exited(Int32)
    /// A signal ended it.
    case signaled(Int32)

    /// Decodes a `wait4` status; nil for a stop (a ptrace walk), which is not an end.
    package init?(waitStatus status: Int32) {
        let low = status & 0x7f
        if low == 0 {
            self = .exited((status >> 8) & 0xff)
        } else if low == 0x7f {
            return nil
        } else {
            self = .signaled(low)
        }
    }

    package var description: String {
        switch self {
        case .exited(let code): "exited with status \(code)"
        case .signaled(let signal): "killed by \(SignalName.of(signal))"
        }
    }
}

/// One step of ending a child that is past its deadline: send a signal to its
/// process group, then give it `graceSeconds` before the next step.
package struct TeardownStep: Sendable, Hashable {
    package var signal: Int32
    package var graceSeconds: Double

    package init(signal: Int32, graceSeconds: Double) {
        self.signal = signal
        self.graceSeconds = graceSeconds
    }

    /// SIGTERM, a grace period, then SIGKILL.
    package static func gentleThenForced(graceSeconds: Double) -> [TeardownStep] {
        [TeardownStep(signal: SIGTERM, graceSeconds: graceSeconds), TeardownStep(signal: SIGKILL, graceSeconds: 0)]
    }
}

/// A pipe whose ends sit above the standard descriptors and fd 3 and are
/// close-on-exec, so only the dup2'd copies reach the child.
struct ChildPipe {
    let read: Int32
    let write: Int32

    static func make() throws(SupervisorError) -> ChildPipe {
        var ends: [Int32] = [0, 0]
        // Close-on-exec from the start (pipe2), so a spawn on another thread
        // never inherits the ends; then moved above fd 3 and 4.
        let status = strain_pipe_cloexec(&ends)
        guard status == 0 else { throw SupervisorError(errno: status, message: "could not create a pipe") }
        let read = fcntl(ends[0], F_DUPFD_CLOEXEC, 10)
        let write = fcntl(ends[1], F_DUPFD_CLOEXEC, 10)
        close(ends[0])
        close(ends[1])
        guard read >= 0, write >= 0 else { throw SupervisorError(errno: errno, message: "could not move a pipe's descriptors") }
        _ = fcntl(read, F_SETFL, fcntl(read, F_GETFL) | O_NONBLOCK)
        return ChildPipe(read: read, write: write)
    }
}

/// The path of the running executable, which children re-enter.
package func currentExecutablePath() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let length = readlink("/proc/self/exe", &buffer, Int(PATH_MAX))
    guard length > 0 else { return CommandLine.arguments[0] }
    return String(decoding: buffer[0..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
