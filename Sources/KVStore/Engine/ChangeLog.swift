import Foundation
import SystemPackage

/// `.kvfs/changes.log`: one JSON line per change that did not come through
/// this device, plus quota refusals. It lives in the state directory, so it
/// survives remounts, and keeps its newest half when it passes its cap. It
/// is private (0600) and never written through a link; a store opened
/// read-only leaves it alone.
final class ChangeLog: @unchecked Sendable {
    let path: String
    let capacity: Int
    private let isWritable: Bool
    private let lock = NSLock()
    private var nextSequence: Int

    init(path: String, capacity: Int = 1 << 20, isWritable: Bool = true) {
        self.path = path
        self.capacity = capacity
        self.isWritable = isWritable
        nextSequence = Self.lastSequence(path) + 1
    }

    /// Appends a line for `change`.
    func append(_ change: StoreChange) {
        guard isWritable else { return }
        lock.withLock {
            let line = Self.line(change, sequence: nextSequence)
            nextSequence += 1
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
        let keys = change.keys.map(jsonString).joined(separator: ",")
        return "{\"seq\":\(sequence),\"time\":\"\(DateText.format(change.time))\",\"reason\":\"\(change.reason.name)\",\"code\":\(change.reason.rawValue),\"keys\":[\(keys)]}\n"
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
        guard let last = lines.last, let data = last.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return 0 }
        return object["seq"] as? Int ?? 0
    }

    private static func jsonString(_ text: String) -> String {
        let data = (try? JSONSerialization.data(withJSONObject: [text], options: [.withoutEscapingSlashes])) ?? Data("[\"\"]".utf8)
        return String(String(decoding: data, as: UTF8.self).dropFirst().dropLast())
    }
}
