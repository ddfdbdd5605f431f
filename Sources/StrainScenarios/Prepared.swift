/// A value built in `prepare` and handed to the work on another thread.
///
/// `@unchecked Sendable`: the value is fully built before the workload exists,
/// and the work only reads it (archiving and walking a graph do not mutate it).
/// Scenarios use this for Foundation object graphs, which are not `Sendable`.
struct Prepared<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
