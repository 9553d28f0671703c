import FUSEKit
import Foundation
import KVStore
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// `.kvfs/changes.log`: the change log as the mount serves it, so that
/// `tail -f`, `tail -F` and any reader that reads on at its offset never see
/// a line twice, nor lose one while they follow.
///
/// The log on disk is cut back to its newest half when it passes its cap:
/// the file shrinks. GNU tail follows a FUSE file by polling (it counts FUSE
/// as a remote file system, so no inotify): each second it compares
/// `fstat`'s size with what it has read, and when the size is smaller it says
/// "file truncated", seeks to 0 and prints the whole file again, half a
/// megabyte of old lines at each cut (logrotate's copytruncate has the same
/// effect on a follower). Nor can the size be given per reader: FUSE sends
/// `fstat` without the file handle (see ``ServedFile``).
///
/// So here the file never shrinks under a reader:
/// - Offsets are absolute: bytes since the mount began serving the log. Each
///   open handle reads from where the file began when it opened (its
///   `origin`), so its view only grows, and its offsets never move.
/// - While anyone has the file open, it is not cut back, up to
///   ``openCapacity``: every reader sees one file, and `stat` its size.
/// - Past that the window new readers see moves on, yet each open handle
///   keeps its origin, and `stat` counts from the oldest open handle's: the
///   size is then more than a new reader reads, never less than any reader
///   has read. The bytes an open reader has not read yet are kept within
///   ``openCapacity``; a reader further behind goes on at the oldest line
///   kept, and the lines it lost show as a gap in `seq`.
///
/// The lines come from the log on disk through a ``ChangeLogFollower``, by
/// their `seq`, so each is added once whoever writes and cuts the log.
/// Offsets start again at a remount: a `tail -F` that outlives the mount
/// reads the new file from its start.
final class ChangeLogFile: ServedFile {
    /// How far the file may grow while anyone has it open: four times the log's cap.
    let openCapacity: Int
    /// The file's modification time until the log on disk has one.
    private let created = Date()
    private let state: Mutex<State>

    /// A log served from `path`, cut back past `capacity` as the log on disk is.
    init(path: String, capacity: Int) {
        openCapacity = 4 * capacity
        state = Mutex(State(follower: ChangeLogFollower(path: path), capacity: capacity, openCapacity: openCapacity))
    }

    func open(_ handle: UInt64, opener: pid_t) {
        state.withLock { state in
            state.catchUp()
            state.readers[handle] = Reader(origin: state.windowStart, position: state.windowStart)
        }
    }

    func release(_ handle: UInt64) {
        state.withLock { state in
            state.readers[handle] = nil
            state.trim()
        }
    }

    func size(for handle: UInt64?, asker: pid_t) -> Int {
        state.withLock { state in
            state.catchUp()
            if let handle, let reader = state.readers[handle] { return state.end - reader.origin }
            return state.end - state.readers.values.reduce(state.windowStart) { min($0, $1.origin) }
        }
    }

    var modified: Timestamp {
        let date = state.withLock { $0.follower.modified } ?? created
        let nanoseconds = Int((date.timeIntervalSince1970 * 1e9).rounded())
        return Timestamp(seconds: nanoseconds / 1_000_000_000, nanoseconds: nanoseconds % 1_000_000_000)
    }

    func read(_ handle: UInt64, offset: Int, size: Int, reply: (UnsafeRawBufferPointer) -> Void) {
        let bytes: [UInt8] = state.withLock { state in
            state.catchUp()
            guard var reader = state.readers[handle] else { return [] }
            if reader.origin + offset < state.start {
                // What it had not read went past the cap: it reads on at the oldest line kept.
                reader.origin = state.start - offset
            }
            let from = min(reader.origin + offset, state.end)
            let to = min(from + size, state.end)
            reader.position = to
            state.readers[handle] = reader
            return Array(state.kept[(from - state.start)..<(to - state.start)])
        }
        bytes.withUnsafeBytes(reply)
    }

    /// An open handle: the absolute offset of its byte 0, and where its last read ended.
    struct Reader {
        var origin: Int
        var position: Int
    }

    private struct State {
        let follower: ChangeLogFollower
        let capacity: Int
        let openCapacity: Int
        /// The lines kept, `kept[0]` at absolute offset `start`.
        var kept: [UInt8] = []
        var start = 0
        /// Where a new handle begins: the window `stat` shows when nobody has the file open.
        var windowStart = 0
        var readers: [UInt64: Reader] = [:]

        var end: Int { start + kept.count }

        /// Adds the lines appended to the log on disk since the last look.
        mutating func catchUp() {
            let missed = follower.missed
            let lines = follower.newLines()
            guard !lines.isEmpty else { return }
            // Lines were cut from the log before they came here: new readers begin after the gap.
            if follower.missed > missed { windowStart = end }
            kept += lines
            trim()
        }

        /// Moves the window on past its cap (``openCapacity`` while anyone has
        /// the file open), to its newest half-cap of whole lines, and lets go
        /// of the lines neither the window nor an open handle still has to read.
        mutating func trim() {
            if end - windowStart > (readers.isEmpty ? capacity : openCapacity) {
                windowStart = lineStart(from: end - capacity / 2)
            }
            let unread = readers.values.reduce(windowStart) { min($0, $1.position) }
            var first = lineStart(before: max(unread, start))
            if end - first > openCapacity { first = lineStart(from: end - openCapacity) }
            guard first > start else { return }
            kept.removeFirst(first - start)
            start = first
        }

        /// The first line start at or after absolute offset `offset`.
        private func lineStart(from offset: Int) -> Int {
            guard offset > start else { return start }
            guard let newline = kept[(offset - start - 1)...].firstIndex(of: 0x0A) else { return end }
            return start + newline + 1
        }

        /// The last line start at or before absolute offset `offset`.
        private func lineStart(before offset: Int) -> Int {
            guard offset > start else { return start }
            guard let newline = kept[..<(offset - start)].lastIndex(of: 0x0A) else { return start }
            return start + newline + 1
        }
    }
}
