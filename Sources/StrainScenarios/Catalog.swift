import StrainKit

extension ScenarioCatalog {
    /// The scenarios that ship with Strain.
    public static let builtIn = ScenarioCatalog([
        NoopScenario.self,
        StackDepthScenario.self,
        OverflowCaptureScenario.self,
        CyclicGraphScenario.self,
        NestedJSONScenario.self,
        CrashScenario.self,
        FaultScenario.self,
        ThreadExplosionScenario.self,
        RWBarrierCollectionScenario.self,
        SyncCycleScenario.self,
        CooperativeStarvationScenario.self,
        ContendedCollectionScenario.self,
        ReentrantGuardScenario.self,
        CombineStoreScenario.self,
        QueueFloodScenario.self,
        ConfinementScenario.self,
        ReflectiveCodingScenario.self,
    ])
}
