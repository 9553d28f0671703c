/// The framing of records in journal and snapshot files, after LevelDB's log:
/// `u32 length | u32 CRC-32C of payload | payload`, little-endian.
///
/// A reader stops cleanly at a torn tail (an incomplete frame: the writer died
/// mid-append, or a synchronizer is still copying) and resumes there later. A
/// complete frame whose checksum fails is skipped once a valid frame is found
/// after it; a corrupt tail with nothing valid after it is treated as torn.
///
/// A scan costs time linear in the bytes, whatever they hold. Finding the next
/// frame after a corrupt region means checksumming candidates, and junk can
/// offer a plausible candidate claiming a megabyte at every few bytes (a
/// "checksum bomb": quadratic, 19–38 s for 1 MiB, when every candidate was
/// checked). So a candidate must first look like a record (its length fits,
/// its payload starts with a readable version and a known kind), and the
/// checksumming all resynchronizations of a scan may do is bounded: twice
/// the bytes scanned (room to check any one real frame), plus 8 bytes for
/// every byte they move past. A region that would cost more is treated as
/// unreadable from there on (and said so).
enum RecordFrame {
    /// The frame's header: the payload's length, then its checksum, each a `u32`.
    static let headerSize = checksumOffset + MemoryLayout<UInt32>.size
    private static let checksumOffset = MemoryLayout<UInt32>.size
    /// Larger than any legal record (a 1 MiB value plus its key and header),
    /// so a hostile length is seen for what it is without allocating it.
    static let maxPayload = 4 << 20

    static func encode(_ record: JournalRecord) -> [UInt8] {
        var writer = ByteWriter(capacity: headerSize + RecordCodec.capacity(for: record))
        append(record, to: &writer)
        return writer.bytes
    }

    /// Appends `record`'s frame to `writer`: its payload encoded in place, after
    /// a header filled in once the payload's length and checksum are known (one buffer, no copy).
    static func append(_ record: JournalRecord, to writer: inout ByteWriter) {
        append(to: &writer) { RecordCodec.encode(record, into: &$0) }
    }

    /// Appends a frame whose payload `payload` writes to `writer` (a plain record's, or a sealed one's).
    static func append(to writer: inout ByteWriter, payload: (inout ByteWriter) -> Void) {
        let start = writer.bytes.count
        writer.u32(0)
        writer.u32(0)
        payload(&writer)
        writer.bytes.withUnsafeMutableBytes { bytes in
            let payload = UnsafeRawBufferPointer(rebasing: bytes[(start + headerSize)...])
            bytes.storeBytes(of: UInt32(payload.count).littleEndian, toByteOffset: start, as: UInt32.self)
            bytes.storeBytes(of: CRC32C.checksum(payload).littleEndian, toByteOffset: start + checksumOffset, as: UInt32.self)
        }
    }

    /// The frame of `payload`: a plain record's bytes, or a sealed one's (``SealedRecord``).
    static func frame(_ payload: [UInt8]) -> [UInt8] {
        var writer = ByteWriter(capacity: headerSize + payload.count)
        writer.u32(UInt32(payload.count))
        writer.u32(CRC32C.checksum(payload))
        writer.raw(payload)
        return writer.bytes
    }

    /// The bytes of the frame of a put of `value` to `key` (a removal when
    /// nil) with `base` and `rank`: `encode(_:)`'s count for such a record, worked
    /// out without encoding it.
    static func size(ofVersionOf key: StoreKey, value: PropertyListValue?, base: WriteBase, rank: Stamp?) -> Int {
        let stampSize = RecordCodec.stampSize + RecordCodec.deviceSize
        let baseSize = if case .version = base { 1 + stampSize } else { 1 }
        return headerSize + RecordCodec.kindOffset + 1 + 4 + key.string.utf8.count + (value.map(RecordValueCoding.size(of:)) ?? 0)
            + baseSize + (rank == nil ? 0 : stampSize)
    }

    /// The payload's length when `bytes` are exactly one whole frame whose checksum matches, else nil.
    static func payloadLength(ofWholeFrame bytes: UnsafeRawBufferPointer) -> Int? {
        guard let length = validFrame(bytes, at: 0), headerSize + length == bytes.count else { return nil }
        return length
    }

