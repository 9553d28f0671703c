import CFUSE

/// libfuse's operation table: one named function per FUSE opcode, each in
/// the file of its group (Opcodes+*.swift), as go-fuse's `fuse/opcode.go`
/// keeps one handler per opcode in a table.
///
/// Every entry is set, whatever groups the filesystem implements: an
/// opcode function answers as libfuse would for a group that is missing
/// (see ``FileSystemOperations``). So the kernel gets the same answers
/// either way, and libfuse, which reads the table when it negotiates with
/// the kernel at `INIT`, sees the same table for every filesystem.
func makeLowLevelOperations() -> fuse_lowlevel_ops {
    var ops = fuse_lowlevel_ops()
    ops.`init` = doInit
    ops.lookup = doLookup
    ops.forget = doForget
    ops.forget_multi = doBatchForget
    ops.getattr = doGetattr
    ops.setattr = doSetattr
    ops.readlink = doReadlink
    ops.mknod = doMknod
    ops.mkdir = doMkdir
    ops.unlink = doUnlink
    ops.rmdir = doRmdir
    ops.symlink = doSymlink
    ops.rename = doRename
    ops.link = doLink
    ops.open = doOpen
    ops.read = doRead
    ops.write = doWrite
    ops.flush = doFlush
    ops.release = doRelease
    ops.fsync = doFsync
    ops.opendir = doOpendir
    ops.readdir = doReaddir
    ops.releasedir = doReleasedir
    ops.statfs = doStatfs
    ops.setxattr = doSetxattr
    ops.getxattr = doGetxattr
    ops.listxattr = doListxattr
    ops.removexattr = doRemovexattr
    ops.access = doAccess
    ops.create = doCreate
    return ops
}
