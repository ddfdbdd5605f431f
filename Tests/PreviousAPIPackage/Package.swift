// swift-tools-version:6.0
// A package written against Strain 0.1.0's API, as a team wrote it from that
// release's docs, and left as it was: a test builds it against this checkout, so a
// spelling 0.1.0 documented keeps compiling (deprecated, the warning naming what to
// write instead) for a release after it changes. Do not migrate this package.
import PackageDescription

let package = Package(
    name: "PreviousAPIPackage",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Strain", path: "../..")],
    targets: [
        .target(
            name: "PreviousScenarios",
            dependencies: [
                .product(name: "StrainKit", package: "Strain"),
                .product(name: "StrainHelpers", package: "Strain"),
            ]
        ),
        .executableTarget(
            name: "previous-strain",
            dependencies: ["PreviousScenarios", .product(name: "StrainCLI", package: "Strain")]
        ),
    ]
)