    /// What a scan of a byte range found.
    struct Scan {
        /// The records read, in order.
        var records: [JournalRecord] = []
        /// Where each of `records` lies in the bytes scanned, frame header included.
        var frames: [Range<Int>] = []
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
        /// Bytes after `resumeOffset` where the scan stopped that are not the
        /// start of a frame still being written: corrupt, or a hole not yet filled.
        var unreadable: Range<Int>?
        /// Whether the scan stopped before the end (a torn or corrupt tail).
        var stoppedEarly: Bool { resumeOffset < end }
        var end: Int
        /// In a sealed file: the epoch each of `records` was sealed under (empty in a plain file).
        var epochs: [UInt32] = []
        /// In a sealed file: the record refused, where its frame starts, and why; nothing from there on was read.
        var refused: (offset: Int, reason: SealRefusal)?
        /// In a sealed file: the chain up to `resumeOffset`, where the next read goes on.
        var chain: RecordChain?
        /// In a sealed file: the signature of the read's last signed record is not its device's;
        /// a scan checking each signature (``SealedFileOpener/verifiesEach``) finds the first that is not.
        var signatureFailed = false
        /// In this device's own folder: the unsigned records after the last signed one are not all its
        /// own (the last one's nonce is not); a scan checking each finds the first that is not.
        var unsignedTailFailed = false
    }

    /// Reads every whole frame in `bytes` from `start`: a ``Scanner`` fed them all at once.
    ///
    /// A frame that checks out but holds no record this version reads is
    /// skipped for good; a region that does not check out is skipped only
    /// past valid frames after it, and marks where a later read starts again.
    static func scan(_ bytes: UnsafeRawBufferPointer, from start: Int = 0, opener: SealedFileOpener? = nil) -> Scan {
        var scanner = Scanner(from: start, end: bytes.count, opener: opener)
        scanner.feed(bytes, at: 0, isEnd: true)
        return scanner.scan
    }

    /// The largest frame, header and payload: a window of a file must hold one.
    static let maxFrame = headerSize + maxPayload
    /// Bytes of a file a ``Scanner`` is fed at a time: two of the largest
    /// frames, so that each window moves on by at least one.
    static let window = 2 * maxFrame

    /// A scan of a file of any size, fed a window of its bytes at a time
    /// (``window``), so that reading it never holds the file whole: it ends
    /// with what ``scan(_:from:)`` of all the bytes at once would find.
    ///
    /// A window is scanned as far as it can decide: a frame is read when it
    /// lies whole in the window; where a frame may run past the window's end
    /// (it starts within ``maxFrame`` of it), the next window starts there.
    /// Positions are the file's offsets.
    struct Scanner {
        /// What it found so far.
        private(set) var scan: Scan
        /// Where the next window must start.
        private(set) var nextOffset: Int
        /// Whether the scan reached its end (the file's, or a region it gave up on).
        private(set) var isDone = false
        /// The start of the bytes that are no frame being passed over, and whether they looked like a torn frame.
        private var junk: (start: Int, looksTorn: Bool)?
        private var settled = true
        private var resync: ResyncAllowance
        /// A sealed file's opener; nil for a plain file.
        private var opener: SealedFileOpener?
        /// In a sealed file: the scan as it stood after the last record vouched for (``SealedFileOpener/isVouched``), where it ends.
        private var vouched: Place?
        /// In a sealed file: the scan as it stood after the last record opened.
        private var opened: Place?

        /// Where a sealed file's scan stood after a record: records found, where appending goes on, the chain.
        private struct Place {
            var records: Int, resumeOffset: Int, chain: RecordChain
        }

        /// A scan of the bytes from `start` to `end` (the file's size); a
        /// sealed file's with `opener`, whose chain has reached `start`.
        init(from start: Int, end: Int, opener: SealedFileOpener? = nil) {
            scan = Scan(resumeOffset: start, settledOffset: start, end: end, chain: opener?.chain)
            nextOffset = start
            resync = ResyncAllowance(bytes: 2 * (end - start))
            self.opener = opener
            vouched = opener.map { Place(records: 0, resumeOffset: start, chain: $0.chain) }
            opened = vouched
        }

