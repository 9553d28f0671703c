import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

extension FileDescriptor {
    /// Reads until the end of the file (or of the pipe's last writer), retrying
    /// on `EINTR`.
    public func readToEnd(chunk: Int = 4096) throws(SystemCallError) -> [UInt8] {
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: chunk)
        while true {
            let count = try SystemCallError.naming("read") { try buffer.withUnsafeMutableBytes { try read(into: $0) } }
            if count == 0 { return bytes }
            bytes += buffer[0..<count]
        }
    }

    /// Reads exactly `count` bytes, retrying on `EINTR` and after short
    /// reads; nil when the end of the file (or the peer's close) comes first.
    public func read(exactly count: Int) throws(SystemCallError) -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: count)
        var done = 0
        while done < count {
            let got = try SystemCallError.naming("read") { try buffer[done...].withUnsafeMutableBytes { try read(into: $0) } }
            if got == 0 { return nil }
            done += got
        }
        return buffer
    }

    /// The whole content of the file at `path` (opened read-only, close-on-exec).
    public static func contents(of path: String) throws(SystemCallError) -> [UInt8] {
        let file = try SystemCallError.naming("open", path) { try FileDescriptor.open(path, .readOnly, options: .closeOnExec) }
        defer { try? file.close() }
        return try file.readToEnd()
    }

    /// Writes all of `bytes`, retrying on `EINTR` and after short writes.
    public func write(all bytes: some Sequence<UInt8>) throws(SystemCallError) {
        _ = try SystemCallError.naming("write") { try writeAll(bytes) }
    }

    /// Makes the file's data durable on disk (`fsync`, which swift-system does not wrap).
    public func synchronize() throws(SystemCallError) {
        try systemCall("fsync") { fsync(rawValue) }
    }
}
