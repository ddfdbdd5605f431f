// swift-tools-version:6.0
// A team's package under Strain: its own order model, two scenarios over it,
// and its own `strain` with its catalog and Strain's built-ins. It depends on
// Strain by path here; a team writes `.package(url: …, from: …)` instead.
import PackageDescription

let package = Package(
    name: "OrderDecoding",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "order-strain", targets: ["order-strain"]),
    ],
    dependencies: [.package(name: "Strain", path: "../../..")],
    targets: [
        // The team's model: no Strain in it.
        .target(name: "OrderModel"),
        // The scenarios: the SDK, its helpers and the model.
        .target(
            name: "OrderScenarios",
            dependencies: [
                "OrderModel",
                .product(name: "StrainKit", package: "Strain"),
                .product(name: "StrainHelpers", package: "Strain"),
            ]
        ),
        // `order-strain`: Strain's command line over the team's catalog and the built-ins.
        .executableTarget(
            name: "order-strain",
            dependencies: [
                "OrderScenarios",
                .product(name: "StrainCLI", package: "Strain"),
                .product(name: "StrainScenarios", package: "Strain"),
            ]
        ),
        // The model's own tests, with Strain's expectations (`swift test`).
        .testTarget(
            name: "OrderModelTests",
            dependencies: ["OrderModel", .product(name: "StrainTesting", package: "Strain")]
        ),
    ]
)
