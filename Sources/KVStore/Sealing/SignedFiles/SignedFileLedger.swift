import Foundation
import Synchronization

/// What this device took of each signed file (``SignedFile``) of a sealed store, and what it refused.
///
/// A file is known by its device and name (`<device id>/<file>`). Each copy taken raises the highest
/// sequence read from that file; a copy with a lower one is a replay, refused. A refused file reads as
/// the last copy taken of it, so a planted or replayed file never changes what the device sees; it is
/// named in the status until the file is gone or a good copy replaces it, and in the log once. The copies taken are kept in
/// the state directory (`signed-files`), as the signed bytes they are, so that this holds after a
/// restart too: a copy replayed while the device was away is refused, and the last good one stands.
final class SignedFileLedger: Sendable {
    /// A copy taken: its bytes, its sequence, and what it holds (nil until opened, for a copy restored from the state directory).
    private struct Taken {
        var bytes: [UInt8]
        var sequence: UInt64
        var content: [UInt8]?
    }

    private struct State {
        var taken: [String: Taken] = [:]
        var refused: [String: SignedFileRefusal] = [:]
        /// Where refusals are said (the store's log).
        var warn: (@Sendable (String) -> Void)?
        /// Where the copies taken are kept when they change (the state directory's `signed-files`), and the store's id there.
        var keep: (@Sendable ([UInt8]) -> Void)?
        var storeID = ""
    }

    private let state = Mutex(State())

    /// The file in the state directory.
    static let fileName = "signed-files"

    /// The files refused and not replaced since, for the status.
    var refusals: [SignedFileRefusal] { state.withLock { $0.refused.values.sorted { $0.path < $1.path } } }

    /// Takes the copies a state directory file (`bytes`, of the store `storeID`) kept, keeps them there from
    /// now on through `keep`, and says each refusal through `warn`.
    func restore(_ bytes: [UInt8]?, storeID: String, keep: @escaping @Sendable ([UInt8]) -> Void,
                 warn: @escaping @Sendable (String) -> Void) {
        state.withLock { state in
            for (key, taken) in Self.decode(bytes ?? [], storeID: storeID) where taken.sequence > state.taken[key]?.sequence ?? 0 {
                state.taken[key] = taken
            }
            (state.keep, state.storeID, state.warn) = (keep, storeID, warn)
        }
    }

    /// The content of the file `key` (`<device id>/<file>`, at `path`) whose bytes are now `bytes` (nil: it
    /// is not there), opened by `open`; a refusal is noted, for the status and, once, for the log, and reads
    /// as the last copy taken when `orLastTaken`, else as nothing. A file that is gone reads as the last copy
    /// taken when it `standsWhenGone`.
    func take(_ bytes: [UInt8]?, key: String, path: String, orLastTaken: Bool = true, standsWhenGone: Bool = false,
              open: ([UInt8]) -> Result<SignedFile.Opened, SignedFile.Unopened>) -> [UInt8]? {
        let (content, said) = state.withLock { state -> ([UInt8]?, (warn: @Sendable (String) -> Void, refusal: SignedFileRefusal)?) in
            let (content, newRefusal) = Self.take(bytes, key: key, path: path, orLastTaken: orLastTaken, standsWhenGone: standsWhenGone,
                                                  &state, open: open)
            return (content, newRefusal.flatMap { refusal in state.warn.map { ($0, refusal) } })
        }
        said.map { $0.warn("\($0.refusal); it is ignored") }
        return content
    }

    /// ``take(_:key:path:orLastTaken:standsWhenGone:open:)`` under the lock; with the refusal, when it is new.
    private static func take(_ bytes: [UInt8]?, key: String, path: String, orLastTaken: Bool, standsWhenGone: Bool, _ state: inout State,
                             open: ([UInt8]) -> Result<SignedFile.Opened, SignedFile.Unopened>) -> ([UInt8]?, SignedFileRefusal?) {
        guard let bytes else {
            state.refused[key] = nil
            return (standsWhenGone ? content(of: key, &state, open: open) : nil, nil)
        }
        if let taken = state.taken[key], taken.bytes == bytes, let content = content(of: key, &state, open: open) {
            return (content, nil)
        }
        let refusal: SignedFileRefusal
        switch open(bytes) {
        case let .success(opened):
            let highest = state.taken[key]?.sequence ?? 0
            if opened.sequence >= highest {
                state.refused[key] = nil
                take(Taken(bytes: bytes, sequence: opened.sequence, content: opened.content), as: key, &state)
                return (opened.content, nil)
            }
            refusal = SignedFileRefusal(path: path, reason: "replayed: it is numbered \(opened.sequence), and this device has read \(highest) from it")
        case let .failure(unopened) where unopened.isNoMember:
            return (nil, nil)  // a non-member's folder is read for nothing: its records' refusal names it
        case let .failure(unopened):
            refusal = SignedFileRefusal(path: path, reason: unopened.reason)
        }
        let isNew = state.refused[key] != refusal
        state.refused[key] = refusal
        return (orLastTaken ? content(of: key, &state, open: open) : nil, isNew ? refusal : nil)
    }

    /// What the copy taken of `key` holds, opened now if it was restored unopened; nil when none was taken.
    private static func content(of key: String, _ state: inout State, open: ([UInt8]) -> Result<SignedFile.Opened, SignedFile.Unopened>) -> [UInt8]? {
        guard let taken = state.taken[key] else { return nil }
        if let content = taken.content { return content }
        guard case let .success(opened) = open(taken.bytes) else { return nil }
        state.taken[key]?.content = opened.content
        return opened.content
    }

    /// The sequence of the next copy of this device's file `key`: above every one it has written or read
    /// of it, and at least the time in microseconds, so that the device's other processes, which do not
    /// share this ledger, number theirs above it as well.
    func nextSequence(_ key: String, now: Date = Date()) -> UInt64 {
        let time = UInt64(max(0, now.timeIntervalSince1970 * 1e6))
        return state.withLock { max(time, ($0.taken[key]?.sequence ?? 0) + 1) }
    }

    /// Notes this device's own copy of `key`, just written: it is taken, as if read.
    func wrote(_ bytes: [UInt8], content: [UInt8], sequence: UInt64, key: String) {
        state.withLock { state in
            state.refused[key] = nil
            Self.take(Taken(bytes: bytes, sequence: sequence, content: content), as: key, &state)
        }
    }

    private static func take(_ taken: Taken, as key: String, _ state: inout State) {
        state.taken[key] = taken
        state.keep?(encode(state.taken, storeID: state.storeID))
    }

    /// The state directory file's text: the store id on the first line, then a line per file: its key, the
    /// sequence and the bytes (base64) of the copy taken.
    private static func encode(_ taken: [String: Taken], storeID: String) -> [UInt8] {
        let lines = [storeID] + taken.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.sequence) \(Data($0.value.bytes).base64EncodedString())" }
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// The copies a state directory file holds for the store `storeID`; none when it is another store's.
    private static func decode(_ bytes: [UInt8], storeID: String) -> [String: Taken] {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard let first = lines.first, first == storeID, !storeID.isEmpty else { return [:] }
        var taken: [String: Taken] = [:]
        for line in lines.dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let sequence = UInt64(fields[1]), let data = Data(base64Encoded: String(fields[2])) else { continue }
            taken[String(fields[0])] = Taken(bytes: Array(data), sequence: sequence)
        }
        return taken
    }
}
