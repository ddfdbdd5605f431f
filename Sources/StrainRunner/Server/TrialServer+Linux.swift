internal import CStrainProbe
internal import CStrainTools
import Foundation
import Glibc
import StrainWire
import Synchronization

/// The runner's side of the trial server (`TrialServerHost`): starts it, asks it
/// for one trial at a time, restarts it when it dies, and gives up on it (the
/// supervisor then spawns each trial) when it cannot be had.
///
/// - Important: the trials a server starts have the runner as their parent, and
///   their parent-death signal is tied to the runner's thread that spawned the
///   server. Start it (`prepare`) on a thread that lives as long as the run; a
///   restart happens on the thread that found the server dead, so every thread
///   that asks for trials must outlive them too (`TrialPool`'s workers do).
package final class TrialServer: Sendable {
    /// Starts after a death, in one run, before the runner stops trying.
    static let maximumRestarts = 3
    /// Seconds a server has to say it is ready (it loads the whole binary), and to answer a request.
    static let readySeconds = 30.0
    static let replySeconds = 10.0
    /// The counted server's: Valgrind starts on the whole binary (3.3–4.1 s for a counted
    /// `noop` trial here, idle; several times that under load), and a request is read and
    /// the copy made under it.
    static let countedReadySeconds = 180.0
    static let countedReplySeconds = 60.0

    /// The binary whose hidden `_trial-server` command is the server.
    package let executable: String
    /// What starts the server: `executable _trial-server`, or the counted server's
    /// `valgrind --tool=callgrind … strain-stripped _trial-server` (`CallgrindTrials.serverCommand`).
    let command: (executable: String, arguments: [String])
    /// Seconds the server has to say it is ready, and to answer a request (longer under Valgrind).
    let readySeconds: Double
    let replySeconds: Double
    /// Whether the server is killed when the runner is done with it rather than left to
    /// exit: the counted server's exit would write a last callgrind output nobody reads.
    let killedWhenDone: Bool
    /// The server's environment (the trials' own, but for the heartbeat's fd).
    let environment: [String]
    /// Hears each restart and the fall back to spawning, as a line for the user.
    let notice: @Sendable (String) -> Void
    private let state = Mutex(State())

    private struct State {
        var connection: Connection?
        var starts = 0
        var trials = 0
        var fallback: String?
    }

    /// A running server: its pid and the runner's end of its socket.
    private struct Connection {
        var pid: pid_t
        var socket: Int32
    }

    package init(executable: String, environment: [String], notice: @escaping @Sendable (String) -> Void) {
        self.executable = executable
        self.command = (executable, ["_trial-server"])
        self.readySeconds = Self.readySeconds
        self.replySeconds = Self.replySeconds
        self.killedWhenDone = false
        // Every symbol bound once, at the server's start, rather than at first call in
        // every copy (which drops it again, unless the runner had it set itself).
        self.environment = environment.contains { $0.hasPrefix("LD_BIND_NOW=") }
            ? environment : environment + ["LD_BIND_NOW=1", "\(ChildEnvironment.trialServerBindNow)=1"]
        self.notice = notice
    }

    /// The counted trial server: `callgrind`'s stripped copy of the binary started once
    /// under callgrind, each counted trial a copy of it (`CallgrindTrials` says how).
    /// Its symbols are bound as a spawned trial's are, at first call, so a copy's work
    /// counts what it counts in a spawned counted trial.
    init(counted callgrind: CallgrindTrials, environment: [String], notice: @escaping @Sendable (String) -> Void) {
        self.executable = callgrind.binary
        self.command = callgrind.serverCommand()
        self.readySeconds = Self.countedReadySeconds
        self.replySeconds = Self.countedReplySeconds
        self.killedWhenDone = true
        self.environment = callgrind.environment(environment) + ["\(ChildEnvironment.countedServerFolder)=\(callgrind.folder)",
                                                                 "\(ChildEnvironment.callgrindInstrumented)=1"]
        self.notice = notice
    }

    deinit {
        state.withLock { state in
            if let connection = state.connection { Self.stop(connection, kill: killedWhenDone) }
            state.connection = nil
        }
    }

    /// Trials the server started, restarts after a death, and why the runner fell back to spawning.
    package var statistics: (trials: Int, restarts: Int, fallback: String?) {
        state.withLock { ($0.trials, max(0, $0.starts - 1), $0.fallback) }
    }

    /// Starts the server now, if it is not running and the runner has not given up on it.
    package func prepare() {
        state.withLock { state in _ = connect(&state) }
    }

    /// Starts one trial as a copy of the server, with `descriptors` (standard
    /// output, standard error, result pipe, then the heartbeat block when there is
    /// one) as its fds 1 to 4. Returns its pid, or nil when no server can be had:
    /// the caller spawns the trial instead.
    func startTrial(specJSON: String, descriptors: [Int32]) -> pid_t? {
        state.withLock { state -> pid_t? in
            // A dead server is found when asked; one restart per request, within the run's allowance.
            for _ in 0..<2 {
                guard let connection = connect(&state) else { return nil }
                switch request(connection, specJSON: specJSON, descriptors: descriptors) {
                case .success(let pid):
                    state.trials += 1
                    return pid
                case .failure(let problem) where problem.serverIsFine:
                    notice("strain: the trial server could not start a trial (\(problem)); spawning that trial")
                    return nil
                case .failure(let problem):
                    Self.stop(connection, kill: true)
                    state.connection = nil
                    if state.starts > Self.maximumRestarts {
                        giveUp(&state, "the trial server died \(state.starts) times (last: \(problem))")
                        return nil
                    }
                    notice("strain: the trial server (pid \(connection.pid)) failed: \(problem); starting a new one")
                }
            }
            return nil
        }
    }

    /// The running server, started if needed; nil when the runner has given up on it.
    private func connect(_ state: inout State) -> Connection? {
        if let connection = state.connection { return connection }
        if state.fallback != nil { return nil }
        state.starts += 1
        switch Self.launch(command: command, environment: environment, readySeconds: readySeconds) {
        case .success(let connection):
            state.connection = connection
            return connection
        case .failure(let problem):
            giveUp(&state, problem.description)
            return nil
        }
    }

    private func giveUp(_ state: inout State, _ problem: String) {
        state.fallback = problem
        notice("strain: \(problem); spawning each trial from now on (--isolation spawn)")
    }

    /// One request and its reply: the trial's pid, or what went wrong with the server.
    private func request(_ connection: Connection, specJSON: String, descriptors: [Int32]) -> Result<pid_t, Problem> {
        let message = TrialServerRequest(spec: specJSON, shared: descriptors.count == 4)
        guard let bytes = try? JSONEncoder().encode(message), bytes.count <= TrialServerRequest.maximumBytes else {
            return .failure(Problem("the trial's request could not be encoded within \(TrialServerRequest.maximumBytes) bytes", serverIsFine: true))
        }
        let sent = bytes.withUnsafeBytes { buffer in
            descriptors.withUnsafeBufferPointer { fds in
                strain_server_send(connection.socket, buffer.baseAddress, buffer.count, fds.baseAddress, fds.count)
            }
        }
        guard sent == 0 else { return .failure(Problem("sending to it failed: \(String(cString: strerror(sent)))")) }
        switch Self.receiveReply(connection.socket, seconds: replySeconds) {
        case .success(.started(let pid)):
            // The runner's side of the process group: whichever of it and the copy comes first.
            _ = setpgid(pid, pid)
            return .success(pid)
        case .success(.refused(let error, let reason)):
            // A request it could not serve says nothing against the server; a server
            // that has more than one thread (EDEADLK) must not copy itself again.
            return .failure(Problem("it refused the trial: \(reason)", serverIsFine: error != EDEADLK))
        case .success(let other): return .failure(Problem("it answered \(other) to a request"))
        case .failure(let problem): return .failure(problem)
        }
    }

    /// Spawns the server with its socket as fd 3 and waits until it says it is ready.
    private static func launch(command: (executable: String, arguments: [String]), environment: [String], readySeconds: Double) -> Result<Connection, Problem> {
        var ends: [Int32] = [-1, -1]
        let status = strain_server_socket_pair(&ends)
        guard status == 0 else { return .failure(Problem("could not make the trial server's socket: \(String(cString: strerror(status)))")) }
        defer { close(ends[1]) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, ends[1], ChildEnvironment.trialServerSocketDescriptor)
        // Only its socket: every copy inherits what the server has open.
        _ = strain_spawn_close_from(&actions, ChildEnvironment.trialServerSocketDescriptor + 1)
        // A process group of its own: its parent-death handler kills that group, the server alone.
        let (spawned, pid) = ProcessSpawn.start(command.executable, arguments: command.arguments, environment: environment, actions: &actions,
                                                ownGroup: true, defaultSignals: ProcessSpawn.runnersSignals)
        guard spawned == 0 else {
            close(ends[0])
            return .failure(Problem("could not start the trial server \(command.executable): \(String(cString: strerror(spawned)))"))
        }
        let connection = Connection(pid: pid, socket: ends[0])
        switch receiveReply(ends[0], seconds: readySeconds) {
        case .success(.ready(let version, _)) where version == TrialServerRequest.currentVersion:
            return .success(connection)
        case .success(.ready(let version, _)):
            stop(connection, kill: true)
            return .failure(Problem("the trial server speaks version \(version) of its protocol, this runner \(TrialServerRequest.currentVersion)"))
        case .success(.refused(_, let reason)):
            stop(connection, kill: true)
            return .failure(Problem(reason))
        case .success(let other):
            stop(connection, kill: true)
            return .failure(Problem("the trial server answered \(other) instead of saying it was ready"))
        case .failure(let problem):
            stop(connection, kill: true)
            return .failure(Problem("the trial server did not start: \(problem)"))
        }
    }

    /// Waits up to `seconds` for one reply on `socket`.
    private static func receiveReply(_ socket: Int32, seconds: Double) -> Result<TrialServerReply, Problem> {
        var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
        let deadline = strain_monotonic_ns() &+ UInt64(seconds * 1e9)
        while true {
            let now = strain_monotonic_ns()
            guard now < deadline else { return .failure(Problem("no answer within \(seconds) s")) }
            let ready = poll(&descriptor, 1, Int32(min(1000, (deadline - now) / 1_000_000 + 1)))
            if ready > 0 { break }
            if ready < 0 && errno != EINTR { return .failure(Problem("poll failed: \(String(cString: strerror(errno)))")) }
        }
        var buffer = [UInt8](repeating: 0, count: 4096)
        var noDescriptors = [Int32](repeating: -1, count: 1)
        var count = 0
        let length = strain_server_receive(socket, &buffer, buffer.count, &noDescriptors, &count)
        if length == 0 { return .failure(Problem("it exited")) }
        if length < 0 { return .failure(Problem("reading its answer failed: \(String(cString: strerror(Int32(-length))))")) }
        guard let reply = try? JSONDecoder().decode(TrialServerReply.self, from: Data(buffer[0..<length])) else {
            return .failure(Problem("its answer was not a reply: \(String(decoding: buffer[0..<min(length, 200)], as: UTF8.self))"))
        }
        return .success(reply)
    }

    /// Ends a server: closing the socket is its signal to exit; `kill` does not wait for that.
    private static func stop(_ connection: Connection, kill force: Bool) {
        close(connection.socket)
        // The group: the server and, under Valgrind, its watcher (`strain_server_watch_runner`).
        if force { kill(-connection.pid, SIGKILL); kill(connection.pid, SIGKILL) }
        // Bounded: a server that neither exits nor dies within a second is left to its parent-death signal.
        var status: Int32 = 0
        for _ in 0..<200 {
            guard waitpid(connection.pid, &status, WNOHANG) == 0 else { break }
            usleep(5_000)
        }
    }
}

extension TrialServer {
    /// Why a request to the trial server failed, in words for the runner's notice
    /// (never thrown past `startTrial`: the runner restarts the server or spawns).
    struct Problem: Error, CustomStringConvertible {
        var description: String
        /// The request was at fault, not the server: spawn that trial, keep the server.
        var serverIsFine = false

        init(_ description: String, serverIsFine: Bool = false) {
            self.description = description
            self.serverIsFine = serverIsFine
        }
    }
}
