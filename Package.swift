// swift-tools-version:6.0
import PackageDescription

// Layers, each depending only on the ones below it:
//   kvfs (CLI) → KVFileSystem (files ↔ keys) → FUSEKit (Swift low-level FUSE) → CFUSE (libfuse3 shim)
//                KVFileSystem → KVStore (values, quota, journal, merge, sync; knows nothing of FUSE)
//                KVFileSystem → KVSyncthing (asks Syncthing to scan after each commit) → KVStore
//   KVStore → KVFSBuildInfo (the commit, baked in by mount-scripts/build.sh)
//   fusekit-hello: FUSEKit's example filesystem
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
    ],
    targets: [
        .systemLibrary(
            name: "CFUSE",
            pkgConfig: "fuse3",
            providers: [.apt(["libfuse3-dev"])]
        ),
        .target(name: "FUSEKit", dependencies: ["CFUSE"]),
        .target(name: "KVFSBuildInfo"),
        .target(name: "KVStore", dependencies: ["KVFSBuildInfo", .product(name: "Logging", package: "swift-log")]),
        .target(name: "KVSyncthing", dependencies: ["KVStore"]),
        .target(name: "KVFileSystem", dependencies: ["FUSEKit", "KVStore", "KVSyncthing", .product(name: "Logging", package: "swift-log")]),
        .executableTarget(
            name: "kvfs",
            dependencies: [
                "KVFileSystem", "KVStore",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(name: "fusekit-hello", dependencies: ["FUSEKit"]),
        .executableTarget(name: "kvfs-bench", dependencies: ["KVStore"]),
        .testTarget(name: "KVStoreTests", dependencies: ["KVStore"], exclude: ["Library/Seed002"]),
        // Seed 002 (an app with its own `KeyValueStore` and `InMemoryKeyValueStore`)
        // as an app module and its tests, each importing KVStore too: the name
        // clash issue 9 item 8 is about needs modules of their own.
        .target(name: "OnboardingApp", dependencies: ["KVStore"], path: "Tests/KVStoreTests/Library/Seed002/OnboardingApp"),
        .testTarget(name: "OnboardingAppTests", dependencies: ["OnboardingApp", "KVStore"],
                    path: "Tests/KVStoreTests/Library/Seed002/OnboardingAppTests"),
        .testTarget(name: "MountTests", dependencies: ["KVStore"]),
        .testTarget(name: "SyncTests", dependencies: ["KVStore", "KVSyncthing"]),
        .testTarget(name: "FUSEKitTests", dependencies: ["FUSEKit"]),
        // Machines in network, mount and PID namespaces, each with Syncthing and a kvfs mount, driven by shell tools.
        .testTarget(name: "MachineTests"),
    ],
    swiftLanguageModes: [.v6]
)
