import CFUSE
import Glibc

// The opcodes about directory listings: OPENDIR, READDIR, RELEASEDIR.

/// An open directory as FUSEKit keeps it: the filesystem's handle and the
/// listing taken at the first `readdir`, so that the kernel's later chunks
/// (at offsets FUSEKit numbered) come from the same snapshot.
///
/// Its address is the `fh` the kernel sees. The kernel serialises `readdir`
/// on one open directory (fuse_readdir holds the file's readdir lock), and
/// `releasedir` comes after the last of them, so the mutable `entries` needs
/// no lock of its own.
final class DirectoryStream: @unchecked Sendable {
    let handle: UInt64
    var entries: [DirectoryEntry]?

    init(handle: UInt64) { self.handle = handle }

    var fileHandle: UInt64 { UInt64(UInt(bitPattern: Unmanaged.passRetained(self).toOpaque())) }

    /// The stream a file handle names, without taking ownership.
    static func borrow(_ fh: UInt64) -> DirectoryStream? {
        UnsafeRawPointer(bitPattern: UInt(fh)).map { Unmanaged<DirectoryStream>.fromOpaque($0).takeUnretainedValue() }
    }

    /// The stream a file handle names, taking back the reference `fileHandle` gave away.
    static func take(_ fh: UInt64) -> DirectoryStream? {
        UnsafeRawPointer(bitPattern: UInt(fh)).map { Unmanaged<DirectoryStream>.fromOpaque($0).takeRetainedValue() }
    }
}

/// `OPENDIR`.
func doOpendir(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    answer(req) { box, request throws(Errno) in
        guard let fi else { throw .EINVAL }
        let reply = try box.directories?.opendir(InodeNumber(ino), flags: OpenFlags(rawValue: fi.pointee.flags), request: request.context)
            ?? OpenReply()
        reply.apply(to: fi)
        fi.pointee.fh = DirectoryStream(handle: reply.handle).fileHandle
        if fuse_reply_open(request.raw, fi) != 0 {  // the caller is gone: no RELEASEDIR will come
            _ = DirectoryStream.take(fi.pointee.fh)
            box.directories?.releasedir(InodeNumber(ino), handle: reply.handle)
        }
    }
}

/// `READDIR`: the listing from the stream's snapshot, packed into the kernel's buffer.
func doReaddir(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ size: Int, _ off: off_t, _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    answer(req) { box, request throws(Errno) in
        guard let directories = box.directories else { throw .ENOSYS }
        let entries: [DirectoryEntry]
        if let stream = fi.flatMap({ DirectoryStream.borrow($0.pointee.fh) }) {
            if off == 0 || stream.entries == nil {
                stream.entries = try directories.readdir(InodeNumber(ino), handle: stream.handle, request: request.context)
            }
            entries = stream.entries!
        } else {  // no OPENDIR (no-opendir mode): list afresh for every chunk
            entries = try directories.readdir(InodeNumber(ino), handle: 0, request: request.context)
        }
        replyDirectory(request, entries, from: Int(off), size: size)
    }
}

/// `RELEASEDIR`: cannot fail.
func doReleasedir(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    guard let req else { return }
    let stream = fi.flatMap { DirectoryStream.take($0.pointee.fh) }
    operations(req).directories?.releasedir(InodeNumber(ino), handle: stream?.handle ?? 0)
    fuse_reply_err(req, 0)
}

/// Packs `entries[start...]` into one kernel-sized buffer and sends it; the
/// offset of entry `i` (where the next chunk starts) is `i + 1`.
private func replyDirectory(_ request: Request, _ entries: [DirectoryEntry], from start: Int, size: Int) {
    let req = request.raw
    guard size > 0, start >= 0, start < entries.count else {
        fuse_reply_buf(req, nil, 0)
        return
    }
    withUnsafeTemporaryAllocation(byteCount: size, alignment: 8) { buffer in
        let base = buffer.baseAddress!.assumingMemoryBound(to: CChar.self)
        var used = 0
        var st = stat()
        var index = start
        while index < entries.count {
            let entry = entries[index]
            st.st_ino = UInt(entry.inode.rawValue)
            st.st_mode = entry.type.rawValue
            let needed = entry.name.withCString { name in
                fuse_add_direntry(req, base + used, size - used, name, &st, off_t(index + 1))
            }
            if needed > size - used { break }
            used += needed
            index += 1
        }
        fuse_reply_buf(req, base, used)
    }
}
