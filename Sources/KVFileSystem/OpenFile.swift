import FUSEKit
#if canImport(Glibc)
import Glibc
#endif

/// An open file: the private buffer a writer works on, committed on flush,
/// fsync or release; or, for a reader, the content as it was at open.
final class OpenFile {
    let inode: InodeNumber
    /// The process that opened it (0 when unknown): a new key's writer, and
    /// where its descriptors are (see ``ProcessFiles``).
    let opener: pid_t
    let writable: Bool
    let append: Bool
    var content: [UInt8]
    /// Whether the buffer holds writes (or an O_TRUNC) not yet committed.
    var dirty: Bool
    /// Whether write() or ftruncate() changed the buffer since it was last
    /// committed. A buffer with only open's O_TRUNC or O_CREAT to commit is
    /// committed at the last close in the closing process (see
    /// ``KeyFileSystem/flush(_:handle:lockOwner:request:)``), else at release
    /// or at a rename or unlink of the file.
    var written = false
    /// The error that refused one of this handle's writes (EDQUOT): what is
    /// left in the buffer is not what the writer meant, so it is never
    /// committed, and flush reports the error again.
    var refusal: Errno?
    /// ``FileTables/attributesGiven`` at this handle's last write or ftruncate.
    var attributesGivenAtWrite: UInt64 = 0

    /// - Parameters:
    ///   - content: the file's content now.
    ///   - isNew: whether the open creates the file, so closing it commits even without a write.
    init(inode: InodeNumber, flags: OpenFlags, content: [UInt8], isNew: Bool = false, opener: pid_t = 0) {
        self.inode = inode
        self.opener = opener
        writable = flags.isWritable
        append = flags.contains(.append)
        let truncated = flags.contains(.truncate) && writable
        self.content = truncated ? [] : content
        dirty = truncated || isNew
    }

    /// Writes at `offset` (at the end for O_APPEND), zero-filling a gap.
    /// `bytes` is only read during the call (`sending`: libfuse's buffer can
    /// be handed in from inside the filesystem's `Mutex`, which this file is in).
    func write(_ bytes: sending UnsafeRawBufferPointer, at offset: Int) {
        let start = append ? content.count : offset
        if start > content.count { content += [UInt8](repeating: 0, count: start - content.count) }
        let overlap = min(bytes.count, content.count - start)
        content.replaceSubrange(start..<start + overlap, with: bytes[0..<overlap])
        content += bytes[overlap...]
        dirty = true
        written = true
    }

    /// Sets the buffer's length (ftruncate).
    func resize(to size: Int) {
        if size < content.count {
            content.removeSubrange(size...)
        } else {
            content += [UInt8](repeating: 0, count: size - content.count)
        }
        dirty = true
        written = true
    }

    /// Hands out up to `size` bytes of `content` from `offset`.
    static func read(_ content: [UInt8], offset: Int, size: Int, reply: (UnsafeRawBufferPointer) -> Void) {
        content.withUnsafeBytes { all in
            let start = min(max(offset, 0), all.count)
            reply(UnsafeRawBufferPointer(rebasing: all[start..<min(all.count, start + size)]))
        }
    }
}
