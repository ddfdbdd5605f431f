import Dispatch

extension TaskPriorityName {
    /// The `TaskPriority` this name stands for.
    public var taskPriority: TaskPriority {
        switch self {
        case .background: .background
        case .utility: .utility
        case .low: .low
        case .medium: .medium
        case .high: .high
        case .userInitiated: .userInitiated
        }
    }
}

extension QualityOfServiceName {
    /// The GCD class this name stands for.
    public var dispatchQoS: DispatchQoS.QoSClass {
        switch self {
        case .background: .background
        case .utility: .utility
        case .default: .default
        case .userInitiated: .userInitiated
        case .userInteractive: .userInteractive
        }
    }
}
