import Crypto
import Foundation
import Testing
@testable import KVStore

/// docs/sealed.md § Sealed records: one record sealed into a frame's payload,
/// opened and checked in its file's chain, and each way a frame is refused.
@Suite("Sealed records")
struct SealedRecordTests {
    /// A store of two members, `a` (whose folder the tests read) and `b`.
    struct Members {
        let key = SymmetricKey(size: .bits256)
        let a = DeviceID.random(), b = DeviceID.random()
        let signingA = Curve25519.Signing.PrivateKey(), signingB = Curve25519.Signing.PrivateKey()

        func keys(of device: DeviceID, epoch: UInt32 = 1, members: [DeviceID]? = nil) -> SealingKeys {
            let all = [a: signingA.publicKey, b: signingB.publicKey]
            return SealingKeys(storeID: "store", currentEpoch: epoch, storeKeys: [epoch: key], device: device,
                               signingKey: device == a ? signingA : signingB,
                               members: members.map { Dictionary(uniqueKeysWithValues: $0.map { ($0, all[$0]!) }) } ?? all)
        }

        /// The sealed frames of `records` in `a`'s segment 1, each write of one record.
        func segment(_ records: [JournalRecord], by device: DeviceID? = nil, signed: Bool = true) -> [[UInt8]] {
            var sealer = RecordSealer(keys: keys(of: device ?? a), chain: origin())
            return records.map { sealer.frame($0, signed: signed) }
        }

        func origin(of device: DeviceID? = nil, _ file: SealedFile = SealedFile(kind: .segment, generation: 1)) -> RecordChain {
            RecordChain(storeID: "store", device: device ?? a, file: file)
        }

        /// What `reader` (by default `b`) reads of `bytes` as `a`'s segment 1; `own`: `a` reading its own folder.
        func read(_ bytes: [UInt8], as reader: DeviceID? = nil, readerKeys: SealingKeys? = nil, verifiesEach: Bool = false,
                  own: Bool = false) -> RecordFrame.Scan {
            let opener = SealedFileOpener(keys: readerKeys ?? keys(of: own ? a : reader ?? b), device: a, chain: origin(),
                                          verifiesEach: verifiesEach, ownFolder: own)
            return bytes.withUnsafeBytes { RecordFrame.scan($0, opener: opener) }
        }

        /// `records` appended unsigned by `a`, a mark after each group of `marksAfter` (none when nil), as a writer does.
        func marked(_ records: [JournalRecord], marksAfter: Int? = nil, sealer: inout RecordSealer) -> [UInt8] {
            var writer = ByteWriter()
            for (index, record) in records.enumerated() {
                sealer.frame(record, signed: false, into: &writer)
                if let marksAfter, (index + 1) % marksAfter == 0 { sealer.mark(into: &writer) }
            }
            return writer.bytes
        }

        /// A record sealed as kvfs did before it derived nonces and marked sync points: a random nonce,
        /// and (the last of each write) signed. The bytes of docs/format.md § Sealed frames, made here by hand.
        func legacyFrame(_ record: JournalRecord, chain: inout RecordChain, signed: Bool = true) throws -> [UInt8] {
            var writer = ByteWriter()
            writer.u8(SealedRecord.format)
            writer.u8(signed ? SealedRecord.signedFlag : 0)
            writer.u32(1)
            writer.u64(chain.count)
            let plain = RecordCodec.encode(record)
            let padded = plain + [0x80] + [UInt8](repeating: 0, count: SealedRecord.bucket(for: plain.count) - plain.count - 1)
            let box = try ChaChaPoly.seal(padded, using: key, authenticating: chain.origin + writer.bytes)  // a random nonce
            box.nonce.withUnsafeBytes { writer.raw($0) }
            writer.raw(box.ciphertext)
            writer.raw(box.tag)
            writer.bytes.withUnsafeBytes { chain.extend(with: $0) }
            if signed { writer.raw(try signingA.signature(for: chain.head)) }
            return RecordFrame.frame(writer.bytes)
        }
    }

    static func puts(_ count: Int, device: DeviceID) -> [JournalRecord] {
        (0..<count).map { record(device, 1_000 + UInt64($0), .put(key: StoreKey("k\($0)"), value: .string("value \($0)"))) }
    }

