import Foundation
import Synchronization
import SystemPackage

/// `.kvfs/changes.log`: one JSON line per change that did not come through
/// this device, plus quota refusals and conflicts (``ConflictReport``). It
/// lives in the state directory, so it survives remounts, and keeps its
/// newest half when it passes its cap (a new file renamed over the old one:
/// ``ChangeLogFollower`` reads on across the cut without handing out a line
/// twice). It is private (0600) and never written through a link; a store
/// opened read-only leaves it alone.
final class ChangeLog: Sendable {
    let path: String
    let capacity: Int
    private let isWritable: Bool
    /// The next line's sequence number; held while a line is appended, so
    /// that lines go one at a time. Nil while another process of the device
    /// writes the log (``setWriting(_:)``).
    private let nextSequence: Mutex<Int?>

    init(path: String, capacity: Int = 1 << 20, isWritable: Bool = true) {
        self.path = path
        self.capacity = capacity
        self.isWritable = isWritable
        nextSequence = Mutex(Self.lastSequence(path) + 1)
    }

    /// Whether this process writes the log: one process of a device does,
    /// its primary. Taking it up, it reads where the log's numbering got to;
    /// letting go, it returns once its last line is written.
    func setWriting(_ writing: Bool) {
        nextSequence.withLock { nextSequence in
            if !writing { nextSequence = nil } else if nextSequence == nil { nextSequence = Self.lastSequence(path) + 1 }
        }
    }

    /// Appends a line for `change`.
    func append(_ change: StoreChange) {
        appendLine { sequence in Self.line(change, sequence: sequence) }
    }

    /// Appends the line of a conflict.
    func append(_ conflict: ConflictReport) {
        appendLine { sequence in
            var line = Line(seq: sequence, time: DateText.format(Date()), reason: ConflictReport.reason,
                            code: ChangeReason.serverChange.rawValue, keys: [conflict.key])
            (line.lost, line.winner, line.restore) = (conflict.lost, conflict.winner, conflict.restore)
            return line.text + "\n"
        }
    }

    /// Appends the line `make` writes with the next sequence number.
    private func appendLine(_ make: (Int) -> String) {
        guard isWritable else { return }
        nextSequence.withLock { nextSequence in
            guard let sequence = nextSequence else { return }
            let line = make(sequence)
            nextSequence = sequence + 1
            guard let file = try? Files.openForAppending(path) else { return }
            _ = try? file.writeAll(Array(line.utf8))
            let size = (try? file.seek(offset: 0, from: .end)) ?? 0
            try? file.close()
            if size > capacity { trim() }
        }
    }

    /// The log's bytes as they are now.
    func contents() -> [UInt8] { ((try? Files.read(path)) ?? nil) ?? [] }

    static func line(_ change: StoreChange, sequence: Int) -> String {
        Line(seq: sequence, time: DateText.format(change.time), reason: change.reason.name, code: change.reason.rawValue,
             keys: change.keys).text + "\n"
    }

    /// The `seq` a line of the log begins with, without decoding the rest: the
    /// followers read it from every line they skip or hand out.
    static func sequence(of line: some Collection<UInt8>) -> Int? {
        let prefix = Array(#"{"seq":"#.utf8)
        guard line.starts(with: prefix) else { return nil }
        let digits = line.dropFirst(prefix.count).prefix { (0x30...0x39).contains($0) }
        guard !digits.isEmpty, digits.count < 19 else { return nil }
        return digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
    }

    /// One line: `{"seq":41,"time":"2026-11-22T10:15:02.345Z","reason":"ServerChange","code":0,"keys":["theme","volume"]}`;
    /// a conflict's line goes on with the two versions and the restore command.
    struct Line: Codable {
        var seq: Int
        var time: String
        var reason: String
        var code: Int
        var keys: [StoreKey]
        var lost: ConflictReport.Side?
        var winner: ConflictReport.Side?
        var restore: String?

        /// The line's JSON, its fields in the order above, which docs/machines.md shows and readers
        /// see: each value is JSON-encoded, but JSONEncoder orders an object's keys by hash (or
        /// sorted), never as written.
        var text: String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.withoutEscapingSlashes]
            func json(_ value: some Encodable) -> String {
                String(decoding: (try? encoder.encode(value)) ?? Data("null".utf8), as: UTF8.self)
            }
            var conflict = ""
            if let lost, let winner, let restore {
                conflict = ",\"lost\":\(side(lost)),\"winner\":\(side(winner)),\"restore\":\(json(restore))"
            }
            func side(_ side: ConflictReport.Side) -> String {
                "{\"device\":\(json(side.device)),\"id\":\(json(side.id)),\"time\":\(json(side.time))}"
            }
            return "{\"seq\":\(json(seq)),\"time\":\(json(time)),\"reason\":\(json(reason)),\"code\":\(json(code)),\"keys\":\(json(keys))\(conflict)}"
        }
    }

    private func trim() {
        let bytes = contents()
        let half = bytes.count - capacity / 2
        guard let cut = bytes[half...].firstIndex(of: 0x0A) else { return }
        try? Files.writeAtomically(path, Array(bytes[(cut + 1)...]))
    }

    private static func lastSequence(_ path: String) -> Int {
        guard let bytes = try? Files.read(path) else { return 0 }
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        return lines.last.flatMap { JSONDocument.decoded(Line.self, from: $0.utf8) }?.seq ?? 0
    }
}
