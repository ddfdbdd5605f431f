import Foundation

/// An `OperationQueue` with `maxConcurrentOperationCount = width`: a block
/// operation per piece of work. On Linux, Foundation runs operations on
/// libdispatch's workers, so their stacks follow the profile like GCD's and the
/// platforms' GCD caps apply.
struct OperationQueueExecutor: StrategyExecutor {
    let spec: StrategySpec
    let queue: OperationQueue
    let context: ScenarioContext

    init(spec: StrategySpec, width: Int, context: ScenarioContext) {
        self.spec = spec
        self.context = context
        queue = OperationQueue()
        queue.name = "strain.operation-queue"
        queue.maxConcurrentOperationCount = width
    }

    func perform(_ work: @escaping @Sendable () throws -> Void) throws {
        try handOff(work, context: context) { job in queue.addOperation { job() } }
    }

    func submit(_ work: @escaping @Sendable () -> Void) {
        queue.addOperation { runSubmitted(work) }
    }

    func shutdown() {}
}
