import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Which files a process has open, as `/proc` tells: how a `flush` learns
/// whether the close it reports is the file's last one in that process.
///
/// FUSE sends `FLUSH` for every `close(2)`, also of one of several
/// descriptors sharing an open file. A shell's `> k` opens the key, moves the
/// descriptor to standard output with `dup2` and closes the original — a
/// `FLUSH` before the command has written a byte. Committing that bare
/// truncation would lose the old value when the command's write is then
/// refused (a refused write leaves the old value: docs/close-commit.md § Refused writes); not committing a
/// bare truncation at all would let `: > k` wait for `RELEASE`, which the
/// kernel sends after `close()` has returned (every close commits: docs/close-commit.md § The last close).
/// So a bare truncation is committed at the close after which the closing
/// process holds the file open for writing nowhere else.
///
/// Nothing here touches the mount (only `/proc`), so it never sends FUSE a
/// request and can run inside one. A process this one may not inspect, or
/// one outside its pid namespace (pid 0), counts as holding nothing: the
/// close then commits, as "every close commits" asks.
final class ProcessFiles: @unchecked Sendable {
    // @unchecked: `mounts` is guarded by `lock`; the rest is immutable.

    /// The mount's device (`MAJOR:MINOR`, as mountinfo shows it).
    let device: String
    /// Whether each mount id seen in a descriptor is a mount of this
    /// filesystem. Mount ids are unique across namespaces, so a process's
    /// mount table is read once per id, not once per close.
    private var mounts: [Int: Bool] = [:]
    private let lock = NSLock()

    /// Finds the device of the kvfs mount at `mountPoint` in this process's
    /// mount table. Only the folder holding the mount point is resolved: a
    /// look at the mount point itself would be a request to this filesystem,
    /// which is not served yet.
    init?(mountPoint: String) {
        let name = (mountPoint as NSString).lastPathComponent
        guard let folder = realpath((mountPoint as NSString).deletingLastPathComponent, nil) else { return nil }
        defer { free(folder) }
        let path = String(cString: folder) == "/" ? "/" + name : String(cString: folder) + "/" + name
        guard let line = Self.mountTable(of: "self").first(where: { $0.mountPoint == path && $0.type == "fuse.kvfs" }) else {
            return nil
        }
        device = line.device
    }

    /// Whether process `pid` has `inode` of this mount open for writing at some descriptor.
    ///
    /// Standard output and error are looked at first: a shell's `> k` moves
    /// the file there before its bare close, so that close, the commonest one
    /// that must wait, is answered after reading one descriptor, not all.
    func holdsOpenForWriting(_ inode: UInt64, pid: pid_t) -> Bool {
        guard pid > 0 else { return false }
        let folder = "/proc/\(pid)/fdinfo"
        let first = ["1", "2"]
        if first.contains(where: { holdsOpenForWriting(inode, pid: pid, descriptor: folder + "/" + $0) }) { return true }
        guard let listing = opendir(folder) else { return false }
        defer { closedir(listing) }
        while let entry = readdir(listing) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard name.first?.isNumber == true, !first.contains(name) else { continue }
            if holdsOpenForWriting(inode, pid: pid, descriptor: folder + "/" + name) { return true }
        }
        return false
    }

    /// Whether the descriptor whose fdinfo is at `path` (of process `pid`) is `inode` of this mount, open for writing.
    private func holdsOpenForWriting(_ inode: UInt64, pid: pid_t, descriptor path: String) -> Bool {
        guard let info = DescriptorInfo(path), info.inode == inode, info.flags & O_ACCMODE != O_RDONLY else { return false }
        // An inode number alone may be another filesystem's (a terminal's, say): check the mount.
        return isThisFileSystem(info.mountID, seenBy: pid)
    }

    /// Whether mount `id` (of `pid`'s mount table) is a mount of this filesystem.
    private func isThisFileSystem(_ id: Int, seenBy pid: pid_t) -> Bool {
        if let known = lock.withLock({ mounts[id] }) { return known }
        let table = Self.mountTable(of: String(pid))
        guard let line = table.first(where: { Int($0.id) == id }) else { return false }
        let ours = line.device == device
        lock.withLock { mounts[id] = ours }
        return ours
    }

    private struct MountLine {
        let id: String, device: String, mountPoint: String, type: String
    }

    /// A process's mount table (`/proc/PID/mountinfo`): id, device, mount point, type.
    private static func mountTable(of process: String) -> [MountLine] {
        guard let text = read("/proc/\(process)/mountinfo") else { return [] }
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 7, let dash = fields.firstIndex(of: "-"), dash + 1 < fields.count else { return nil }
            return MountLine(id: String(fields[0]), device: String(fields[2]),
                             mountPoint: unescape(fields[4]), type: String(fields[dash + 1]))
        }
    }

    private static func unescape(_ field: Substring) -> String {
        field.replacingOccurrences(of: "\\040", with: " ").replacingOccurrences(of: "\\011", with: "\t")
            .replacingOccurrences(of: "\\012", with: "\n").replacingOccurrences(of: "\\134", with: "\\")
    }

    /// A small `/proc` file's text, or nil.
    private static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            bytes += chunk[0..<count]
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// The first lines of a descriptor's `/proc/PID/fdinfo/FD` (`pos`, `flags`,
/// `mnt_id`, `ino`: every descriptor has them, in that order), read into a
/// small buffer and parsed as bytes: a bare close reads several of these.
private struct DescriptorInfo {
    var flags: Int32 = 0
    var mountID = -1
    var inode: UInt64 = 0

    init?(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        let parsed: DescriptorInfo? = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 256) { buffer in
            var count: Int
            repeat { count = read(fd, buffer.baseAddress, buffer.count) } while count < 0 && errno == EINTR
            return count > 0 ? DescriptorInfo(parsing: UnsafeBufferPointer(rebasing: buffer[..<count])) : nil
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// Reads `name:\tvalue` lines; the last line may be cut off by the buffer, and is then ignored.
    private init?(parsing text: UnsafeBufferPointer<UInt8>) {
        var seen = 0
        var lineStart = text.startIndex
        while let end = text[lineStart...].firstIndex(of: UInt8(ascii: "\n")) {
            let line = text[lineStart..<end]
            lineStart = end + 1
            guard let tab = line.firstIndex(of: UInt8(ascii: "\t")) else { continue }
            let name = line[..<tab], value = line[(tab + 1)...]
            if name.elementsEqual("flags:".utf8) {
                flags = Int32(truncatingIfNeeded: Self.number(value, radix: 8))
            } else if name.elementsEqual("mnt_id:".utf8) {
                mountID = Int(Self.number(value, radix: 10))
            } else if name.elementsEqual("ino:".utf8) {
                inode = Self.number(value, radix: 10)
            } else {
                continue
            }
            seen += 1
        }
        guard seen == 3 else { return nil }
    }

    private static func number(_ digits: Slice<UnsafeBufferPointer<UInt8>>, radix: UInt64) -> UInt64 {
        digits.reduce(0) { $0 &* radix &+ UInt64($1 &- UInt8(ascii: "0")) }
    }
}
