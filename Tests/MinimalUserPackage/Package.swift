// swift-tools-version:6.0
// The smallest user package: one scenario over StrainKit alone and a `strain`
// from StrainCLI, no built-ins, no helpers, no C. A test builds it and checks
// the run.json it writes, so the public API stays enough for a user.
import PackageDescription

let package = Package(
    name: "MinimalUserPackage",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "Strain", path: "../..")],
    targets: [
        .executableTarget(
            name: "minimal-strain",
            dependencies: [
                .product(name: "StrainKit", package: "Strain"),
                .product(name: "StrainCLI", package: "Strain"),
            ]
        ),
    ]
)
