/// How the reports name a dumped thread and its state.
package enum ThreadNames {
    /// The root queues' labels by the 15 characters the kernel keeps of them: libdispatch
    /// on Linux names each worker thread after the end of its root queue's label, and
    /// `/proc` gives 15 characters (`oot.default-qos`). Every QoS's overcommit pool ends
    /// in `-qos.overcommit`, so that one is named as the family it is (a worker that ran
    /// Strain's work from a serial queue is recorded by its whole label instead).
    package static let rootQueueLabels: [String: String] = [
        "maintenance-qos": "com.apple.root.maintenance-qos", ".background-qos": "com.apple.root.background-qos",
        "oot.utility-qos": "com.apple.root.utility-qos", "oot.default-qos": "com.apple.root.default-qos",
        "r-initiated-qos": "com.apple.root.user-initiated-qos", "interactive-qos": "com.apple.root.user-interactive-qos",
        "-qos.overcommit": "com.apple.root.…-qos.overcommit",
    ]

    /// The kernel's state letter in words (`S` read as an unexplained letter after the names).
    package static func state(_ letter: String) -> String {
        switch letter {
        case "R": "running"
        case "S": "sleeping"
        case "D": "in a disk wait"
        case "T": "stopped"
        case "t": "stopped by a tracer"
        case "Z": "a zombie"
        case "X": "dead"
        case "I": "idle"
        case "P": "parked"
        default: letter
        }
    }

    /// A thread's name as the reports write it: a GCD worker's cut name as its root queue's label.
    package static func name(_ name: String) -> String { rootQueueLabels[name] ?? name }
}