    /// A frame's payload with one byte flipped, its checksum made right again (what a keyless writer can do).
    static func altered(_ frame: [UInt8], at offset: Int) -> [UInt8] {
        var payload = Array(frame[RecordFrame.headerSize...])
        payload[offset] ^= 0x01
        return RecordFrame.frame(payload)
    }

    @Test("records sealed in a file open in order, each padded to its bucket, the plain record unchanged, no plain byte in the file")
    func roundTrip() {
        let members = Members()
        let records = Self.puts(5, device: members.a)
        let frames = members.segment(records)
        let scan = members.read(Array(frames.joined()))
        #expect(scan.records == records)
        #expect(scan.refused == nil && !scan.signatureFailed && scan.resumeOffset == frames.joined().count)
        #expect(scan.chain?.count == 5)
        for (frame, record) in zip(frames, records) {
            let plain = RecordCodec.encode(record).count
            #expect(frame.count == RecordFrame.headerSize + SealedRecord.headerSize + SealedRecord.bucket(for: plain)
                + SealedRecord.tagSize + SealedRecord.signatureSize)
            #expect(!frame.contains(subsequence: Array("value".utf8)))
        }
    }

    @Test("the padding read back: the record is what comes before its one 0x80 followed by zeros; a padding that is not so is refused")
    func unpadding() {
        #expect(SealedRecord.unpaddedCount([1, 2, 3, 0x80, 0, 0]) == 3)
        #expect(SealedRecord.unpaddedCount([1, 2, 3, 0x80]) == 3)
        #expect(SealedRecord.unpaddedCount([0x80, 0, 0]) == 0)
        #expect(SealedRecord.unpaddedCount([0x80, 0x80, 0]) == 1)
        #expect(SealedRecord.unpaddedCount([1, 2, 0x01, 0, 0]) == nil, "no 0x80")
        #expect(SealedRecord.unpaddedCount([0, 0, 0]) == nil, "zeros only")
        #expect(SealedRecord.unpaddedCount([]) == nil, "nothing")
    }

    @Test("padding buckets: 64 bytes, powers of two up to 4 KiB, then multiples of 4 KiB, each crossed")
    func buckets() {
        #expect(SealedRecord.bucket(for: 0) == 64)
        #expect(SealedRecord.bucket(for: 63) == 64)
        #expect(SealedRecord.bucket(for: 64) == 128)
        #expect(SealedRecord.bucket(for: 127) == 128)
        #expect(SealedRecord.bucket(for: 2047) == 2048)
        #expect(SealedRecord.bucket(for: 4095) == 4096)
        #expect(SealedRecord.bucket(for: 4096) == 8192)
        #expect(SealedRecord.bucket(for: 8191) == 8192)
        #expect(SealedRecord.bucket(for: 8192) == 12288)
        #expect(SealedRecord.bucket(for: 1 << 20) == (1 << 20) + 4096)
    }

    @Test("a value read back by its location opens alone, and not in another file's place")
    func openedByLocation() throws {
        let members = Members()
        let records = Self.puts(3, device: members.a)
        let frames = members.segment(records)
        let location = RecordLocation(generation: 1, inSnapshot: false, offset: frames[0].count, length: frames[1].count)
        let payload = frames[1][RecordFrame.headerSize...]
        try Array(payload).withUnsafeBytes { bytes in
            let parts = try #require(SealedRecord.Parts(bytes))
            let origin = members.origin(of: members.a, SealedFile(location))
            #expect(try parts.open(keys: members.keys(of: members.b), origin: origin.origin, cipher: RecordCipher.Context()).get() == RecordCodec.encode(records[1]))
            let elsewhere = members.origin(of: members.a, SealedFile(kind: .snapshot, generation: 1))
            #expect(parts.open(keys: members.keys(of: members.b), origin: elsewhere.origin, cipher: RecordCipher.Context()) == .failure(.doesNotOpen))
        }
    }

    @Test("a plain record, a record sealed with another key, and a folder of a non-member are refused where they start")
    func forged() {
        let members = Members()
        let frames = members.segment(Self.puts(2, device: members.a))
        let plain = RecordFrame.encode(Self.puts(3, device: members.a)[2])
        var scan = members.read(Array(frames.joined()) + plain)
        #expect(scan.records.count == 2 && scan.refused?.reason == .notSealed && scan.refused?.offset == frames.joined().count)
        // An outsider's own keys: the seal does not open under the store's.
        let outsider = Members()
        var sealer = RecordSealer(keys: outsider.keys(of: outsider.a), chain: members.origin())
        for _ in 0..<2 { _ = sealer.frame(Self.puts(1, device: members.a)[0], signed: true) }
        scan = members.read(Array(frames.joined()) + sealer.frame(Self.puts(3, device: members.a)[2], signed: true))
        #expect(scan.records.count == 2 && scan.refused?.reason == .doesNotOpen)
        scan = members.read(Array(frames.joined()), readerKeys: members.keys(of: members.b, members: [members.b]))
        #expect(scan.records.isEmpty && scan.refused?.reason == .notMember)
        scan = members.read(Array(frames.joined()), readerKeys: members.keys(of: members.b, epoch: 2))
        #expect(scan.records.isEmpty && scan.refused?.reason == .unknownEpoch(1))
    }

    @Test("a record copied from another device's folder does not open in this one's, at the same index")
    func copied() {
        let members = Members()
        let mine = members.segment(Self.puts(1, device: members.a))
        var theirs = RecordSealer(keys: members.keys(of: members.b), chain: members.origin(of: members.b))
        let copied = Self.puts(2, device: members.b).map { theirs.frame($0, signed: true) }[1]
        let scan = members.read(mine[0] + copied, as: members.a)
        #expect(scan.records.count == 1 && scan.refused?.reason == .doesNotOpen)
    }

    @Test("an altered record (ciphertext, tag, header or signature) is refused, and nothing after it is read")
    func altered() {
        let members = Members()
        let frames = members.segment(Self.puts(3, device: members.a))
        for offset in [SealedRecord.headerSize + 3, frames[1].count - RecordFrame.headerSize - SealedRecord.signatureSize - 1, 2, 20] {
            let scan = members.read(frames[0] + Self.altered(frames[1], at: offset) + frames[2])
            #expect(scan.records.count == 1 && scan.refused != nil, "byte \(offset)")
            #expect(scan.resumeOffset == frames[0].count)
        }
        // The signature: the chain still holds, so the last signature's check fails, and each one's finds it.
        let signature = frames[2].count - RecordFrame.headerSize - 1
        let last = members.read(Array(frames[0...1].joined()) + Self.altered(frames[2], at: signature))
        #expect(last.signatureFailed)
        let each = members.read(Array(frames[0...1].joined()) + Self.altered(frames[2], at: signature), verifiesEach: true)
        #expect(each.records.count == 2 && each.refused?.reason == .badSignature)
    }

    @Test("records replayed or reordered are refused at the first out of its place")
    func replayedAndReordered() {
        let members = Members()
        let frames = members.segment(Self.puts(3, device: members.a))
        let replayed = members.read(Array(frames.joined()) + frames[1])
        #expect(replayed.records.count == 3 && replayed.refused?.reason == .outOfPlace(index: 1, expected: 3))
        let reordered = members.read(frames[0] + frames[2] + frames[1])
        #expect(reordered.records.count == 1 && reordered.refused?.reason == .outOfPlace(index: 2, expected: 1))
    }

    @Test("a member's record in another member's folder, chained right, fails the folder's device's signature")
    func memberForgesAnother() {
        let members = Members()
        let frames = members.segment(Self.puts(2, device: members.a))
        var forger = RecordSealer(keys: members.keys(of: members.b), chain: members.read(Array(frames.joined())).chain!)
        let forged = forger.frame(Self.puts(3, device: members.a)[2], signed: true)
        let scan = members.read(Array(frames.joined()) + forged)
        #expect(scan.signatureFailed)
        let each = members.read(Array(frames.joined()) + forged, verifiesEach: true)
        #expect(each.records.count == 2 && each.refused?.reason == .badSignature)
    }

    @Test("records after the last signed one are not read by another device: they wait for their mark")
    func unsignedTail() {
        let members = Members()
        var sealer = RecordSealer(keys: members.keys(of: members.a), chain: members.origin())
        let records = Self.puts(3, device: members.a)
        let frames = [sealer.frame(records[0], signed: true), sealer.frame(records[1], signed: false), sealer.frame(records[2], signed: false)]
        let scan = members.read(Array(frames.joined()))
        #expect(scan.records == [records[0]] && scan.resumeOffset == frames[0].count && scan.chain?.count == 1)
        #expect(scan.chain?.isSigned == true && scan.refused == nil)
    }

    @Test("a mark signs the records before it: another device reads them once it is there, a bad or foreign mark is refused")
    func marks() throws {
        let members = Members()
        let records = Self.puts(7, device: members.a)
        var sealer = RecordSealer(keys: members.keys(of: members.a), chain: members.origin())
        // Marks after the third and the sixth record: the seventh waits for the next.
        let bytes = members.marked(records, marksAfter: 3, sealer: &sealer)
        let markFrame = RecordFrame.headerSize + SealedRecord.markSize
        #expect(SealedRecord.markSize == 78)
        for verifiesEach in [false, true] {
            let scan = members.read(bytes, verifiesEach: verifiesEach)
            #expect(scan.records == Array(records[..<6]) && scan.refused == nil && !scan.signatureFailed)
            #expect(scan.chain?.count == 8 && scan.chain?.isSigned == true)
            #expect(scan.skipped.isEmpty, "a mark is no skipped frame")
        }
        let unsigned = bytes.count - (bytes.count - 2 * markFrame) / 7  // where the seventh record starts
        #expect(members.read(bytes).resumeOffset == unsigned)
        // The mark that would sign the seventh: then all seven are read.
        var complete = ByteWriter()
        sealer.mark(into: &complete)
        #expect(members.read(bytes + complete.bytes).records == records)
        // A mark altered, or made by another member (its signature is not a's): refused where it starts.
        let lastMark = Array(bytes[(unsigned - markFrame)..<unsigned])
        let upToLastMark = Array(bytes[..<(unsigned - markFrame)])
        let altered = Self.altered(lastMark, at: SealedRecord.markSize - 1)
        #expect(members.read(upToLastMark + altered).signatureFailed)
        let each = members.read(upToLastMark + altered, verifiesEach: true)
        #expect(each.records == Array(records[..<3]) && each.refused?.reason == .badSignature && each.refused?.offset == upToLastMark.count)
        var forger = RecordSealer(keys: members.keys(of: members.b), chain: members.read(upToLastMark, own: true).chain!)
        var forged = ByteWriter()
        forger.mark(into: &forged)
        #expect(members.read(upToLastMark + forged.bytes, verifiesEach: true).refused?.reason == .badSignature)
        // A plain reader skips marks as frames it does not read, and the resync after junk finds them.
        let plain = ([UInt8](repeating: 0x5A, count: 40) + complete.bytes).withUnsafeBytes { RecordFrame.scan($0) }
        #expect(plain.records.isEmpty && plain.unreadable == nil && plain.skipped.count == 2)
    }

    @Test("nonces are derived: the same record at the same place seals alike, at another place or with other content not")
    func derivedNonces() {
        let members = Members()
        let records = Self.puts(2, device: members.a)
        var first = RecordSealer(keys: members.keys(of: members.a), chain: members.origin())
        var again = RecordSealer(keys: members.keys(of: members.a), chain: members.origin())
        let one = first.frame(records[0], signed: false)
        #expect(again.frame(records[0], signed: false) == one)
        let nonce = { (frame: [UInt8]) in Array(frame[(RecordFrame.headerSize + SealedRecord.boundSize)...].prefix(SealedRecord.nonceSize)) }
        #expect(nonce(first.frame(records[0], signed: false)) != nonce(one), "the same record at index 1")
        var other = RecordSealer(keys: members.keys(of: members.a), chain: members.origin())
        #expect(nonce(other.frame(records[1], signed: false)) != nonce(one))
        // Another device's nonce for the same record at the same place (in its own key) differs too.
        var theirs = RecordSealer(keys: members.keys(of: members.b), chain: members.origin())
        #expect(nonce(theirs.frame(records[0], signed: false)) != nonce(one))
    }

    @Test("a device reads its own unsigned records before their mark; another member's unsigned record in its folder is refused there, and held back elsewhere")
    func ownUnsignedRecords() throws {
        let members = Members()
        let records = Self.puts(5, device: members.a)
        var sealer = RecordSealer(keys: members.keys(of: members.a), chain: members.origin())
        let signed = members.marked(Array(records[..<2]), marksAfter: 2, sealer: &sealer)
        let tail = members.marked(Array(records[2...]), sealer: &sealer)
        for verifiesEach in [false, true] {
            let own = members.read(signed + tail, verifiesEach: verifiesEach, own: true)
            #expect(own.records == records && own.refused == nil && !own.unsignedTailFailed && own.resumeOffset == signed.count + tail.count)
            #expect(own.chain?.count == 6 && own.chain?.isSigned == false)
            #expect(members.read(signed + tail, verifiesEach: verifiesEach).records == Array(records[..<2]))
        }
        // b, a member, appends an unsigned record to a's folder, chained right: it opens, but its nonce is not a's.
        var forger = RecordSealer(keys: members.keys(of: members.b), chain: sealer.chain)
        let forged = forger.frame(record(members.a, 9_000, .put(key: "k0", value: .string("forged"))), signed: false)
        let last = members.read(signed + tail + forged, own: true)
        #expect(last.unsignedTailFailed, "the last unsigned record's nonce fails: read again checking each")
        let each = members.read(signed + tail + forged, verifiesEach: true, own: true)
        #expect(each.records == records && each.refused?.reason == .notOwn && each.refused?.offset == signed.count + tail.count)
        #expect(each.resumeOffset == signed.count + tail.count && each.chain == sealer.chain)
        // Another device holds it back with the a's unsigned records, and refuses nothing: they may be a's, waiting for a mark.
        let other = members.read(signed + tail + forged, verifiesEach: true)
        #expect(other.records == Array(records[..<2]) && other.refused == nil)
        // Forged at the start of the unsigned tail: none of the tail is a's then.
        var early = RecordSealer(keys: members.keys(of: members.b), chain: members.read(signed).chain!)
        let planted = early.frame(records[2], signed: false)
        #expect(members.read(signed + planted, verifiesEach: true, own: true).records == Array(records[..<2]))
    }

    @Test("a store sealed before nonces were derived (random nonces, each write's last record signed) reads the same, the device's own reader included")
    func legacyRecords() throws {
        let members = Members()
        let records = Self.puts(4, device: members.a)
        var chain = members.origin()
        // Two writes of one record, then one of two (a batch: its first unsigned, its last signed).
        let bytes = try [members.legacyFrame(records[0], chain: &chain), members.legacyFrame(records[1], chain: &chain),
                         members.legacyFrame(records[2], chain: &chain, signed: false),
                         members.legacyFrame(records[3], chain: &chain)].joined()
        for verifiesEach in [false, true] {
            for own in [false, true] {
                let scan = members.read(Array(bytes), verifiesEach: verifiesEach, own: own)
                #expect(scan.records == records && scan.refused == nil && !scan.signatureFailed && !scan.unsignedTailFailed)
            }
        }
        // The device goes on writing in it: new records after the old ones, then a mark.
        var sealer = RecordSealer(keys: members.keys(of: members.a), chain: chain)
        let more = Self.puts(6, device: members.a)
        let appended = members.marked(Array(more[4...]), marksAfter: 2, sealer: &sealer)
        #expect(members.read(Array(bytes) + appended).records == records + Array(more[4...]))
        // An old record left unsigned at the end (a write cut in two) is not the device's own by its nonce.
        var cut = chain
        let half = try members.legacyFrame(more[4], chain: &cut, signed: false)
        #expect(members.read(Array(bytes) + half, verifiesEach: true, own: true).records == records)
    }

    @Test("a torn sealed frame waits, and junk stops a sealed read there (its chain cannot pass it)")
    func tornAndJunk() {
        let members = Members()
        let frames = members.segment(Self.puts(2, device: members.a))
        let torn = members.read(frames[0] + frames[1].dropLast(10))
        #expect(torn.records.count == 1 && torn.unreadable == nil && torn.resumeOffset == frames[0].count)
        let junk = members.read(frames[0] + [UInt8](repeating: 0x5A, count: 40) + frames[1])
        #expect(junk.records.count == 1 && junk.unreadable != nil && junk.resumeOffset == frames[0].count)
    }

    @Test("a plain reader skips sealed frames whole, after junk too: the resync recognises them")
    func plainReaderSkipsSealed() {
        let members = Members()
        let frames = members.segment(Self.puts(2, device: members.a))
        let bytes = [UInt8](repeating: 0x5A, count: 40) + Array(frames.joined())
        let scan = bytes.withUnsafeBytes { RecordFrame.scan($0) }
        #expect(scan.records.isEmpty && scan.unreadable == nil && scan.skipped.count == 3)
    }
}

extension Array where Element == UInt8 {
    /// Whether `needle` occurs in these bytes.
    func contains(subsequence needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { Array(self[$0..<$0 + needle.count]) == needle }
    }
}
