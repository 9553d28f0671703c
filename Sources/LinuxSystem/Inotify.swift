import SystemPackage
#if canImport(Glibc)
import Glibc
#endif

/// An inotify instance (`inotify_init1(2)`), close-on-exec and
/// non-blocking: the kernel queues an event for each change in a watched
/// folder, and the descriptor is readable (for ``Poll``) while one is queued.
public final class Inotify: Sendable {
    /// What a watch reports, and what an event says happened.
    public struct Events: OptionSet, Hashable, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }

        /// A file was written (`IN_MODIFY`).
        public static let modify = Events(rawValue: UInt32(IN_MODIFY))
        /// A file open for writing was closed (`IN_CLOSE_WRITE`).
        public static let closeWrite = Events(rawValue: UInt32(IN_CLOSE_WRITE))
        /// A name was moved out of the folder (`IN_MOVED_FROM`).
        public static let movedFrom = Events(rawValue: UInt32(IN_MOVED_FROM))
        /// A name was moved into the folder (`IN_MOVED_TO`).
        public static let movedTo = Events(rawValue: UInt32(IN_MOVED_TO))
        /// A name was created (`IN_CREATE`).
        public static let create = Events(rawValue: UInt32(IN_CREATE))
        /// A name was removed (`IN_DELETE`).
        public static let delete = Events(rawValue: UInt32(IN_DELETE))
        /// Only for ``Inotify/watch(_:for:)``: the path's last name is not followed if it is a link (`IN_DONT_FOLLOW`).
        public static let dontFollow = Events(rawValue: UInt32(IN_DONT_FOLLOW))
        /// Only for ``Inotify/watch(_:for:)``: the path must be a folder (`IN_ONLYDIR`).
        public static let onlyDirectory = Events(rawValue: UInt32(IN_ONLYDIR))
        /// In an event: the queue overflowed and events were lost (`IN_Q_OVERFLOW`, watch -1).
        public static let queueOverflow = Events(rawValue: UInt32(IN_Q_OVERFLOW))
    }

    /// One watch, as ``watch(_:for:)`` returned it and events name it.
    public struct Watch: Hashable, Sendable {
        /// The kernel's watch descriptor; -1 for events of no watch (an overflow).
        public let rawValue: Int32
        public init(rawValue: Int32) { self.rawValue = rawValue }
    }

    /// One queued event.
    public struct Event: Hashable, Sendable {
        /// The watch it is of.
        public var watch: Watch
        /// What happened.
        public var events: Events
        /// The name in the watched folder it is about, if any.
        public var name: String?
    }

    /// The descriptor: for ``Poll``.
    public let descriptor: FileDescriptor

    /// A new instance with no watch.
    ///
    /// - Throws: `EMFILE` most often: the user already has
    ///   `fs.inotify.max_user_instances` of them (128 by default).
    public init() throws(SystemCallError) {
        descriptor = FileDescriptor(rawValue: try systemCall("inotify_init1") { inotify_init1(Int32(IN_CLOEXEC | IN_NONBLOCK)) })
    }

    deinit { try? descriptor.close() }

    /// Watches `path` for `events`; watching a file or folder watched
    /// already changes what it reports and returns the same watch.
    ///
    /// - Throws: `ENOENT` for no such path, `ENOTDIR` with
    ///   ``Events/onlyDirectory`` for a file, `ENOSPC` past `fs.inotify.max_user_watches`.
    @discardableResult
    public func watch(_ path: String, for events: Events) throws(SystemCallError) -> Watch {
        Watch(rawValue: try systemCall("inotify_add_watch", path) { inotify_add_watch(descriptor.rawValue, path, events.rawValue) })
    }

    /// The events queued now, as many as fit in `buffer` (one read); none
    /// when the queue is empty. Call again until it returns none to drain it.
    public func read(into buffer: inout [UInt8]) throws(SystemCallError) -> [Event] {
        let count: Int
        let result = systemCallResult("read") { buffer.withUnsafeMutableBytes { Glibc.read(descriptor.rawValue, $0.baseAddress, $0.count) } }
        switch result {
        case .success(let read): count = read
        case .failure(let error) where error.errno == .wouldBlock: return []
        case .failure(let error): throw error
        }
        var events: [Event] = []
        var offset = 0
        // Each event: wd (Int32), mask, cookie, len (UInt32 each), then `len` bytes of name, NUL-padded.
        while offset + 16 <= count {
            let (watch, mask, length) = buffer.withUnsafeBytes { bytes in
                (bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                 bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                 Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)))
            }
            let name = buffer[(offset + 16)..<min(count, offset + 16 + length)].prefix { $0 != 0 }
            events.append(Event(watch: Watch(rawValue: watch), events: Events(rawValue: mask),
                                name: name.isEmpty ? nil : String(decoding: name, as: UTF8.self)))
            offset += 16 + length
        }
        return events
    }
}
