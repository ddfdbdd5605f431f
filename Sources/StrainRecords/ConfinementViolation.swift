/// An access to an object from a queue or thread other than the one that owns it,
/// as `ConfinementChecker` caught it: the analogue of Core Data's concurrency
/// debug assertions (`-com.apple.CoreData.ConcurrencyDebug 1`), recorded rather than trapped.
///
/// Accesses from the same call site to the same kind of object are one record with a count.
public struct ConfinementViolation: Codable, Hashable, Sendable {
    /// The kind of object touched (`Note`).
    public var object: String
    /// What was done to it (`title (read)`).
    public var access: String
    /// Who owns it: `queue strain.confinement.context` or `thread 1234`.
    public var owner: String
    /// The thread that touched it: its kernel id and name.
    public var threadID: Int
    /// That thread's name as the kernel knows it.
    public var threadName: String
    /// How many accesses from this site were caught.
    public var count: Int
    /// The stack of the wrong access, innermost first.
    public var accessStack: [Frame]
    /// The stack that confined the object to its owner (where it was created on
    /// its queue), innermost first: the other half of the story.
    public var ownerStack: [Frame]

    /// A violation described by these values.
    public init(object: String, access: String, owner: String, threadID: Int, threadName: String, count: Int,
                accessStack: [Frame], ownerStack: [Frame]) {
        self.object = object
        self.access = access
        self.owner = owner
        self.threadID = threadID
        self.threadName = threadName
        self.count = count
        self.accessStack = accessStack
        self.ownerStack = ownerStack
    }

    /// `Note.title (read) on thread 1234 (strain.thread), owned by queue strain.confinement.context, ×3`.
    public var summary: String {
        "\(object).\(access) on thread \(threadID) (\(threadName)), owned by \(owner)\(count > 1 ? ", ×\(count)" : "")"
    }
}
