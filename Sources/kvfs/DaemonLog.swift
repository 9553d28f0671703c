import Foundation
import KVStore
import Logging
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// kvfs's one swift-log handler. Every line has a level and a subsystem
/// (the logger's label, e.g. `kvfs.store`) and goes to file descriptor 2:
/// - under systemd (stderr is the journal's stream, `$JOURNAL_STREAM`), as
///   `<4>kvfs.store: message`, the `<N>` priority prefix journald reads (it
///   adds the timestamp itself);
/// - otherwise as `2026-11-22T10:15:02.345Z warning kvfs.store: message`,
///   to the terminal (`--foreground`, the CLI's warnings) or, for a daemon,
///   to `daemon.log` in its state directory, rotated past 1 MiB to `daemon.log.1`.
enum DaemonLog {
    /// The command line's own logger.
    static let logger = Logger(label: "kvfs.control")

    private static let sink = LogSink()

    /// Makes every logger write through ``LogSink``; called once, first thing.
    static func bootstrap() {
        LoggingSystem.bootstrap { label in LineLogHandler(label: label, sink: sink) }
    }

    /// Sends everything, from now on, to `path` (a daemon's `daemon.log`),
    /// standard error included: a crash's last words land there too.
    static func writeToFile(_ path: String) {
        sink.useFile(path)
    }

    /// The most detailed level that is logged: `.debug` for `kvfs mount -d`.
    static func setLevel(_ level: Logger.Level) {
        sink.level.withLock { $0 = level }
    }

    /// Whether standard error is the journal's stream, as systemd sets
    /// `$JOURNAL_STREAM` ("DEVICE:INODE") for a service's output.
    static var standardErrorIsJournal: Bool {
        guard let stream = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] else { return false }
        var info = stat()
        guard fstat(2, &info) == 0 else { return false }
        return stream == "\(info.st_dev):\(info.st_ino)"
    }
}

/// Where the lines go; shared by every handler.
final class LogSink: Sendable {
    /// Past this size `daemon.log` becomes `daemon.log.1`.
    static let rotationSize = 1 << 20

    let level = Mutex(Logger.Level.info)
    /// The log file, when writing to one; guarded so that rotation and writes do not interleave.
    private let file = Mutex<String?>(nil)
    private let journal = DaemonLog.standardErrorIsJournal

    func useFile(_ path: String) {
        file.withLock { current in
            current = path
            Self.reopen(path)
        }
    }

    /// Writes one line: a newline or escape sequence in `text` (a path, a
    /// key, a name from another device) is spelled out, so it can neither
    /// forge a line nor reach the terminal of whoever reads the log.
    func write(_ level: Logger.Level, _ label: String, _ message: String) {
        var trimmed = Substring(message)
        while trimmed.last?.isNewline == true { trimmed.removeLast() }
        let text = String(trimmed).controlCharactersSpelledOut
        let line: String
        if journal {
            line = "<\(Self.syslogPriority(level))>\(label): \(text)\n"
        } else {
            line = "\(Self.now()) \(level) \(label): \(text)\n"
        }
        file.withLock { path in
            if let path {
                var info = stat()
                if fstat(2, &info) == 0 && info.st_size > Self.rotationSize {
                    rename(path, path + ".1")
                    Self.reopen(path)
                }
            }
            let bytes = Array(line.utf8)
            _ = bytes.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
        }
    }

    /// The time as `2026-11-22T10:15:02.345Z`, made with the C library:
    /// Foundation's ISO 8601 format style loads ICU's calendar data, a megabyte of the daemon's memory.
    private static func now() -> String {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        var parts = tm()
        gmtime_r(&time.tv_sec, &parts)
        var text = [UInt8](repeating: 0, count: 24)
        let length = text.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { strftime($0.baseAddress, $0.count, "%Y-%m-%dT%H:%M:%S", &parts) }
        }
        return String(decoding: text[..<length], as: UTF8.self) + "." + String(1000 + time.tv_nsec / 1_000_000).dropFirst() + "Z"
    }

    /// Opens `path` for appending (owner-only, never through a link) as standard error.
    private static func reopen(_ path: String) {
        guard let fd = try? PrivateFile.openForAppending(path) else { return }
        dup2(fd, 2)
        close(fd)
    }

    /// syslog's priorities, which journald reads from a `<N>` prefix.
    private static func syslogPriority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}

/// The handler: the message, then its metadata as `key=value`.
struct LineLogHandler: LogHandler {
    let label: String
    let sink: LogSink
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?

    var logLevel: Logger.Level {
        get { sink.level.withLock { $0 } }
        set { sink.level.withLock { $0 = newValue } }
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let all = metadata.merging(event.metadata ?? [:]) { $1 }
        let suffix = all.isEmpty ? "" : " " + all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        sink.write(event.level, label, "\(event.message)\(suffix)")
    }
}
