import Glibc

/// This mount namespace's mounts, as `/proc/self/mountinfo` lists them.
enum MountTable {
    /// `path` with symbolic links resolved, as the table names mount points.
    /// Only for a path not yet mounted: resolving a FUSE mount point asks
    /// its filesystem.
    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// The FUSE connection number of the FUSE mount at `canonical` (its
    /// device number, as `/sys/fs/fuse/connections` names it), or nil when
    /// no FUSE filesystem is mounted there in this namespace. Reads the table
    /// rather than `stat(2)`, which would ask the filesystem itself.
    static func fuseConnection(at canonical: String) -> UInt64? {
        guard let file = fopen("/proc/self/mountinfo", "re") else { return nil }
        defer { fclose(file) }
        var line: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(line) }
        var found: UInt64?
        while getline(&line, &capacity, file) > 0, let line {
            // ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPEROPTIONS
            let text = String(decoding: UnsafeRawBufferPointer(start: line, count: strlen(line)), as: UTF8.self)
            let fields = text.split(separator: " ")
            guard fields.count > 6, unescape(fields[4]) == canonical,
                  let separator = fields.firstIndex(of: "-"), separator + 1 < fields.count,
                  fields[separator + 1] == "fuse" || fields[separator + 1].hasPrefix("fuse.") else { continue }
            let numbers = fields[2].split(separator: ":").compactMap { UInt64($0) }
            guard numbers.count == 2 else { continue }
            found = numbers[0] << 20 | numbers[1]  // the kernel's dev_t encoding, which fusectl prints
        }
        return found  // the last one: the mount on top
    }

    /// Undoes mountinfo's octal escapes of space, tab, newline and backslash.
    static func unescape(_ field: Substring) -> String {
        var bytes: [UInt8] = []
        var index = field.utf8.startIndex
        let utf8 = field.utf8
        while index < utf8.endIndex {
            let byte = utf8[index]
            if byte == UInt8(ascii: "\\"), let end = utf8.index(index, offsetBy: 4, limitedBy: utf8.endIndex),
               let value = UInt8(String(decoding: utf8[utf8.index(after: index)..<end], as: UTF8.self), radix: 8) {
                bytes.append(value)
                index = end
            } else {
                bytes.append(byte)
                index = utf8.index(after: index)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
