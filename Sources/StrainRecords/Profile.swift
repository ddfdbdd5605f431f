/// The platform a child emulates.
///
/// On Linux, GCD workers, `Thread`s and pthreads take their default stack size
/// from the process' default thread attributes, which glibc derives from
/// `RLIMIT_STACK`: a child that sets both before its first thread starts runs its
/// work with the stacks of the platform it emulates.
public enum Profile: String, Codable, Hashable, Sendable, CaseIterable {
    /// As the machine is: nothing changed.
    case linux
    /// iOS: 512 KiB secondary-thread stacks, a 1 MiB main thread, GCD capped at 64 threads.
    case ios
    /// macOS: 512 KiB secondary-thread stacks, an 8 MiB main thread, GCD capped at 64 threads.
    case macos

    /// Stack size for threads created with default attributes; nil keeps the machine's.
    public var threadStackBytes: Int? {
        switch self {
        case .linux: nil
        case .ios, .macos: 512 * 1024
        }
    }

    /// The main thread's stack limit; nil keeps the machine's.
    public var mainStackBytes: Int? {
        switch self {
        case .linux: nil
        case .ios: 1024 * 1024
        case .macos: 8 * 1024 * 1024
        }
    }

    /// The most threads GCD starts on this platform.
    public var gcdThreadCap: Int {
        switch self {
        case .linux: 255
        case .ios, .macos: 64
        }
    }

    /// One line of help for `strain list`.
    public var summary: String {
        switch self {
        case .linux: "this machine as it is (GCD and thread stacks follow RLIMIT_STACK)"
        case .ios: "512 KiB secondary-thread stacks, 1 MiB main thread, GCD cap 64"
        case .macos: "512 KiB secondary-thread stacks, 8 MiB main thread, GCD cap 64"
        }
    }
}
