import FUSEKit
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `.kvfs/status`: the store's status as a JSON document, made anew for each
/// open, whose size `stat` and `fstat` tell so that a reader that trusts it
/// gets the whole document.
///
/// Two documents made a moment apart differ in length (times, counts), and
/// Foundation's `Data(contentsOf:)` and `FileManager.contents(atPath:)` read
/// exactly the size `fstat` gives after the open, stopping early only at the
/// end of the file: when that size was another, shorter document's, the JSON
/// was cut short (so `kvfs unmount` once found no pid in it). FUSE sends
/// `fstat` without the file handle, so:
/// - a thread that holds the file open is shown the size of a document made
///   then, or of the longest document an open handle serves when that is
///   longer (its own handles padded to it), so a reader that trusts it stops
///   at the end of its own document;
/// - a thread that does not hold it open (a `stat` before the open, as some
///   editors do) is shown the size of a document made then, and that
///   size is what its own open serves if it comes within ten seconds,
///   and what its further `stat`s measure until then (the kernel itself
///   asks again just before the open, to check permissions); otherwise (or
///   if that thread never opens) a fresh one is made at open.
/// A size a stat tells leaves ``slack`` bytes of room, and the open that
/// follows serves the status of its own moment in that size when it fits,
/// so a thread that reads the file again and again reads it anew each time.
/// Whatever size a thread is told, the document it reads (its open
/// handles', or the one its next open takes) is exactly that long: one
/// shorter is padded with spaces before its closing newline (JSON's
/// whitespace), so a reader that trusts the size meets the end of the file
/// where the size says, even when another handle's longer document set it
/// (a handle whose release FUSE has not delivered yet, another thread's).
/// Threads, not processes, because FUSE names the calling thread.
final class StatusFile: ServedFile {
    /// How long a document made for a thread's `stat` waits for that thread's
    /// open: long enough for a loaded machine (a second was not, under the
    /// test suite), and the document is at most that old when read.
    static let statToOpen = Duration.seconds(10)

    private let make: @Sendable () -> [UInt8]
    private let state = Mutex(State())

    private struct State {
        /// Each open handle's document, and the thread that opened it.
        var served: [UInt64: (document: [UInt8], opener: pid_t)] = [:]
        /// The documents made for a thread's `stat`, for its next open.
        var madeForOpen: [pid_t: (document: [UInt8], made: ContinuousClock.Instant)] = [:]

        /// The longest document an open handle serves.
        var longestServedLength: Int { served.values.map(\.document.count).max() ?? 0 }

        /// Keeps `document`, made for `thread`'s `stat`, for its next open,
        /// padded to `length` (``StatusFile/padded(_:to:)``).
        mutating func keepForOpen(_ document: [UInt8], by thread: pid_t, length: Int) {
            forgetStale()
            madeForOpen[thread] = (StatusFile.padded(document, to: length), .now)
        }

        /// Pads the documents of the handles `thread` opened to `length`.
        mutating func padServed(of thread: pid_t, to length: Int) {
            for (handle, entry) in served where entry.opener == thread && entry.document.count < length {
                served[handle]?.document = StatusFile.padded(entry.document, to: length)
            }
        }

        /// Takes the document made for `thread`'s `stat`, if it was made within ``statToOpen``.
        mutating func takeMadeForOpen(by thread: pid_t) -> [UInt8]? {
            forgetStale()
            return madeForOpen.removeValue(forKey: thread)?.document
        }

        /// The length of the document made for `thread`'s earlier `stat`, if
        /// it still waits for that thread's open, padded first to `atLeast`.
        mutating func lengthMadeForOpen(by thread: pid_t, atLeast: Int) -> Int? {
            forgetStale()
            guard let made = madeForOpen[thread] else { return nil }
            madeForOpen[thread]?.document = StatusFile.padded(made.document, to: atLeast)
            return max(made.document.count, atLeast)
        }

        private mutating func forgetStale() {
            let now = ContinuousClock.now
            madeForOpen = madeForOpen.filter { now - $0.value.made < StatusFile.statToOpen }
        }
    }

    /// A status file whose documents `make` makes.
    init(make: @escaping @Sendable () -> [UInt8]) {
        self.make = make
    }

    func open(_ handle: UInt64, opener: pid_t) {
        let kept = state.withLock { $0.takeMadeForOpen(by: opener) }
        let fresh = make()  // without the lock: it takes the store's
        // The size a stat told (the kept document's) holds, and the status is the one of now when it fits
        // in it: a thread that reads the file again and again reads it anew each time (``slack``).
        let document = kept.map { fresh.count <= $0.count ? Self.padded(fresh, to: $0.count) : $0 } ?? fresh
        state.withLock { $0.served[handle] = (document, opener) }
    }

    /// The room a document made for a stat leaves beyond its own length, so that the one made at the
    /// open that follows (a few bytes longer when a count or a time grew) fits in the size the stat told.
    static let slack = 256

    func release(_ handle: UInt64) {
        _ = state.withLock { $0.served.removeValue(forKey: handle) }
    }

    func size(for handle: UInt64?, asker: pid_t) -> Int {
        let known: Int? = state.withLock { state in
            if let handle, let served = state.served[handle] { return served.document.count }
            // A thread that holds it open (its fstat comes without the handle, or its close's release is
            // still on its way) is measured against a fresh document below, not its open one kept for its
            // next open: a thread reading the file in a loop (open, fstat, read, close) got the first
            // document it read again at every open, for as long as it kept reading.
            if state.served.values.contains(where: { $0.opener == asker }) { return nil }
            // The kernel asks again at the open itself (its permission check):
            // the same document, so the open serves what the stat measured.
            return state.lengthMadeForOpen(by: asker, atLeast: state.longestServedLength)
        }
        if let known { return known }
        let document = make()  // without the lock: it takes the store's
        return state.withLock { state in
            // Never less than an open handle's: its reader stops at the end of its own document. The
            // asker's own handles are padded to it, so that its fstat's size is the one it reads.
            let length = max(document.count + Self.slack, state.longestServedLength)
            state.padServed(of: asker, to: length)
            state.keepForOpen(document, by: asker, length: length)
            return length
        }
    }

    /// `document` made `length` bytes long with spaces, before its closing
    /// newline if it has one (a shell's `tail -1` still shows the JSON).
    static func padded(_ document: [UInt8], to length: Int) -> [UInt8] {
        guard document.count < length else { return document }
        let spaces = [UInt8](repeating: 0x20, count: length - document.count)
        guard document.last == 0x0A else { return document + spaces }
        return document.dropLast() + spaces + [0x0A]
    }

    var modified: Timestamp { .now() }

    func read(_ handle: UInt64, offset: Int, size: Int, reply: (UnsafeRawBufferPointer) -> Void) {
        let document = state.withLock { $0.served[handle]?.document } ?? []
        OpenFile.read(document, offset: offset, size: size, reply: reply)
    }
}
