/// How far this device has read another device's sealed folder: the segment
/// generation it follows and where the whole records it read there end.
/// A sealed folder only moves forward (a later generation, or more of the
/// same segment), so a folder holding less than a mark went back.
///
/// The marks are kept in the state directory (`read-marks`), so that a
/// device holds the folders to them after a restart too: one a writer
/// without keys rolled back while the device was away is refused, not merged
/// as the older copy (docs/sealed.md § Refusals).
struct ReadMark: Comparable, Sendable {
    var generation: UInt64
    var offset: Int

    static func < (a: ReadMark, b: ReadMark) -> Bool { (a.generation, a.offset) < (b.generation, b.offset) }

    /// The file in the state directory.
    static let fileName = "read-marks"

    /// The file's text: the store id on the first line, then a line per device: its id, the generation and the offset.
    static func encode(_ marks: [DeviceID: ReadMark], storeID: String) -> [UInt8] {
        let lines = [storeID] + marks.sorted { $0.key.hex < $1.key.hex }.map { "\($0.key.hex) \($0.value.generation) \($0.value.offset)" }
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// The marks a file holds for the store `storeID`; none when it is another store's (the sync directory
    /// now holds another store) or not such a file. A line that is no mark is left out.
    static func decode(_ bytes: [UInt8], storeID: String) -> [DeviceID: ReadMark] {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\n")
        guard let first = lines.first, first == storeID, !storeID.isEmpty else { return [:] }
        var marks: [DeviceID: ReadMark] = [:]
        for line in lines.dropFirst() {
            let fields = line.split(separator: " ")
            guard fields.count == 3, let device = DeviceID(hex: String(fields[0])), let generation = UInt64(fields[1]),
                  let offset = Int(fields[2]), offset >= 0 else { continue }
            marks[device] = ReadMark(generation: generation, offset: offset)
        }
        return marks
    }
}
