import CFUSE
import Glibc

// The bridge from libfuse's C callbacks to a FileSystemOperations.
//
// Every callback is a non-capturing closure (`@convention(c)`), finds the
// filesystem through the session's userdata pointer, and answers exactly once:
// with the reply built from what the method returned, or with the thrown
// errno. After a fuse_reply_* call the request is freed, so nothing touches
// `req` (or a `Request` made from it) afterwards.

/// What the session's userdata points at: the filesystem, held by the
/// ``FUSESession`` for as long as libfuse may call back.
final class OperationsBox: Sendable {
    /// The filesystem answering requests; immutable, so reading it from
    /// several loop threads at once is safe.
    let fileSystem: any FileSystemOperations

    init(_ fileSystem: any FileSystemOperations) { self.fileSystem = fileSystem }
}

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

@inline(__always)
private func fileSystem(_ req: fuse_req_t) -> any FileSystemOperations {
    Unmanaged<OperationsBox>.fromOpaque(fuse_req_userdata(req)!).takeUnretainedValue().fileSystem
}

/// Runs `body`, which must reply itself on success; replies with the errno it throws.
@inline(__always)
private func answer(_ req: fuse_req_t?, _ body: (any FileSystemOperations, Request) throws(Errno) -> Void) {
    guard let req else { return }
    do throws(Errno) {
        try body(fileSystem(req), Request(req))
    } catch {
        fuse_reply_err(req, error.rawValue)
    }
}

/// Like ``answer(_:_:)`` for requests with a name: answers `EINVAL` for a name that is not UTF-8.
@inline(__always)
private func answer(_ req: fuse_req_t?, name: UnsafePointer<CChar>?,
                    _ body: (any FileSystemOperations, Request, String) throws(Errno) -> Void) {
    answer(req) { fs, request throws(Errno) in
        guard let name, let string = String(validatingCString: name) else { throw .EINVAL }
        try body(fs, request, string)
    }
}

/// Sends an entry; if the kernel did not take it (the caller was
/// interrupted), gives back the lookup the filesystem counted for it.
@inline(__always)
private func replyEntry(_ req: fuse_req_t, _ reply: EntryReply, _ fs: any FileSystemOperations) {
    var param = reply.entryParam
    if fuse_reply_entry(req, &param) == -ENOENT, param.ino != 0 {
        fs.forget(InodeNumber(param.ino), lookups: 1)
    }
}

