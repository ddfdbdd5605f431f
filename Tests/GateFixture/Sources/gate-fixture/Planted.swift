// The base build. The gate tests overwrite this file to plant a regression:
// more work in `spin`, a larger frame in `frames`, an extra allocation per node in `nodes`,
// more work after the await in `await-spin`.

/// Percent of `spin`'s work that is done (100 in the base build).
let plantedWorkPercent = 100
/// Bytes each level of `frames` keeps on its stack (512 in the base build).
let plantedFrameBytes = 512
/// Extra allocations each node of `nodes` makes (0 in the base build).
let plantedAllocationsPerNode = 0
/// Percent of `await-spin`'s work before the await that it does after it (100 in the base build).
let plantedAfterAwaitPercent = 100
