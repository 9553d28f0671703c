import Foundation
import KVStore
import LinuxSystem
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// `kvfs-bench appends`: the evidence for how a machine's processes share
/// one device (the state directory's journal lock, see the KVStore
/// engine's `EngineState+Processes.swift`): a write made under the lock by the
/// process itself, alone and taking turns with another process of the
/// device (each write then reads the other's first), against the same write
/// sent to a mount's daemon through its control socket.
enum DeviceAppendBenchmark: Benchmark {
    static let name = "appends"
    static let usage = "appends [--writes 2000] [--dir DIR]"
    static let summary = """
        one set(_:forKey:) of the machine's device: under the state directory's journal lock (alone, and taking turns \
        with another store of the same state directory), and as a request to a mount's daemon through control.sock
        """

    static func run(_ options: Options) throws {
        let writes = try options.value("writes", default: 2000)
        let base = try options.value("dir", default: NSTemporaryDirectory())
        let root = URL(fileURLWithPath: base).appendingPathComponent("kvfs-bench-\(UUID().uuidString.prefix(8))").path
        defer { _ = try? ChildProcess.run("rm", ["-rf", root]) }
        print("appends: \(writes) writes of a small integer over 50 keys, under \(root); the machine may be shared")
        print("how".padding(toLength: 62, withPad: " ", startingAt: 0) + "p50        p99        max")
        let alone = try underTheLock(root: root + "/alone", writes: writes, stores: 1)
        report("under the journal lock, one process", alone)
        let turns = try underTheLock(root: root + "/turns", writes: writes, stores: 2)
        report("under the journal lock, two processes taking turns", turns)
        let socket = try throughTheSocket(root: root + "/socket", writes: writes)
        report("through a mount's control socket (connect, request, reply)", socket)
    }

    private static func report(_ how: String, _ latencies: Latencies) {
        let figures = [latencies.median, latencies.percentile(0.99), latencies.maximum].map {
            Latencies.format($0).padding(toLength: 11, withPad: " ", startingAt: 0)
        }
        print(how.padding(toLength: 62, withPad: " ", startingAt: 0) + figures.joined())
    }

    /// `stores` stores of one state directory (each opening it as another
    /// process would: its own locks' descriptions), writing in turn.
    private static func underTheLock(root: String, writes: Int, stores count: Int) throws -> Latencies {
        let stores = try (0..<count).map { _ in
            try DeviceStore(syncDirectory: URL(fileURLWithPath: root + "/sync"), stateDirectory: URL(fileURLWithPath: root + "/state"),
                            deviceName: "bench", warn: { _ in })
        }
        defer { for store in stores { store.close() } }
        var latencies = Latencies()
        for write in 0..<writes {
            let started = DispatchTime.now()
            try stores[write % count].set(.integer(Int64(write)), forKey: "key-\(write % 50)")
            latencies.add(Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9)
        }
        return latencies
    }

    /// `kvfs mount` of a store, and `writes` `set` requests to its daemon.
    private static func throughTheSocket(root: String, writes: Int) throws -> Latencies {
        let kvfs = MountPropagationBenchmark.kvfs
        let (mount, state) = (root + "/m", root + "/state")
        try FileManager.default.createDirectory(atPath: mount, withIntermediateDirectories: true)
        let mounted = try ChildProcess.run(kvfs, ["mount", mount, "--sync-dir", root + "/sync", "--state-dir", state])
        guard mounted.status == 0 else { throw ChildProcessError.failed("kvfs mount", mounted.output) }
        defer { _ = try? ChildProcess.run(kvfs, ["unmount", mount]) }
        var latencies = Latencies()
        for write in 0..<writes {
            // StoreRequest.set as kvfs encodes it: the value is the file's content (base64 in JSON).
            let request = #"{"set":{"key":"key-\#(write % 50)","value":"\#(Data("\(write)".utf8).base64EncodedString())"}}"#
            let started = DispatchTime.now()
            let reply = try roundTrip(Data(request.utf8), socket: state + "/control.sock")
            latencies.add(Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9)
            guard !reply.contains(Data("failure".utf8)) else {
                throw OptionError(message: "the daemon refused a write: \(String(decoding: reply, as: UTF8.self))")
            }
        }
        return latencies
    }

    /// One request on a connection of its own, as `kvfs set` sends it: a 4-byte big-endian length, then the JSON.
    private static func roundTrip(_ message: Data, socket path: String) throws -> Data {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw OptionError(message: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: path.utf8.prefix(buffer.count - 1))
            buffer[min(path.utf8.count, buffer.count - 1)] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else { throw OptionError(message: "connect \(path): errno \(errno)") }
        var length = UInt32(message.count).bigEndian
        let frame = Data(bytes: &length, count: 4) + message
        guard frame.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) == frame.count else {
            throw OptionError(message: "write \(path): errno \(errno)")
        }
        let header = try readExactly(4, from: fd)
        return try readExactly(Int(header.reduce(0) { $0 << 8 | UInt32($1) }), from: fd)
    }

    private static func readExactly(_ count: Int, from fd: Int32) throws -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, count - done) }
            guard got > 0 else { throw OptionError(message: "the daemon closed the connection") }
            done += got
        }
        return Data(bytes)
    }
}
