import FUSEKit
import KVStore

/// The extended attributes a key's file has; there are no others.
enum KeyAttribute: String, CaseIterable {
    /// The value's type; setting it converts the value where nothing is lost.
    case type = "user.kvfs.type"
    /// When the value was written, by the hybrid logical clock (time, and `+counter` when non-zero).
    case modified = "user.kvfs.modified"
    /// The device that wrote the value: its name and id.
    case device = "user.kvfs.device"
    /// The devices that have read the value, by name, one a line (each
    /// ending in a newline; a device name holds no control character), this
    /// device first. Read from every device's published progress at each
    /// request, so it is read by name only: listxattr leaves it out, so that
    /// `getfattr -d`, `cp -a` and `rsync -X` neither pay for it nor copy it.
    case delivered = "user.kvfs.delivered"

    /// The attributes listxattr names.
    static let listed: [KeyAttribute] = [.type, .modified, .device]

    /// Whether `name` is in the one namespace kvfs has attributes in (`user.`).
    ///
    /// Names in any other (`security.`, `system.`, `trusted.`) are answered
    /// EOPNOTSUPP, not ENODATA: kvfs supports no such attribute on any file,
    /// and tools cache that answer per filesystem. `ls -l` asks each file for
    /// `security.selinux` and `system.posix_acl_access`, and stops asking
    /// files of the same device once one says "not supported" (coreutils'
    /// `getfilecon_cache` and `file_has_acl_cache`); after ENODATA it asked
    /// again for every file, two requests per entry. The kernel's own probe
    /// of `security.capability` (an O_TRUNC open) takes either answer as "none".
    static func isSupported(_ name: String) -> Bool { name.hasPrefix("user.") }
}

extension KeyFileSystem {
    /// The key a key file stands for, or nil for scratch and control files.
    private func key(of inode: InodeNumber) -> StoreKey? {
        tables.withLock { tables in
            guard let name = tables.nodes.name(of: inode), tables.scratch[name] == nil else { return nil }
            return FileName.decode(name)
        }
    }

    public func listxattr(_ inode: InodeNumber, request: RequestContext) throws(Errno) -> [String] {
        guard let key = key(of: inode), store.entry(forKey: key) != nil else { return [] }
        return KeyAttribute.listed.map(\.rawValue)
    }

    public func getxattr(_ inode: InodeNumber, name: String, request: RequestContext) throws(Errno) -> [UInt8] {
        guard KeyAttribute.isSupported(name) else { throw .EOPNOTSUPP }
        guard let attribute = KeyAttribute(rawValue: name), let key = key(of: inode),
              let value = store.entry(forKey: key) else { throw .ENODATA }
        switch attribute {
        case .type: return Array(value.value.type.rawValue.utf8)
        case .modified: return Array(value.stamp.time.description.utf8)
        case .device: return Array("\(store.name(of: value.stamp.device)) (\(value.stamp.device.hex))".utf8)
        case .delivered: return Array(store.deliveredTo(key: key).map { $0.name + "\n" }.joined().utf8)
        }
    }

    public func setxattr(_ inode: InodeNumber, name: String, value: UnsafeRawBufferPointer,
                         flags: ExtendedAttributeFlags, request: RequestContext) throws(Errno) {
        guard let attribute = KeyAttribute(rawValue: name) else { throw .ENOTSUP }
        guard attribute == .type else { throw .EPERM }
        guard let key = key(of: inode) else { throw .ENOTSUP }
        commitUnwritten(FileName.encode(key))
        let text = String(decoding: value, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let type = PropertyListType(rawValue: text) else { throw .EINVAL }
        do { try store.convert(key: key, to: type) } catch { throw Errno(error) }
        invalidator.invalidate(inode: inode)  // the file form changed with the type
    }

    public func removexattr(_ inode: InodeNumber, name: String, request: RequestContext) throws(Errno) {
        guard KeyAttribute.isSupported(name) else { throw .EOPNOTSUPP }
        throw KeyAttribute(rawValue: name) == nil ? .ENODATA : .EPERM
    }
}
