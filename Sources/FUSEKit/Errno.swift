import Glibc

/// A POSIX error number, the only error a ``FileSystemOperations`` method can throw.
///
/// FUSE answers every failed request with an errno; throwing one of these
/// from an operation sends it to the kernel, which hands it to the caller of
/// the system call. Methods use typed throws (`throws(Errno)`), so throwing
/// allocates nothing.
///
/// ```swift
/// guard let file = files[name] else { throw .ENOENT }
/// ```
@frozen
public struct Errno: RawRepresentable, Error, Hashable, Sendable, CustomStringConvertible {
    /// The positive errno value, as in `<errno.h>`.
    public var rawValue: Int32

    /// Wraps a positive errno value.
    @inlinable
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Wraps a positive errno value.
    @inlinable
    public init(_ rawValue: Int32) { self.rawValue = rawValue }

    /// The calling thread's current `errno`.
    public static var current: Errno { Errno(errno) }

    /// The system's message for this error, e.g. "No such file or directory".
    public var description: String { String(cString: strerror(rawValue)) }
}

extension Errno {
    /// Operation not permitted.
    public static let EPERM = Errno(Glibc.EPERM)
    /// No such file or directory.
    public static let ENOENT = Errno(Glibc.ENOENT)
    /// Interrupted system call.
    public static let EINTR = Errno(Glibc.EINTR)
    /// Input/output error.
    public static let EIO = Errno(Glibc.EIO)
    /// No such device or address.
    public static let ENXIO = Errno(Glibc.ENXIO)
    /// Argument list too long.
    public static let E2BIG = Errno(Glibc.E2BIG)
    /// Bad file descriptor (or file handle).
    public static let EBADF = Errno(Glibc.EBADF)
    /// Resource temporarily unavailable.
    public static let EAGAIN = Errno(Glibc.EAGAIN)
    /// Cannot allocate memory.
    public static let ENOMEM = Errno(Glibc.ENOMEM)
    /// Permission denied.
    public static let EACCES = Errno(Glibc.EACCES)
    /// Bad address.
    public static let EFAULT = Errno(Glibc.EFAULT)
    /// Device or resource busy.
    public static let EBUSY = Errno(Glibc.EBUSY)
    /// File exists.
    public static let EEXIST = Errno(Glibc.EEXIST)
    /// Invalid cross-device link (e.g. rename between two mounts).
    public static let EXDEV = Errno(Glibc.EXDEV)
    /// No such device.
    public static let ENODEV = Errno(Glibc.ENODEV)
    /// Not a directory.
    public static let ENOTDIR = Errno(Glibc.ENOTDIR)
    /// Is a directory.
    public static let EISDIR = Errno(Glibc.EISDIR)
    /// Invalid argument.
    public static let EINVAL = Errno(Glibc.EINVAL)
    /// Too many open files.
    public static let EMFILE = Errno(Glibc.EMFILE)
    /// Inappropriate ioctl for device.
    public static let ENOTTY = Errno(Glibc.ENOTTY)
    /// File too large.
    public static let EFBIG = Errno(Glibc.EFBIG)
    /// No space left on device.
    public static let ENOSPC = Errno(Glibc.ENOSPC)
    /// Read-only file system.
    public static let EROFS = Errno(Glibc.EROFS)
    /// Too many links.
    public static let EMLINK = Errno(Glibc.EMLINK)
    /// Numerical result out of range; for xattrs: the caller's buffer is too small.
    public static let ERANGE = Errno(Glibc.ERANGE)
    /// File name too long.
    public static let ENAMETOOLONG = Errno(Glibc.ENAMETOOLONG)
    /// Function not implemented. For some operations the kernel remembers this
    /// answer and stops sending them (see ``FileSystemOperations``).
    public static let ENOSYS = Errno(Glibc.ENOSYS)
    /// Directory not empty.
    public static let ENOTEMPTY = Errno(Glibc.ENOTEMPTY)
    /// Too many levels of symbolic links.
    public static let ELOOP = Errno(Glibc.ELOOP)
    /// No data available; for xattrs: no attribute of that name.
    public static let ENODATA = Errno(Glibc.ENODATA)
    /// Value too large for defined data type.
    public static let EOVERFLOW = Errno(Glibc.EOVERFLOW)
    /// Invalid or incomplete multibyte or wide character.
    public static let EILSEQ = Errno(Glibc.EILSEQ)
    /// Operation not supported (the same value as `EOPNOTSUPP` on Linux).
    public static let ENOTSUP = Errno(Glibc.ENOTSUP)
    /// Operation not supported on transport endpoint; equal to ``ENOTSUP`` on Linux.
    public static let EOPNOTSUPP = Errno(Glibc.EOPNOTSUPP)
    /// Transport endpoint is not connected (what a dead FUSE mount answers).
    public static let ENOTCONN = Errno(Glibc.ENOTCONN)
    /// Connection timed out.
    public static let ETIMEDOUT = Errno(Glibc.ETIMEDOUT)
    /// Stale file handle.
    public static let ESTALE = Errno(Glibc.ESTALE)
    /// Disk quota exceeded.
    public static let EDQUOT = Errno(Glibc.EDQUOT)
}
