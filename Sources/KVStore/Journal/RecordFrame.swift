/// The framing of records in journal and snapshot files, after LevelDB's log:
/// `u32 length | u32 CRC-32C of payload | payload`, little-endian.
///
/// A reader stops cleanly at a torn tail (an incomplete frame: the writer died
/// mid-append, or a synchronizer is still copying) and resumes there later. A
/// complete frame whose checksum fails is skipped once a valid frame is found
/// after it; a corrupt tail with nothing valid after it is treated as torn.
enum RecordFrame {
    static let headerSize = 8
    /// Larger than any legal record (a 1 MiB value plus its key and header),
    /// so a hostile length is seen for what it is without allocating it.
    static let maxPayload = 4 << 20

    static func encode(_ record: JournalRecord) -> [UInt8] {
        let payload = RecordCodec.encode(record)
        var writer = ByteWriter()
        writer.u32(UInt32(payload.count))
        writer.u32(CRC32C.checksum(payload))
        writer.raw(payload)
        return writer.bytes
    }

    /// What a scan of a byte range found.
    struct Scan {
        /// The records read, in order.
        var records: [JournalRecord] = []
        /// Where the next scan should start: the end of the last whole frame.
        var resumeOffset: Int
        /// Byte ranges skipped as corrupt (or as records this version cannot read).
        var skipped: [Range<Int>] = []
        /// Whether the scan stopped before the end (a torn or corrupt tail).
        var stoppedEarly: Bool { resumeOffset < end }
        var end: Int
    }

    /// Reads every whole frame in `bytes` from `start`.
    static func scan(_ bytes: UnsafeRawBufferPointer, from start: Int = 0) -> Scan {
        var scan = Scan(resumeOffset: start, end: bytes.count)
        var position = start
        while position < bytes.count {
            if let length = validFrame(bytes, at: position) {
                let payload = UnsafeRawBufferPointer(rebasing: bytes[position + headerSize..<position + headerSize + length])
                let next = position + headerSize + length
                if let record = RecordCodec.decode(payload) {
                    scan.records.append(record)
                } else {
                    scan.skipped.append(position..<next)
                }
                position = next
                scan.resumeOffset = position
            } else if let next = nextValidFrame(bytes, after: position) {
                scan.skipped.append(position..<next)
                position = next
            } else {
                break
            }
        }
        return scan
    }

    /// The payload length of a whole, checksummed frame at `position`, or nil.
    private static func validFrame(_ bytes: UnsafeRawBufferPointer, at position: Int) -> Int? {
        guard bytes.count - position >= headerSize else { return nil }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self)))
        guard length <= maxPayload, length <= bytes.count - position - headerSize else { return nil }
        let checksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position + 4, as: UInt32.self))
        let payload = UnsafeRawBufferPointer(rebasing: bytes[position + headerSize..<position + headerSize + length])
        return CRC32C.checksum(payload) == checksum ? length : nil
    }

    private static func nextValidFrame(_ bytes: UnsafeRawBufferPointer, after position: Int) -> Int? {
        var candidate = position + 1
        while candidate + headerSize <= bytes.count {
            if validFrame(bytes, at: candidate) != nil { return candidate }
            candidate += 1
        }
        return nil
    }
}