        /// Scans `bytes`, the file's from `base` (``nextOffset``); `isEnd`
        /// when they reach the file's end.
        mutating func feed(_ bytes: UnsafeRawBufferPointer, at base: Int, isEnd: Bool) {
            if isEnd { scan.end = base + bytes.count }
            // Below this, whatever starts there can be decided with these bytes alone.
            let decidable = isEnd ? bytes.count : bytes.count - maxFrame
            var position = nextOffset - base
            while !isDone {
                if opener != nil, let start = junk {
                    // A sealed file's chain cannot pass bytes that are no frame: reading stops there.
                    if !start.looksTorn { scan.unreadable = start.start..<scan.end }
                    finish()
                    break
                }
                if let start = junk {
                    switch RecordFrame.nextValidFrame(bytes, after: position - 1, below: isEnd ? nil : decidable, allowance: &resync) {
                    case let .found(next):
                        scan.skipped.append(start.start..<base + next)
                        junk = nil
                        settled = false
                        position = next
                    case let .undecided(candidate):
                        nextOffset = base + candidate
                        return
                    case .none:
                        if !start.looksTorn { scan.unreadable = start.start..<scan.end }
                        finish()
                    }
                } else if position >= bytes.count {
                    if isEnd { finish() }
                    break
                } else if let length = validFrame(bytes, at: position) {
                    let payload = UnsafeRawBufferPointer(rebasing: bytes[position + headerSize..<position + headerSize + length])
                    let next = position + headerSize + length
                    switch decode(payload, at: base + position) {
                    case .refused:
                        finish()
                    case let .record(record):
                        scan.records.append(record)
                        scan.frames.append(base + position..<base + next)
                        if let opener { scan.epochs.append(opener.lastEpoch) }
                    case .unreadable:
                        scan.skipped.append(base + position..<base + next)
                    case .mark:
                        break
                    }
                    if isDone { break }
                    position = next
                    scan.resumeOffset = base + position
                    if settled {
                        scan.settledOffset = base + position
                        scan.settledCount = scan.records.count
                    }
                    if let opener {
                        opened = Place(records: scan.records.count, resumeOffset: base + position, chain: opener.chain)
                        if opener.isVouched { vouched = opened }
                    }
                } else if position >= decidable {
                    break  // a frame that may end in the next window
                } else {
                    junk = (base + position, isTornFrame(bytes, at: position))
                    position += 1
                }
            }
            nextOffset = base + position
        }

        /// What a frame's payload holds.
        private enum Decoded {
            case record(JournalRecord)
            /// No record this version reads: skipped.
            case unreadable
            /// A sealed file's mark: no record, its signature vouching for the chain.
            case mark
            /// A sealed file's record refused (``Scan/refused``): the scan ends before it.
            case refused
        }

        /// What a frame's `payload` at `offset` holds; a sealed file's refusal is noted.
        private mutating func decode(_ payload: UnsafeRawBufferPointer, at offset: Int) -> Decoded {
            guard opener != nil else { return RecordCodec.decode(payload).map(Decoded.record) ?? .unreadable }
            switch opener!.open(payload) {
            case .success(nil):
                return .mark
            case let .success(plain?):
                return plain.withUnsafeBytes { RecordCodec.decode($0) }.map(Decoded.record) ?? .unreadable
            case let .failure(reason):
                scan.refused = (offset, reason)
                return .refused
            }
        }

        /// Ends the scan. A sealed file's ends at its last record vouched
        /// for: signed (its signature checked unless each was), or, in the
        /// device's own folder, the last of its own unsigned records. There,
        /// whole records after that are another's, refused (``SealRefusal/notOwn``).
        private mutating func finish() {
            isDone = true
            guard let opener, var end = vouched, let opened else { return }
            if let own = opener.unsignedTailIsOwn {
                if own { end = opened } else { scan.unsignedTailFailed = true }
            } else if opener.verifiesEach, opener.ownNonceKey != nil, opened.resumeOffset > end.resumeOffset, scan.refused == nil {
                scan.refused = (end.resumeOffset, .notOwn)
            }
            if end.records < scan.records.count || end.resumeOffset < scan.resumeOffset {
                scan.records.removeSubrange(end.records...)
                scan.frames.removeSubrange(end.records...)
                scan.epochs.removeSubrange(end.records...)
                scan.resumeOffset = end.resumeOffset
            }
            scan.settledOffset = scan.resumeOffset
            scan.settledCount = scan.records.count
            scan.chain = end.chain
            scan.signatureFailed = !opener.lastSignatureHolds()
        }
    }

