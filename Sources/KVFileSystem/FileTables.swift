import FUSEKit
import KVStore
#if canImport(Glibc)
import Glibc
#endif

/// What the filesystem keeps between requests: the names the kernel knows,
/// editors' scratch files, open files and folder listings.
///
/// It lives inside ``KeyFileSystem``'s `Mutex`, and its methods are exactly
/// the ones that need that lock: nothing outside the mutex can reach the
/// tables, as LevelDB marks its members `GUARDED_BY(mutex_)`. It asks the
/// store what a name holds, so the store's lock is taken inside this one,
/// never the other way round; the kernel is never told of a change from here
/// (the ``Invalidator`` is called after the lock is let go).
struct FileTables {
    /// The most memory editors' scratch files may take together, in the
    /// folder and in open buffers: past it a write answers ENOSPC, as a full disk does.
    static let maxScratchBytes = 64 << 20

    let store: DeviceStore
    let scratchPatterns: ScratchPatterns
    var nodes = NodeTable()
    var scratch = ScratchFiles()
    var files: [UInt64: OpenFile] = [:]
    var directories: [UInt64: [DirectoryEntry]] = [:]
    private var nextHandle: UInt64 = 1
    /// How many replies have handed the kernel a key's or scratch file's
    /// attributes (getattr, lookup, create): a commit after a write needs no
    /// notification to drop them when none went out since (``OpenFile/attributesGivenAtWrite``).
    private(set) var attributesGiven: UInt64 = 0

    init(store: DeviceStore, scratchPatterns: ScratchPatterns) {
        self.store = store
        self.scratchPatterns = scratchPatterns
    }

    /// Notes that a reply hands the kernel a file's attributes.
    mutating func noteAttributesGiven() {
        attributesGiven &+= 1
    }

    /// Whether the kernel may hold attributes of `file` given after its last write
    /// or ftruncate (which made it drop the size and times it had).
    func attributesGiven(since file: OpenFile) -> Bool {
        attributesGiven != file.attributesGivenAtWrite
    }

    /// A new file or folder handle.
    mutating func newHandle() -> UInt64 {
        defer { nextHandle += 1 }
        return nextHandle
    }

    /// Keeps an open file under a new handle.
    mutating func register(_ file: OpenFile) -> UInt64 {
        let handle = newHandle()
        files[handle] = file
        return handle
    }

    /// Classifies a name: the control folder, a scratch file (existing, or a
    /// new name matching the patterns that is no key), or a key.
    func classify(_ name: String) throws(Errno) -> RootName {
        if name == FileName.controlFolder { return .controlFolder }
        if scratch[name] != nil { return .scratch }
        if scratchPatterns.matches(name), FileName.decode(name).map({ store.entry(forKey: $0) == nil }) ?? true {
            return .scratch
        }
        return .key(try KeyFileSystem.key(for: name))
    }

    /// The content a key or scratch file of that name holds now, if any.
    func content(of name: String) -> [UInt8]? {
        scratch[name]?.content ?? FileName.decode(name).flatMap(store.entry(forKey:))?.content
    }

    /// EDQUOT as soon as a key's buffer would pass a limit once committed;
    /// ENOSPC as soon as scratch files would take more than their share of
    /// memory. `handle` is the buffer growing to `size`, if any.
    func checkSize(_ size: Int, of inode: InodeNumber, handle: UInt64? = nil) throws(Errno) {
        guard let name = nodes.name(of: inode) else { return }
        if scratch[name] != nil {
            if scratchBytes(besides: handle) + size > Self.maxScratchBytes { throw .ENOSPC }
            return
        }
        guard let key = FileName.decode(name) else { return }
        do throws(KVStoreError) { try store.checkQuota(forKey: key, size: size) } catch { throw Errno(error) }
    }

    /// The memory scratch files take: their stored content and every open
    /// writable buffer of one, but `handle`'s.
    private func scratchBytes(besides handle: UInt64?) -> Int {
        let stored = scratch.bytes
        let buffers = files.lazy.filter { $0.key != handle && $0.value.writable }
            .filter { self.nodes.name(of: $0.value.inode).map { self.scratch[$0] != nil } ?? true }
            .reduce(0) { $0 + $1.value.content.count }
        return stored + buffers
    }

    /// Whether a file not in the store has a writer (created, not yet committed).
    func hasWriter(_ inode: InodeNumber) -> Bool {
        files.values.contains { $0.inode == inode && $0.writable }
    }

    /// What a key being created, not yet committed, shows to `process`: its
    /// own buffer's size to the process writing it, else empty.
    func pendingSize(of inode: InodeNumber, for process: pid_t) -> Int? {
        let writers = files.values.filter { $0.inode == inode && $0.writable }
        guard !writers.isEmpty else { return nil }
        return writers.last { $0.opener == process && process != 0 }?.content.count ?? 0
    }

    /// How long the kernel may keep the attributes of a key or scratch file:
    /// ``KeyFileSystem/cacheTimeout``, but not while the file is open for
    /// writing. A commit changes its size and mtime, and the kernel drops its
    /// copy only at the writer's own writes: attributes fetched between the
    /// last write and the close (a `stat` meanwhile) would show the old size for an hour.
    func attributeTimeout(of inode: InodeNumber) -> Double {
        hasWriter(inode) ? 0 : KeyFileSystem.cacheTimeout
    }
}
