import ArgumentParser
import Foundation
import KVStore

/// `kvfs history KEY [--json]`: a key's versions within the store's retention, oldest first.
struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history", abstract: "List a key's versions, oldest first.",
        discussion: """
            One line per version within the store's retention (`kvfs retention`), a removed key's included: \
            VERSION (the UTC time to the millisecond and the writing device, as .kvfs/history/KEY/ names it and \
            `kvfs restore` takes it), KIND (value or removal), SIZE, the value in short (its first 40 \
            characters, or <N bytes of data>, <array of N>, <dictionary of N>), `current` on the key's current \
            version with `read by NAME, ...` (the devices that have read it), and `lost` on a value another \
            device's concurrent write replaced. --json gives version, time, device, deviceID, kind, size, value, \
            current, lost and deliveredTo. A key with no version is `no such key`, status 1.
            """)
    @Argument(help: "The key.") var key: String
    @Flag(help: "Print the versions as a JSON array.") var json = false
    @OptionGroup var store: StoreOptions

    func run() throws {
        let lines = try JSONDecoder().decode([HistoryLine].self, from: StoreAccess.perform(.history(key: StoreKey(key)), store))
        print(json ? StoreStatus.json(lines) : Self.table(lines), terminator: "")
    }

    /// `VERSION  KIND  SIZE  VALUE`, and `current` (or `lost`) after the value.
    static func table(_ lines: [HistoryLine]) -> String {
        let rows = [["VERSION", "KIND", "SIZE", "VALUE", ""]] + lines.map { line in
            let marks = (line.current ? ["current"] : []) + (line.lost ? ["lost"] : [])
                + (line.deliveredTo.map { ["read by \($0.joined(separator: ", "))"] } ?? [])
            return [line.version, line.kind, String(line.size), line.value, marks.joined(separator: ", ")]
        }
        return TextTable.format(rows)
    }
}

/// `kvfs restore KEY VERSION`: writes an old version as the key's newest.
struct RestoreCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "restore", abstract: "Write one of a key's versions again, as its new version.",
        discussion: """
            The version keeps its value; it is written now, by this device, and syncs like any write (the \
            versions between stay in the history). Restoring a removal removes the key. Prints `KEY: restored \
            VERSION`; a version the history no longer holds is one line, status 1.
            """)
    @Argument(help: "The key.") var key: String
    @Argument(help: "The version, as `kvfs history KEY` names it (2026-11-26T11:05:43.123Z@laptop).") var version: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        FileHandle.standardOutput.write(try StoreAccess.perform(.restore(key: StoreKey(key), version: version), store))
    }
}

/// `kvfs undelete KEY`: brings a removed key back with the value it had.
struct UndeleteCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "undelete", abstract: "Bring a removed key back with the newest value it had.",
        discussion: "Written now, by this device, as a new version that syncs like any write.")
    @Argument(help: "The key.") var key: String
    @OptionGroup var store: StoreOptions

    func run() throws {
        FileHandle.standardOutput.write(try StoreAccess.perform(.undelete(key: StoreKey(key)), store))
    }
}

/// `kvfs retention [--days N] [--bytes B]`: prints, or sets, how much history the store keeps.
struct RetentionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "retention", abstract: "Print or set how long and how much history the store keeps.",
        discussion: """
            A version that is not a key's current value is kept while it is younger than the days and within \
            the bytes, counted newest first across the store; the current value is always kept. Each version \
            counts what its record takes on disk (its key, its value, and about 70 bytes of framing, stamp and \
            base), so the bytes bound the history part of each device's snapshot exactly: the snapshot adds \
            only the current values (at most the 1 MiB quota) and a 38-byte end. The setting is the store's: \
            every device keeps the latest one set, on any device. 0 turns history off. The default is 30 days \
            and 8388608 bytes; the most is \(HistoryRetention.maximumBytes) bytes (128 MiB), which every device \
            reads back and indexes in memory.
            """)
    @Option(help: "Keep versions this many days (0 turns history off).") var days: Int?
    @Option(help: "Keep at most this many bytes of versions (0 turns history off).") var bytes: Int?
    @OptionGroup var store: StoreOptions

    func validate() throws {
        if let days, days < 0 || days > HistoryRetention.maximumDays {
            throw ValidationError("--days must be 0 to \(HistoryRetention.maximumDays)")
        }
        if let bytes, bytes < 0 || bytes > HistoryRetention.maximumBytes {
            throw ValidationError("--bytes must be 0 to \(HistoryRetention.maximumBytes) (128 MiB: every device reads a snapshot of that much history back and indexes it in memory)")
        }
    }

    func run() throws {
        FileHandle.standardOutput.write(try StoreAccess.perform(.retention(days: days, bytes: bytes), store))
    }
}