    /// Whether the bytes at `position` are the beginning of a frame whose end has not arrived.
    private static func isTornFrame(_ bytes: UnsafeRawBufferPointer, at position: Int) -> Bool {
        guard bytes.count - position >= headerSize else { return true }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self)))
        return length > 0 && length <= maxPayload && length > bytes.count - position - headerSize
    }

    /// The payload length of a whole, checksummed frame at `position`, or nil.
    /// An empty payload is no record, so a run of zeros (a hole) is never a frame.
    private static func validFrame(_ bytes: UnsafeRawBufferPointer, at position: Int) -> Int? {
        guard let length = plausibleLength(bytes, at: position) else { return nil }
        return checksumMatches(bytes, at: position, length: length) ? length : nil
    }

    /// The length a frame at `position` claims, when the frame fits in `bytes`.
    private static func plausibleLength(_ bytes: UnsafeRawBufferPointer, at position: Int) -> Int? {
        guard bytes.count - position >= headerSize else { return nil }
        let length = Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: UInt32.self)))
        guard length > 0, length <= maxPayload, length <= bytes.count - position - headerSize else { return nil }
        return length
    }

    private static func checksumMatches(_ bytes: UnsafeRawBufferPointer, at position: Int, length: Int) -> Bool {
        let checksum = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: position + checksumOffset, as: UInt32.self))
        let payload = UnsafeRawBufferPointer(rebasing: bytes[position + headerSize..<position + headerSize + length])
        return CRC32C.checksum(payload) == checksum
    }

    /// How much checksumming a scan's resynchronizations may still do.
    private struct ResyncAllowance {
        var bytes: Int
        /// Bytes of checksumming earned per byte moved past.
        static let perByte = 8
    }

    /// What looking for the next frame after junk found.
    private enum Resync {
        /// A whole frame starts here.
        case found(Int)
        /// Candidates from here on need bytes past the window.
        case undecided(Int)
        /// None, or finding one would cost more than the allowance.
        case none
    }

    /// The next position after `position` where a whole frame that may hold a
    /// record starts; candidates from `below` on are left for the next window.
    private static func nextValidFrame(_ bytes: UnsafeRawBufferPointer, after position: Int, below: Int?,
                                       allowance: inout ResyncAllowance) -> Resync {
        var candidate = position + 1
        while candidate + headerSize < bytes.count {
            if let below, candidate >= below { return .undecided(candidate) }
            allowance.bytes += ResyncAllowance.perByte
            if let length = plausibleLength(bytes, at: candidate), looksLikeRecord(bytes, at: candidate + headerSize, length: length) {
                guard length <= allowance.bytes else { return .none }
                allowance.bytes -= length
                if checksumMatches(bytes, at: candidate, length: length) { return .found(candidate) }
            }
            candidate += 1
        }
        if let below, candidate >= below { return .undecided(candidate) }
        return .none
    }

    /// Whether a payload starts as a record this version reads: a readable
    /// version and a kind, or a sealed record's (or mark's) format, flags and size (``SealedRecord``).
    private static func looksLikeRecord(_ bytes: UnsafeRawBufferPointer, at payload: Int, length: Int) -> Bool {
        if bytes[payload] == SealedRecord.format {
            return length >= SealedRecord.boundSize && SealedRecord.looksSealed(flags: bytes[payload + 1], length: length)
        }
        return RecordCodec.readableVersions.contains(bytes[payload])
            && length > RecordCodec.kindOffset && RecordKind(rawValue: bytes[payload + RecordCodec.kindOffset]) != nil
    }
}
