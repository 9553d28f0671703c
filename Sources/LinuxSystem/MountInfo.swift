/// A device number, as `/proc/PID/mountinfo` writes it (`MAJOR:MINOR`).
public struct DeviceNumber: Hashable, Sendable, CustomStringConvertible {
    /// The major number.
    public var major: UInt32
    /// The minor number.
    public var minor: UInt32

    /// Creates a device number.
    public init(major: UInt32, minor: UInt32) {
        self.major = major
        self.minor = minor
    }

    /// Parses `MAJOR:MINOR`.
    public init?(_ text: some StringProtocol) {
        let parts = text.split(separator: ":")
        guard parts.count == 2, let major = UInt32(parts[0]), let minor = UInt32(parts[1]) else { return nil }
        self.init(major: major, minor: minor)
    }

    /// The kernel's own encoding (`MKDEV`: major << 20 | minor), which names
    /// a FUSE connection's folder in `/sys/fs/fuse/connections`.
    public var kernelEncoding: UInt64 { UInt64(major) << 20 | UInt64(minor) }

    /// `MAJOR:MINOR`.
    public var description: String { "\(major):\(minor)" }
}

/// One line of `/proc/PID/mountinfo`: one mount as that process's mount namespace sees it.
///
/// `ID PARENT MAJOR:MINOR ROOT MOUNTPOINT OPTIONS [OPTIONAL…] - TYPE SOURCE SUPEROPTIONS`
/// (proc(5)); the paths are unescaped by ``unescape(_:)``.
public struct MountInfo: Hashable, Sendable {
    /// The mount's id, unique among the system's current mounts (reused once it is gone).
    public var id: Int
    /// The parent mount's id.
    public var parentID: Int
    /// The filesystem's device number (`st_dev` of its files).
    public var device: DeviceNumber
    /// The mount point, as seen from this process's root.
    public var mountPoint: String
    /// The filesystem type, e.g. `fuse.kvfs`, `ext4`.
    public var type: String
    /// The source (what `mount` names as the device), e.g. `kvfs:/path`.
    public var source: String

    /// Parses one line; nil for a line that is not a mountinfo line.
    public init?(line: some StringProtocol) {
        let fields = line.split(separator: " ", omittingEmptySubsequences: false)
        guard fields.count >= 10, let id = Int(fields[0]), let parentID = Int(fields[1]),
              let device = DeviceNumber(fields[2]),
              let separator = fields[6...].firstIndex(of: "-"), separator + 2 < fields.count else { return nil }
        self.id = id
        self.parentID = parentID
        self.device = device
        mountPoint = Self.unescape(fields[4])
        type = Self.unescape(fields[separator + 1])
        source = Self.unescape(fields[separator + 2])
    }

    /// Whether the filesystem is a FUSE one (`fuse`, or `fuse.SUBTYPE`).
    public var isFUSE: Bool { type == "fuse" || type.hasPrefix("fuse.") }

    /// Undoes the kernel's escaping of mountinfo's fields: it writes a space,
    /// tab, newline and backslash as a backslash and three octal digits
    /// (`\040`). Any other byte, a backslash not followed by three octal
    /// digits included, stands for itself. Bytes that are not UTF-8 become U+FFFD.
    public static func unescape(_ field: some StringProtocol) -> String {
        let utf8 = Array(field.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            if utf8[index] == UInt8(ascii: "\\"), index + 3 < utf8.count,
               let value = octalByte(utf8[index + 1], utf8[index + 2], utf8[index + 3]) {
                bytes.append(value)
                index += 4
            } else {
                bytes.append(utf8[index])
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The byte three octal digits write (`0`…`377`), or nil.
    private static func octalByte(_ digits: UInt8...) -> UInt8? {
        var value: UInt16 = 0
        for digit in digits {
            guard (UInt8(ascii: "0")...UInt8(ascii: "7")).contains(digit) else { return nil }
            value = value << 3 | UInt16(digit - UInt8(ascii: "0"))
        }
        return UInt8(exactly: value)
    }
}
