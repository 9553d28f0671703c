import CFUSE
import Glibc

// The opcodes about names: LOOKUP, FORGET, BATCH_FORGET, GETATTR, and those
// that make or remove a name (CREATE, MKNOD, MKDIR, UNLINK, RMDIR, RENAME,
// SYMLINK, LINK), READLINK.

/// `LOOKUP`.
func doLookup(_ req: fuse_req_t?, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?) {
    answer(req, name: name) { box, request, name throws(Errno) in
        let reply = try box.fileSystem.lookup(parent: InodeNumber(parent), name: name, request: request.context)
        replyEntry(request, reply, box)
    }
}

/// `FORGET`: no reply but "none".
func doForget(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ lookups: UInt64) {
    guard let req else { return }
    operations(req).forget(InodeNumber(ino), lookups: lookups)
    fuse_reply_none(req)
}

/// `BATCH_FORGET`: one `forget` per inode.
func doBatchForget(_ req: fuse_req_t?, _ count: Int, _ forgets: UnsafeMutablePointer<fuse_forget_data>?) {
    guard let req else { return }
    let box = operations(req)
    if let forgets {
        for item in UnsafeBufferPointer(start: forgets, count: count) {
            box.forget(InodeNumber(item.ino), lookups: item.nlookup)
        }
    }
    fuse_reply_none(req)
}

/// `GETATTR`.
func doGetattr(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    answer(req) { box, request throws(Errno) in
        replyAttributes(request, try box.fileSystem.getattr(InodeNumber(ino), handle: fi?.pointee.fh, request: request.context))
    }
}

/// `READLINK`.
func doReadlink(_ req: fuse_req_t?, _ ino: fuse_ino_t) {
    answer(req) { box, request throws(Errno) in
        guard let links = box.links else { throw .ENOSYS }
        fuse_reply_readlink(request.raw, try links.readlink(InodeNumber(ino), request: request.context))
    }
}

/// `CREATE`: the entry and the open file in one reply.
func doCreate(_ req: fuse_req_t?, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ mode: mode_t,
              _ fi: UnsafeMutablePointer<fuse_file_info>?) {
    answer(req, name: name) { box, request, name throws(Errno) in
        guard let names = box.names else { throw .ENOSYS }
        guard let fi else { throw .EINVAL }
        let flags = OpenFlags(rawValue: fi.pointee.flags)
        let reply = try names.create(parent: InodeNumber(parent), name: name, mode: mode, flags: flags, request: request.context)
        var param = reply.entry.entryParam
        guard param.ino != 0 else { throw .EIO }  // a negative entry cannot be opened
        reply.file.apply(to: fi)
        if fuse_reply_create(request.raw, &param, fi) != 0 {  // the caller is gone: undo open and lookup
            box.release(InodeNumber(param.ino), handle: reply.file.handle, flags: flags)
            box.forget(InodeNumber(param.ino), lookups: 1)
        }
    }
}

/// `MKNOD`.
func doMknod(_ req: fuse_req_t?, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ mode: mode_t, _ device: dev_t) {
    answer(req, name: name) { box, request, name throws(Errno) in
        guard let names = box.names else { throw .ENOSYS }
        replyEntry(request, try names.mknod(parent: InodeNumber(parent), name: name, mode: mode, device: device, request: request.context), box)
    }
}

/// `MKDIR`.
func doMkdir(_ req: fuse_req_t?, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ mode: mode_t) {
    answer(req, name: name) { box, request, name throws(Errno) in
        guard let names = box.names else { throw .ENOSYS }
        replyEntry(request, try names.mkdir(parent: InodeNumber(parent), name: name, mode: mode, request: request.context), box)
    }
}

/// `UNLINK`.
func doUnlink(_ req: fuse_req_t?, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?) {
    answer(req, name: name) { box, request, name throws(Errno) in
        guard let names = box.names else { throw .ENOSYS }
        try names.unlink(parent: InodeNumber(parent), name: name, request: request.context)
        replySuccess(request)
    }
}

/// `RMDIR`.
func doRmdir(_ req: fuse_req_t?, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?) {
    answer(req, name: name) { box, request, name throws(Errno) in
        guard let names = box.names else { throw .ENOSYS }
        try names.rmdir(parent: InodeNumber(parent), name: name, request: request.context)
        replySuccess(request)
    }
}

/// `RENAME` and `RENAME2`.
func doRename(_ req: fuse_req_t?, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?, _ newParent: fuse_ino_t,
              _ newName: UnsafePointer<CChar>?, _ flags: UInt32) {
    answer(req, name: name) { box, request, name throws(Errno) in
        let newName = try string(newName)
        guard let names = box.names else { throw .ENOSYS }
        try names.rename(parent: InodeNumber(parent), name: name, newParent: InodeNumber(newParent), newName: newName,
                         flags: RenameFlags(rawValue: flags), request: request.context)
        replySuccess(request)
    }
}

/// `SYMLINK`.
func doSymlink(_ req: fuse_req_t?, _ link: UnsafePointer<CChar>?, _ parent: fuse_ino_t, _ name: UnsafePointer<CChar>?) {
    answer(req, name: name) { box, request, name throws(Errno) in
        let target = try string(link)
        guard let names = box.names else { throw .ENOSYS }
        replyEntry(request, try names.symlink(target: target, parent: InodeNumber(parent), name: name, request: request.context), box)
    }
}

/// `LINK`.
func doLink(_ req: fuse_req_t?, _ ino: fuse_ino_t, _ newParent: fuse_ino_t, _ newName: UnsafePointer<CChar>?) {
    answer(req, name: newName) { box, request, newName throws(Errno) in
        guard let names = box.names else { throw .EPERM }
        replyEntry(request, try names.link(InodeNumber(ino), newParent: InodeNumber(newParent), newName: newName, request: request.context), box)
    }
}
