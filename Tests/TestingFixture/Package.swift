// swift-tools-version:6.1
// A team's package with Strain's expectations in its own `swift test`: a small
// recursive parser and a builder that allocates per element, tested through
// StrainTesting alone. StrainTestingTests runs `swift test` on it and reads what
// each expectation said; some of its tests fail on purpose (see their names).
import PackageDescription

let package = Package(
    name: "TestingFixture",
    platforms: [.macOS(.v15)],
    // The StrainTestingReports trait: a failing expectation attaches report.html too.
    dependencies: [.package(name: "Strain", path: "../..", traits: ["StrainTestingReports"])],
    targets: [
        .target(name: "Parsing"),
        .testTarget(
            name: "ParsingTests",
            dependencies: ["Parsing", .product(name: "StrainTesting", package: "Strain")]
        ),
    ]
)
