// swift-tools-version:6.0
import CompilerPluginSupport
import PackageDescription

// Layers, each depending only on the ones below it:
//   kvfs (CLI) → KVFileSystem (files ↔ keys) → FUSEKit (Swift low-level FUSE) → CFUSE (libfuse3 shim)
//                KVFileSystem → KVStore (values, quota, journal, merge, sync; knows nothing of FUSE)
//                KVFileSystem → KVSyncthing (asks Syncthing to scan after each commit)
//   kvfs → KVBucket (carries the sync root through an S3-compatible bucket: SigV4, URLSession) → KVStore, LinuxSystem,
//                swift-crypto
//   FUSEKit, KVStore, KVFileSystem, KVSyncthing, kvfs, kvfs-bench → LinuxSystem (/proc, starting processes,
//                descriptors: what the layers do with the operating system) → swift-system
//   KVStore → KVFSBuildInfo (the commit, baked in by mount-scripts/build.sh); KVStore → swift-crypto (sealed stores)
//                and CLibCrypto (the system's libcrypto: the sealed records' ChaCha20-Poly1305)
//   fusekit-hello: FUSEKit's example filesystem
// Each target declares exactly the targets and products its files import.
let package = Package(
    name: "kvfs",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "KVStore", targets: ["KVStore"]),
        .library(name: "FUSEKit", targets: ["FUSEKit"]),
        .executable(name: "kvfs", targets: ["kvfs"]),
        .executable(name: "fusekit-hello", targets: ["fusekit-hello"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.4.0"),
        // Sealed stores (docs/sealed.md): Curve25519 signatures and key agreement, ChaChaPoly, HKDF, SHA-256.
        .package(url: "https://github.com/apple/swift-crypto", from: "4.5.0"),
        // `swift package generate-documentation --target KVStore`: the DocC catalogs (mount-scripts/run-tests.sh
        // builds them, warnings as errors). A plugin: nothing of it is built for kvfs itself.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        .systemLibrary(
            name: "CFUSE",
            pkgConfig: "fuse3",
            providers: [.apt(["libfuse3-dev"])]
        ),
        // The system's libcrypto (OpenSSL 3): ChaCha20-Poly1305 for sealed records, whose swift-crypto seal
        // allocates a cipher context and four buffers a record (docs/performance.md § What sealing costs).
        .systemLibrary(
            name: "CLibCrypto",
            pkgConfig: "libcrypto",
            providers: [.apt(["libssl-dev"])]
        ),
        .target(name: "LinuxSystem", dependencies: [.product(name: "SystemPackage", package: "swift-system")]),
        .target(name: "FUSEKit", dependencies: ["CFUSE", "LinuxSystem", .product(name: "SystemPackage", package: "swift-system")]),
        .target(name: "KVFSBuildInfo"),
        .target(name: "KVStore", dependencies: [
            "KVFSBuildInfo", "LinuxSystem", "CLibCrypto",
            .product(name: "Logging", package: "swift-log"), .product(name: "SystemPackage", package: "swift-system"),
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .target(name: "KVSyncthing", dependencies: ["LinuxSystem"]),
        // docs/buckets.md: S3-compatible buckets as a store-and-forward synchronizer of the sync root. FoundationNetworking's
        // URLSession is its HTTP client (docs/buckets.md § The HTTP client says why), swift-crypto its SHA-256 and HMAC.
        .target(name: "KVBucket", dependencies: [
            "KVStore", "LinuxSystem", .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        .target(name: "KVFileSystem", dependencies: [
            "FUSEKit", "KVStore", "KVSyncthing", "LinuxSystem",
            .product(name: "Logging", package: "swift-log"),
            .product(name: "SystemPackage", package: "swift-system"),
        ]),
        .executableTarget(
            name: "kvfs",
            dependencies: [
                "KVBucket", "KVFileSystem", "KVStore", "KVSyncthing", "LinuxSystem",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "SystemPackage", package: "swift-system"),
            ]
        ),
        .executableTarget(name: "fusekit-hello", dependencies: ["FUSEKit"]),
        // Harness code the test targets and kvfs-bench share (processes, shell scripts, temporary
        // folders, waiting, a Syncthing pair): no product depends on it, and it imports no test framework.
        .target(name: "TestSupport", dependencies: ["LinuxSystem", .product(name: "SystemPackage", package: "swift-system")],
                path: "Tests/TestSupport"),
        .executableTarget(name: "kvfs-bench", dependencies: [
            "KVStore", "LinuxSystem", "TestSupport", .product(name: "SystemPackage", package: "swift-system"),
        ]),
        // A Swift program that uses `.default` as an app does; MountTests runs copies of it as apps of their own.
        .executableTarget(name: "kvfs-store-probe", dependencies: ["KVStore", "TestSupport"], path: "Tests/Programs/StoreProbe"),
        .testTarget(name: "KVStoreTests", dependencies: ["KVStore", "LinuxSystem", "TestSupport", .product(name: "SystemPackage", package: "swift-system"),
                                                 .product(name: "Crypto", package: "swift-crypto")]),
        // Seed 002 (an app with its own `KeyValueStore` and `InMemoryKeyValueStore`)
        // as an app module and its tests, each importing KVStore too: the name
        // clash issue 9 item 8 is about needs modules of their own.
        .target(name: "OnboardingApp", dependencies: ["KVStore"], path: "Tests/Seed002/OnboardingApp"),
        .testTarget(name: "OnboardingAppTests", dependencies: ["OnboardingApp", "KVStore", "TestSupport"],
                    path: "Tests/Seed002/OnboardingAppTests"),
        .testTarget(name: "MountTests", dependencies: ["KVStore", "TestSupport"]),
        // KVBucket's signer against AWS's SigV4 vectors, and the S3 contract kvfs relies on, against moto's server
        // (or a real provider: docs/buckets.md § Checking a provider).
        .testTarget(name: "BucketTests", dependencies: ["KVBucket", "KVStore", "TestSupport"]),
        .testTarget(name: "SyncTests", dependencies: ["KVStore", "KVSyncthing", "TestSupport"]),
        .testTarget(name: "FUSEKitTests", dependencies: ["FUSEKit", "TestSupport"]),
        .testTarget(name: "LinuxSystemTests", dependencies: ["LinuxSystem", "TestSupport", .product(name: "SystemPackage", package: "swift-system")]),
        // The fuzz targets' oracles (Tests/Fuzz/*.swift but the fuzz binary's entry point) over the corpus,
        // the crashers and the samples; mount-scripts/fuzz.sh compiles the same files with libFuzzer.
        .testTarget(name: "FuzzTests", dependencies: ["KVStore", "TestSupport", .product(name: "Crypto", package: "swift-crypto")], path: "Tests/Fuzz",
                    exclude: ["Support.swift", "Measure", "corpus", "crashers", "samples"]),
        .testTarget(name: "KVFileSystemTests", dependencies: ["KVFileSystem", "FUSEKit", "KVStore"]),
        // The README's and docs/'s links and anchors, and the sections code cites, checked.
        .testTarget(name: "DocsTests", dependencies: ["TestSupport"]),
        // Machines in network, mount and PID namespaces, each with Syncthing and a kvfs mount, driven by shell tools.
        .testTarget(name: "MachineTests", dependencies: ["LinuxSystem", "TestSupport"]),
    ],
    swiftLanguageModes: [.v6]
)

// Seed 004's `import ObservableDefaults`: the macros (@ObservableCloud, @ObservableDefaults and their property
// macros) and the runtime their expansions call, over KVStore's public API and Foundation's UserDefaults.
// Kept apart from the rest so that `swift build --product kvfs` (mount-scripts/build.sh) never compiles swift-syntax:
//   ObservableDefaults (library) → KVStore;  ObservableDefaults → ObservableDefaultsMacros (compiler plugin) → swift-syntax
package.products.append(.library(name: "ObservableDefaults", targets: ["ObservableDefaults"]))
package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-syntax", "603.0.0"..<"604.0.0"))
package.targets.append(contentsOf: [
    .macro(name: "ObservableDefaultsMacros", dependencies: [
        .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
        .product(name: "SwiftDiagnostics", package: "swift-syntax"),
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxBuilder", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
    ]),
    .target(name: "ObservableDefaults", dependencies: ["KVStore", "ObservableDefaultsMacros"]),
    .testTarget(name: "ObservableDefaultsMacrosTests", dependencies: [
        "ObservableDefaultsMacros",
        .product(name: "SwiftSyntax", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacroExpansion", package: "swift-syntax"),
        .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
    ]),
    // Seed 004's model classes as the seed writes them, and their tests against real stores on two devices.
    .testTarget(name: "Seed004Tests", dependencies: ["ObservableDefaults", "KVStore", "TestSupport"], path: "Tests/Seed004"),
])
