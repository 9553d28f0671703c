import LinuxSystem
import SystemPackage

/// A journal segment as the writer appends to it: LevelDB's `WritableFile`.
///
/// The writer reaches a segment's bytes only through this, so a test can put
/// in a file that fails as a disk does (full, an I/O error, a write cut
/// short) without root or a small filesystem. A file is closed when the last
/// of its holders lets go of it (the writer, a compaction, a sync point), so
/// one of them may fsync it while another has moved on to the next segment.
protocol JournalFile: AnyObject, Sendable {
    /// Appends all of `bytes`. A failure may leave some of them written.
    func append(_ bytes: [UInt8]) throws(SystemCallError)
    /// Cuts the file to its first `size` bytes.
    func truncate(to size: Int) throws(SystemCallError)
    /// Makes what was appended durable on disk.
    func sync() throws(SystemCallError)
    /// The file's length in bytes.
    func size() throws(SystemCallError) -> Int
}

/// Opens the journal's segments: LevelDB's `Env`, reduced to the one call the writer makes.
protocol JournalFileOpener: Sendable {
    /// `name` in `folder` (a regular file, never through a link), opened for
    /// appending and created 0600 when missing.
    func openForAppending(_ name: String, in folder: Folder) throws(KVStoreError) -> any JournalFile
}

/// Segments on disk, through swift-system's `FileDescriptor`.
struct DiskJournalFiles: JournalFileOpener {
    func openForAppending(_ name: String, in folder: Folder) throws(KVStoreError) -> any JournalFile {
        DescriptorFile(try folder.openForAppending(name))
    }
}

/// A segment open for appending (`O_APPEND`): each append is one `write(2)`
/// in the common case, so readers see a whole record or none of it.
final class DescriptorFile: JournalFile, @unchecked Sendable {
    // @unchecked: the descriptor is an integer the kernel answers for; each call on it is safe from any thread.
    private let descriptor: FileDescriptor

    init(_ descriptor: FileDescriptor) { self.descriptor = descriptor }

    deinit { try? descriptor.close() }

    func append(_ bytes: [UInt8]) throws(SystemCallError) {
        try descriptor.write(all: bytes)
    }

    func truncate(to size: Int) throws(SystemCallError) {
        try SystemCallError.naming("ftruncate") { try descriptor.resize(to: Int64(size)) }
    }

    func sync() throws(SystemCallError) { try descriptor.synchronize() }

    func size() throws(SystemCallError) -> Int {
        Int(try SystemCallError.naming("lseek") { try descriptor.seek(offset: 0, from: .end) })
    }
}
