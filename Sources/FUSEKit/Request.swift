import CFUSE
import Glibc

/// Who made a request: the calling process's credentials (`struct fuse_ctx`).
///
/// Every ``FileSystemOperations`` method gets it as a plain value, copied
/// from libfuse's request before the call: a filesystem can be called with
/// no kernel and no libfuse, as tests do with contexts of their own making.
public struct RequestContext: Hashable, Sendable {
    /// Effective user ID of the calling process.
    public var uid: uid_t
    /// Effective group ID of the calling process.
    public var gid: gid_t
    /// Thread ID of the calling process (0 for requests the kernel makes by itself).
    public var pid: pid_t
    /// The calling process's umask (meaningful in `create`, `mkdir`, `mknod`).
    public var umask: mode_t

    /// Creates a context.
    @inlinable
    public init(uid: uid_t, gid: gid_t, pid: pid_t, umask: mode_t) {
        self.uid = uid
        self.gid = gid
        self.pid = pid
        self.umask = umask
    }
}

/// The libfuse request being answered, which the opcode functions reply to;
/// the filesystem's methods get its ``context`` alone.
///
/// It is a pointer into libfuse's request and is valid only during the
/// method call: do not store it or hand it to another thread. Reading its
/// properties costs a function call and no allocation.
@frozen
public struct Request {
    /// libfuse's request (`fuse_req_t`).
    public let raw: fuse_req_t

    /// Wraps a libfuse request.
    @inlinable
    public init(_ raw: fuse_req_t) { self.raw = raw }

    /// The calling process's uid, gid, pid and umask.
    @inlinable
    public var context: RequestContext {
        let ctx = fuse_req_ctx(raw)!.pointee
        return RequestContext(uid: ctx.uid, gid: ctx.gid, pid: ctx.pid, umask: ctx.umask)
    }

    /// Whether the caller has been interrupted (e.g. by a signal) and no
    /// longer waits for the answer; a long operation may give up with `EINTR`.
    @inlinable
    public var isInterrupted: Bool { fuse_req_interrupted(raw) != 0 }
}
