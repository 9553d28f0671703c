import CFUSE
import Glibc

// The opcodes about open files: OPEN, READ, WRITE, FLUSH, RELEASE, FSYNC, SETATTR.

/// `OPEN`.
func doOpen(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    answer(req) { box, request throws(Errno) in
        guard let fi else { throw .EINVAL }
        let flags = OpenFlags(rawValue: fi.pointee.flags)
        let reply = try box.reading?.open(InodeNumber(ino), flags: flags, request: request.context) ?? OpenReply()
        reply.apply(to: fi)
        if fuse_reply_open(request.raw, fi) != 0 {  // the caller is gone: no RELEASE will come
            box.release(InodeNumber(ino), handle: reply.handle, flags: flags)
        }
    }
}

/// `READ`: the filesystem hands its bytes to a closure that replies, so
/// they are copied to the kernel straight from where it keeps them.
func doRead(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ size: Int, _ off: off_t, _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    guard let req else { return }
    guard let reading = operations(req).reading else {
        fuse_reply_err(req, Errno.ENOSYS.rawValue)
        return
    }
    var replied = false
    do throws(Errno) {
        try reading.read(InodeNumber(ino), handle: fi?.pointee.fh ?? 0, offset: Int64(off), size: size,
                         request: Request(req).context) { bytes in
            guard !replied else { return }
            replied = true
            fuse_reply_buf(req, bytes.baseAddress?.assumingMemoryBound(to: CChar.self), min(bytes.count, size))
        }
        if !replied { fuse_reply_buf(req, nil, 0) }
    } catch {
        if !replied { fuse_reply_err(req, error.rawValue) }
    }
}

/// `WRITE`.
func doWrite(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ buf: UnsafePointer<CChar>?, _ size: Int, _ off: off_t,
             _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    answer(req) { box, request throws(Errno) in
        guard let writing = box.writing else { throw .ENOSYS }
        let written = try writing.write(InodeNumber(ino), handle: fi?.pointee.fh ?? 0, offset: Int64(off),
                                        bytes: UnsafeRawBufferPointer(start: buf, count: size), request: request.context)
        fuse_reply_write(request.raw, written)
    }
}

/// `FLUSH`.
func doFlush(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    answer(req) { box, request throws(Errno) in
        guard let writing = box.writing else { throw .ENOSYS }
        try writing.flush(InodeNumber(ino), handle: fi?.pointee.fh ?? 0, lockOwner: fi?.pointee.lock_owner ?? 0, request: request.context)
        replySuccess(request)
    }
}

/// `RELEASE`: cannot fail.
func doRelease(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    guard let req else { return }
    operations(req).release(InodeNumber(ino), handle: fi?.pointee.fh ?? 0, flags: OpenFlags(rawValue: fi?.pointee.flags ?? 0))
    fuse_reply_err(req, 0)
}

/// `FSYNC`.
func doFsync(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ datasync: Int32, _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    answer(req) { box, request throws(Errno) in
        guard let writing = box.writing else { throw .ENOSYS }
        try writing.fsync(InodeNumber(ino), handle: fi?.pointee.fh ?? 0, dataOnly: datasync != 0, request: request.context)
        replySuccess(request)
    }
}

/// `SETATTR`.
func doSetattr(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ attr: UnsafeMutablePointer<stat>?, _ toSet: Int32,
               _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    answer(req) { box, request throws(Errno) in
        guard let writing = box.writing else { throw .ENOSYS }
        guard let attr else { throw .EINVAL }
        let changes = AttributeChanges(attr.pointee, toSet: toSet)
        replyAttributes(request, try writing.setattr(InodeNumber(ino), changes: changes, handle: fi?.pointee.fh, request: request.context))
    }
}
