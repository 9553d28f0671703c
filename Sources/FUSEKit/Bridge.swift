import CFUSE
import Glibc

// The bridge from libfuse's C callbacks to a filesystem: what every opcode
// function (Opcodes+*.swift) shares.
//
// Every opcode function is a plain function libfuse calls through its table
// (``makeLowLevelOperations()``), finds the filesystem through the session's
// userdata pointer, and answers exactly once: with the reply built from what
// the method returned, or with the thrown errno. After a fuse_reply_* call
// the request is freed, so nothing touches `req` (or a `Request` made from
// it) afterwards.

/// What the session's userdata points at: the filesystem, held by the
/// ``FUSESession`` for as long as libfuse may call back, and the groups of
/// operations it implements, each found once here rather than cast per request.
final class OperationsBox: Sendable {
    /// The filesystem answering requests; immutable, so reading it from
    /// several loop threads at once is safe.
    let fileSystem: any FileSystemOperations
    let configuring: (any ConnectionConfiguring)?
    let counting: (any LookupCounting)?
    let reading: (any FileReading)?
    let writing: (any FileWriting)?
    let directories: (any DirectoryReading)?
    let names: (any NameChanging)?
    let links: (any LinkReading)?
    let attributes: (any ExtendedAttributeHandling)?
    let statistics: (any StatisticsReporting)?
    let access: (any AccessChecking)?

    init(_ fileSystem: any FileSystemOperations) {
        self.fileSystem = fileSystem
        configuring = fileSystem as? any ConnectionConfiguring
        counting = fileSystem as? any LookupCounting
        reading = fileSystem as? any FileReading
        writing = fileSystem as? any FileWriting
        directories = fileSystem as? any DirectoryReading
        names = fileSystem as? any NameChanging
        links = fileSystem as? any LinkReading
        attributes = fileSystem as? any ExtendedAttributeHandling
        statistics = fileSystem as? any StatisticsReporting
        access = fileSystem as? any AccessChecking
    }

    /// Gives back `lookups` the kernel will not make (a reply it did not take).
    func forget(_ inode: InodeNumber, lookups: UInt64) {
        counting?.forget(inode, lookups: lookups)
    }

    /// Frees an open file whose handle the kernel will never release.
    func release(_ inode: InodeNumber, handle: UInt64, flags: OpenFlags) {
        reading?.release(inode, handle: handle, flags: flags)
    }
}

/// The operations of the session `req` belongs to.
@inline(__always)
func operations(_ req: fuse_req_t) -> OperationsBox {
    Unmanaged<OperationsBox>.fromOpaque(fuse_req_userdata(req)!).takeUnretainedValue()
}

/// Runs `body`, which must reply itself on success; replies with the errno it throws.
@inline(__always)
func answer(_ req: fuse_req_t?, _ body: (OperationsBox, Request) throws(Errno) -> Void) {
    guard let req else { return }
    do throws(Errno) {
        try body(operations(req), Request(req))
    } catch {
        fuse_reply_err(req, error.rawValue)
    }
}

/// Like ``answer(_:_:)`` for requests with a name: answers `EINVAL` for a name that is not UTF-8.
@inline(__always)
func answer(_ req: fuse_req_t?, name: UnsafePointer<CChar>?,
            _ body: (OperationsBox, Request, String) throws(Errno) -> Void) {
    answer(req) { box, request throws(Errno) in
        try body(box, request, try string(name))
    }
}

/// A name from the kernel as a `String`; `EINVAL` when it is missing or not UTF-8.
@inline(__always)
func string(_ name: UnsafePointer<CChar>?) throws(Errno) -> String {
    guard let name, let string = String(validatingCString: name) else { throw .EINVAL }
    return string
}

/// Answers a request that succeeded with no data.
@inline(__always)
func replySuccess(_ request: Request) {
    fuse_reply_err(request.raw, 0)
}

/// Sends an entry; if the kernel did not take it (the caller was
/// interrupted), gives back the lookup the filesystem counted for it.
@inline(__always)
func replyEntry(_ request: Request, _ reply: EntryReply, _ box: OperationsBox) {
    var param = reply.entryParam
    if fuse_reply_entry(request.raw, &param) == -ENOENT, param.ino != 0 {
        box.forget(InodeNumber(param.ino), lookups: 1)
    }
}

/// Sends attributes (the answer to `getattr` and `setattr`).
@inline(__always)
func replyAttributes(_ request: Request, _ reply: AttributeReply) {
    var st = reply.attributes.stat
    fuse_reply_attr(request.raw, &st, reply.timeout)
}

/// Answers a `getxattr`/`listxattr`: the length for a size probe (`size` 0),
/// `ERANGE` if the caller's buffer is too small, else the bytes.
@inline(__always)
func replyExtendedAttribute(_ request: Request, _ value: [UInt8], size: Int) throws(Errno) {
    if size == 0 {
        fuse_reply_xattr(request.raw, value.count)
    } else if value.count > size {
        throw .ERANGE
    } else {
        value.withUnsafeBufferPointer { bytes in
            _ = bytes.withMemoryRebound(to: CChar.self) { fuse_reply_buf(request.raw, $0.baseAddress, $0.count) }
        }
    }
}
