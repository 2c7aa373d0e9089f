// swift-tools-version:6.0
import PackageDescription

let package = Package(
    name: "courier",
    products: [
        .executable(name: "courier", targets: ["courier"]),
        .library(name: "CourierCore", targets: ["CourierCore"]),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        .systemLibrary(
            name: "CINIH",
            pkgConfig: "inih",
            providers: [.apt(["libinih-dev"])]
        ),
        .systemLibrary(
            name: "CCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .systemLibrary(
            name: "CZlib",
            pkgConfig: "zlib",
            providers: [.apt(["zlib1g-dev"])]
        ),
        // Declarations glibc keeps behind _GNU_SOURCE (syncfs); no library.
        .systemLibrary(name: "CPosix"),
        .target(name: "CourierCore", dependencies: ["CCurl", "CINIH", "CCrypto", "CZlib", "CPosix"]),
        .target(name: "CourierCLI", dependencies: ["CourierCore"]),
        .executableTarget(name: "courier", dependencies: ["CourierCLI"]),
        .testTarget(name: "CourierTests", dependencies: ["CourierCore", "CourierCLI"]),
    ]
)
