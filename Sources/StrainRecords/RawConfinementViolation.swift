/// A violation as the child saw it: raw return addresses, named by the parent.
/// The fields mean what `ConfinementViolation`'s do; the stacks are return addresses, innermost first.
public struct RawConfinementViolation: Codable, Hashable, Sendable {
    /// The kind of object touched.
    public var object: String
    /// What was done to it (`title (read)`).
    public var access: String
    /// `queue LABEL` or `thread TID`.
    public var owner: String
    /// The thread that touched it.
    public var threadID: Int
    /// That thread's name as the kernel knows it.
    public var threadName: String
    /// Accesses from this call site.
    public var count: Int
    /// The wrong access's stack, and the stack that confined the object.
    public var accessStack: [UInt]
    /// The stack that confined the object, innermost first.
    public var ownerStack: [UInt]

    package init(object: String, access: String, owner: String, threadID: Int, threadName: String, count: Int,
                 accessStack: [UInt], ownerStack: [UInt]) {
        self.object = object
        self.access = access
        self.owner = owner
        self.threadID = threadID
        self.threadName = threadName
        self.count = count
        self.accessStack = accessStack
        self.ownerStack = ownerStack
    }
}
