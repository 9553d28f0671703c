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
        /// Where appending may continue: the end of the last whole frame.
        var resumeOffset: Int
        /// Where the next read should start: before the first corrupt region,
        /// which may be bytes still arriving (a synchronizer or NFS filling a
        /// hole), else `resumeOffset`.
        var settledOffset: Int
        /// How many of `records` lie before `settledOffset`.
        var settledCount = 0
        /// Byte ranges skipped as corrupt (or as records this version cannot read).
        var skipped: [Range<Int>] = []
        /// Whether the scan stopped before the end (a torn or corrupt tail).
        var stoppedEarly: Bool { resumeOffset < end }
        var end: Int
    }

    /// Reads every whole frame in `bytes` from `start`.
    ///
    /// A frame that checks out but holds no record this version reads is
    /// skipped for good; a region that does not check out is skipped only
    /// past valid frames after it, and marks where a later read starts again.
    static func scan(_ bytes: UnsafeRawBufferPointer, from start: Int = 0) -> Scan {
        var scan = Scan(resumeOffset: start, settledOffset: start, end: bytes.count)
        var settled = true
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
                if settled {
                    scan.settledOffset = position
                    scan.settledCount = scan.records.count
                }
            } else if let next = nextValidFrame(bytes, after: position) {
                scan.skipped.append(position..<next)
                settled = false
                position = next
            } else {
                break
            }
        }
        return scan
    }

    /// The payload length of a whole, checksummed frame at `position`, or nil.
    /// An empty payload is no record, so a run of zeros (a hole) is never a frame.
    private static func validFrame(_ bytes: UnsafeRawBufferPointer, at position: Int) -> Int? {
        guard bytes.count - position >= headerSize else { return nil }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self)))
        guard length > 0, length <= maxPayload, length <= bytes.count - position - headerSize else { return nil }
        let checksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position + 4, as: UInt32.self))
        let payload = UnsafeRawBufferPointer(rebasing: bytes[position + headerSize..<position + headerSize + length])
        return CRC32C.checksum(payload) == checksum ? length : nil
    }

    /// The next position after `position` where a whole frame of this version
    /// starts. The version byte is checked before the checksum so that junk
    /// with plausible lengths at every byte costs a comparison, not a CRC each.
    private static func nextValidFrame(_ bytes: UnsafeRawBufferPointer, after position: Int) -> Int? {
        var candidate = position + 1
        while candidate + headerSize < bytes.count {
            if bytes[candidate + headerSize] == RecordCodec.version, validFrame(bytes, at: candidate) != nil { return candidate }
            candidate += 1
        }
        return nil
    }
}