/// Packs `entries[start...]` into one kernel-sized buffer and sends it; the
/// offset of entry `i` (where the next chunk starts) is `i + 1`.
@inline(__always)
private func replyDirectory(_ req: fuse_req_t, _ entries: [DirectoryEntry], from start: Int, size: Int) {
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

/// The libfuse operation table, every entry bridged to the filesystem in the session's userdata.
func makeLowLevelOperations() -> fuse_lowlevel_ops {
    var ops = fuse_lowlevel_ops()

    ops.`init` = { userdata, conn in
        guard let userdata, let conn else { return }
        let fs = Unmanaged<OperationsBox>.fromOpaque(userdata).takeUnretainedValue().fileSystem
        var info = ConnectionInfo(conn.pointee)
        fs.initialize(&info)
        // libfuse aborts the session if `want` asks for more than `capable`.
        info.want.formIntersection(info.capable)
        info.apply(to: &conn.pointee)
    }

    ops.lookup = { req, parent, name in
        answer(req, name: name) { fs, request, name throws(Errno) in
            let reply = try fs.lookup(parent: InodeNumber(parent), name: name, request: request)
            replyEntry(request.raw, reply, fs)
        }
    }

    ops.forget = { req, ino, nlookup in
        guard let req else { return }
        fileSystem(req).forget(InodeNumber(ino), lookups: nlookup)
        fuse_reply_none(req)
    }

    ops.forget_multi = { req, count, forgets in
        guard let req else { return }
        let fs = fileSystem(req)
        if let forgets {
            for item in UnsafeBufferPointer(start: forgets, count: count) {
                fs.forget(InodeNumber(item.ino), lookups: item.nlookup)
            }
        }
        fuse_reply_none(req)
    }

    ops.getattr = { req, ino, fi in
        answer(req) { fs, request throws(Errno) in
            let reply = try fs.getattr(InodeNumber(ino), handle: fi?.pointee.fh, request: request)
            var st = reply.attributes.stat
            fuse_reply_attr(request.raw, &st, reply.timeout)
        }
    }

    ops.setattr = { req, ino, attr, toSet, fi in
        answer(req) { fs, request throws(Errno) in
            guard let attr else { throw .EINVAL }
            let changes = AttributeChanges(attr.pointee, toSet: toSet)
            let reply = try fs.setattr(InodeNumber(ino), changes: changes, handle: fi?.pointee.fh, request: request)
            var st = reply.attributes.stat
            fuse_reply_attr(request.raw, &st, reply.timeout)
        }
    }

    ops.readlink = { req, ino in
        answer(req) { fs, request throws(Errno) in
            let target = try fs.readlink(InodeNumber(ino), request: request)
            fuse_reply_readlink(request.raw, target)
        }
    }

    ops.mknod = { req, parent, name, mode, rdev in
        answer(req, name: name) { fs, request, name throws(Errno) in
            let reply = try fs.mknod(parent: InodeNumber(parent), name: name, mode: mode, device: rdev, request: request)
            replyEntry(request.raw, reply, fs)
        }
    }

    ops.mkdir = { req, parent, name, mode in
        answer(req, name: name) { fs, request, name throws(Errno) in
            let reply = try fs.mkdir(parent: InodeNumber(parent), name: name, mode: mode, request: request)
            replyEntry(request.raw, reply, fs)
        }
    }

    ops.unlink = { req, parent, name in
        answer(req, name: name) { fs, request, name throws(Errno) in
            try fs.unlink(parent: InodeNumber(parent), name: name, request: request)
            fuse_reply_err(request.raw, 0)
        }
    }

    ops.rmdir = { req, parent, name in
        answer(req, name: name) { fs, request, name throws(Errno) in
            try fs.rmdir(parent: InodeNumber(parent), name: name, request: request)
            fuse_reply_err(request.raw, 0)
        }
    }

    ops.symlink = { req, link, parent, name in
        answer(req, name: name) { fs, request, name throws(Errno) in
            guard let link, let target = String(validatingCString: link) else { throw .EINVAL }
            let reply = try fs.symlink(target: target, parent: InodeNumber(parent), name: name, request: request)
            replyEntry(request.raw, reply, fs)
        }
    }

    ops.rename = { req, parent, name, newParent, newName, flags in
        answer(req, name: name) { fs, request, name throws(Errno) in
            guard let newName, let newString = String(validatingCString: newName) else { throw .EINVAL }
            try fs.rename(parent: InodeNumber(parent), name: name, newParent: InodeNumber(newParent), newName: newString,
                          flags: RenameFlags(rawValue: flags), request: request)
            fuse_reply_err(request.raw, 0)
        }
    }

    ops.link = { req, ino, newParent, newName in
        answer(req, name: newName) { fs, request, newName throws(Errno) in
            let reply = try fs.link(InodeNumber(ino), newParent: InodeNumber(newParent), newName: newName, request: request)
            replyEntry(request.raw, reply, fs)
        }
    }

    ops.open = { req, ino, fi in
        answer(req) { fs, request throws(Errno) in
            guard let fi else { throw .EINVAL }
            let flags = OpenFlags(rawValue: fi.pointee.flags)
            let reply = try fs.open(InodeNumber(ino), flags: flags, request: request)
            reply.apply(to: fi)
            if fuse_reply_open(request.raw, fi) != 0 {  // the caller is gone: no RELEASE will come
                fs.release(InodeNumber(ino), handle: reply.handle, flags: flags)
            }
        }
    }

    ops.read = { req, ino, size, off, fi in
        guard let req else { return }
        var replied = false
        do throws(Errno) {
            try fileSystem(req).read(InodeNumber(ino), handle: fi?.pointee.fh ?? 0, offset: Int64(off), size: size,
                                     request: Request(req)) { bytes in
                guard !replied else { return }
                replied = true
                fuse_reply_buf(req, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), min(bytes.count, size))
            }
            if !replied { fuse_reply_buf(req, nil, 0) }
        } catch {
            if !replied { fuse_reply_err(req, error.rawValue) }
        }
    }

    ops.write = { req, ino, buf, size, off, fi in
        answer(req) { fs, request throws(Errno) in
            let written = try fs.write(InodeNumber(ino), handle: fi?.pointee.fh ?? 0, offset: Int64(off),
                                       bytes: UnsafeRawBufferPointer(start: buf, count: size), request: request)
            fuse_reply_write(request.raw, written)
        }
    }

    ops.flush = { req, ino, fi in
        answer(req) { fs, request throws(Errno) in
            try fs.flush(InodeNumber(ino), handle: fi?.pointee.fh ?? 0, lockOwner: fi?.pointee.lock_owner ?? 0, request: request)
            fuse_reply_err(request.raw, 0)
        }
    }

    ops.release = { req, ino, fi in
        guard let req else { return }
        fileSystem(req).release(InodeNumber(ino), handle: fi?.pointee.fh ?? 0, flags: OpenFlags(rawValue: fi?.pointee.flags ?? 0))
        fuse_reply_err(req, 0)
    }

    ops.fsync = { req, ino, datasync, fi in
        answer(req) { fs, request throws(Errno) in
            try fs.fsync(InodeNumber(ino), handle: fi?.pointee.fh ?? 0, dataOnly: datasync != 0, request: request)
            fuse_reply_err(request.raw, 0)
        }
    }

    ops.opendir = { req, ino, fi in
        answer(req) { fs, request throws(Errno) in
            guard let fi else { throw .EINVAL }
            let reply = try fs.opendir(InodeNumber(ino), flags: OpenFlags(rawValue: fi.pointee.flags), request: request)
            reply.apply(to: fi)
            fi.pointee.fh = DirectoryStream(handle: reply.handle).fileHandle
            if fuse_reply_open(request.raw, fi) != 0 {  // the caller is gone: no RELEASEDIR will come
                _ = DirectoryStream.take(fi.pointee.fh)
                fs.releasedir(InodeNumber(ino), handle: reply.handle)
            }
        }
    }

    ops.readdir = { req, ino, size, off, fi in
        answer(req) { fs, request throws(Errno) in
            let entries: [DirectoryEntry]
            if let stream = fi.flatMap({ DirectoryStream.borrow($0.pointee.fh) }) {
                if off == 0 || stream.entries == nil {
                    stream.entries = try fs.readdir(InodeNumber(ino), handle: stream.handle, request: request)
                }
                entries = stream.entries!
            } else {  // no OPENDIR (no-opendir mode): list afresh for every chunk
                entries = try fs.readdir(InodeNumber(ino), handle: 0, request: request)
            }
            replyDirectory(request.raw, entries, from: Int(off), size: size)
        }
    }

    ops.releasedir = { req, ino, fi in
        guard let req else { return }
        let stream = fi.flatMap { DirectoryStream.take($0.pointee.fh) }
        fileSystem(req).releasedir(InodeNumber(ino), handle: stream?.handle ?? 0)
        fuse_reply_err(req, 0)
    }

    ops.statfs = { req, ino in
        answer(req) { fs, request throws(Errno) in
            var st = try fs.statfs(InodeNumber(ino), request: request).statvfs
            fuse_reply_statfs(request.raw, &st)
        }
    }

    ops.setxattr = { req, ino, name, value, size, flags in
        answer(req, name: name) { fs, request, name throws(Errno) in
            try fs.setxattr(InodeNumber(ino), name: name, value: UnsafeRawBufferPointer(start: value, count: size),
                            flags: ExtendedAttributeFlags(rawValue: flags), request: request)
            fuse_reply_err(request.raw, 0)
        }
    }

    ops.getxattr = { req, ino, name, size in
        answer(req, name: name) { fs, request, name throws(Errno) in
            let value = try fs.getxattr(InodeNumber(ino), name: name, request: request)
            try replyXattr(request.raw, value, size: size)
        }
    }

    ops.listxattr = { req, ino, size in
        answer(req) { fs, request throws(Errno) in
            var packed: [UInt8] = []
            for name in try fs.listxattr(InodeNumber(ino), request: request) {
                packed.append(contentsOf: name.utf8)
                packed.append(0)
            }
            try replyXattr(request.raw, packed, size: size)
        }
    }

    ops.removexattr = { req, ino, name in
        answer(req, name: name) { fs, request, name throws(Errno) in
            try fs.removexattr(InodeNumber(ino), name: name, request: request)
            fuse_reply_err(request.raw, 0)
        }
    }

    ops.access = { req, ino, mask in
        answer(req) { fs, request throws(Errno) in
            try fs.access(InodeNumber(ino), mask: mask, request: request)
            fuse_reply_err(request.raw, 0)
        }
    }

    ops.create = { req, parent, name, mode, fi in
        answer(req, name: name) { fs, request, name throws(Errno) in
            guard let fi else { throw .EINVAL }
            let flags = OpenFlags(rawValue: fi.pointee.flags)
            let reply = try fs.create(parent: InodeNumber(parent), name: name, mode: mode, flags: flags, request: request)
            var param = reply.entry.entryParam
            guard param.ino != 0 else { throw .EIO }  // a negative entry cannot be opened
            reply.file.apply(to: fi)
            if fuse_reply_create(request.raw, &param, fi) != 0 {  // the caller is gone: undo open and lookup
                fs.release(InodeNumber(param.ino), handle: reply.file.handle, flags: flags)
                fs.forget(InodeNumber(param.ino), lookups: 1)
            }
        }
    }

    return ops
}

/// Answers a `getxattr`/`listxattr`: the length for a size probe (`size` 0),
/// `ERANGE` if the caller's buffer is too small, else the bytes.
@inline(__always)
private func replyXattr(_ req: fuse_req_t, _ value: [UInt8], size: Int) throws(Errno) {
    if size == 0 {
        fuse_reply_xattr(req, value.count)
    } else if value.count > size {
        throw .ERANGE
    } else {
        value.withUnsafeBufferPointer { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) { fuse_reply_buf(req, $0.baseAddress, $0.count) }
        }
    }
}
