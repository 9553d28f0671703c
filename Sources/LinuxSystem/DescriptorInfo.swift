import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// The first lines of a descriptor's `/proc/PID/fdinfo/N`: its open flags,
/// the mount and the inode of its file.
///
/// Read into a small buffer and parsed as bytes, since a close on a FUSE
/// mount may read several of these while the closing process waits.
public struct DescriptorInfo: Hashable, Sendable {
    /// The open flags (`O_WRONLY`, `O_APPEND`…), from `flags:` (octal).
    public var flags: Int32
    /// The id of the mount the file is on (as in ``MountInfo/id``), from `mnt_id:`.
    public var mountID: Int
    /// The file's inode number, from `ino:`; nil on kernels older than 5.1,
    /// which do not write that line.
    public var inode: UInt64?

    /// Whether the descriptor was opened for writing (`O_WRONLY` or `O_RDWR`).
    public var isWritable: Bool { flags & O_ACCMODE != O_RDONLY }

    /// Creates the information of one descriptor.
    public init(flags: Int32, mountID: Int, inode: UInt64?) {
        self.flags = flags
        self.mountID = mountID
        self.inode = inode
    }

    /// Reads `path`, a `/proc/PID/fdinfo/N` file.
    init(path: String) throws(SystemCallError) {
        let file = try SystemCallError.naming("open", path) { try FileDescriptor.open(path, .readOnly, options: .closeOnExec) }
        defer { try? file.close() }
        let parsed: DescriptorInfo? = try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer throws(SystemCallError) in
            let count = try SystemCallError.naming("read", path) { try file.read(into: UnsafeMutableRawBufferPointer(buffer)) }
            return DescriptorInfo(parsing: UnsafeBufferPointer(rebasing: buffer[..<count]))
        }
        guard let parsed else { throw SystemCallError("read", path, errno: .ioError) }  // no flags: or mnt_id: line
        self = parsed
    }

    /// Reads `name:\tvalue` lines; the last line may be cut off by the
    /// buffer, and is then ignored. Nil without a `flags:` or `mnt_id:` line.
    init?(parsing text: UnsafeBufferPointer<UInt8>) {
        var flags: Int32?, mountID: Int?, inode: UInt64?
        var lineStart = text.startIndex
        while let end = text[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = text[lineStart..<end]
            lineStart = end + 1
            guard let tab = line.firstIndex(of: UInt8(ascii: "\t")) else { continue }
            let name = line[..<tab], value = line[(tab + 1)...]
            if name.elementsEqual("flags:".utf8) {
                flags = Int32(truncatingIfNeeded: Self.number(value, radix: 8))
            } else if name.elementsEqual("mnt_id:".utf8) {
                mountID = Int(truncatingIfNeeded: Self.number(value, radix: 10))
            } else if name.elementsEqual("ino:".utf8) {
                inode = Self.number(value, radix: 10)
            }
        }
        guard let flags, let mountID else { return nil }
        self.init(flags: flags, mountID: mountID, inode: inode)
    }

    private static func number(_ digits: Slice<UnsafeBufferPointer<UInt8>>, radix: UInt64) -> UInt64 {
        digits.reduce(0) { $0 &* radix &+ UInt64($1 &- UInt8(ascii: "0")) }
    }
}
