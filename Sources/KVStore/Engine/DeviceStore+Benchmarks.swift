import Crypto
import Foundation
import Synchronization

/// What `kvfs-bench` needs that the public API does not give: a journal kept
/// whole however long it grows, and how a sealed folder's reads check
/// signatures. Not for programs (`@_spi(Benchmarks)`): a store keeps its
/// journal short, and checks what kvfs chose by measuring.
extension DeviceStore {
    /// How many bytes this device's current journal segment must hold before a
    /// write makes a compaction due (1 MiB, counted in its records' plain bytes,
    /// sealed or not; once a snapshot exists, twice its size if more). A benchmark raises it to `Int.max` to write a journal of
    /// as many records as it asks for, each appended as any write is, none
    /// compacted away: what a device that has not compacted for long leaves
    /// for the others to read.
    @_spi(Benchmarks) public var compactionFloor: Int {
        get { journal.folder.withLock { $0.writer.compactionFloor } }
        set { journal.folder.withLock { $0.writer.compactionFloor = newValue } }
    }

    /// Whether the stores this process opens check the signature of every
    /// record of another device's sealed folder, rather than the last of each
    /// read, which covers the file's chain before it (docs/sealed.md § Checking
    /// signatures). False, as kvfs reads; a benchmark sets it to time both
    /// ways. Both refuse the same records.
    @_spi(Benchmarks) public static var checksEachSignature: Bool {
        get { DeviceFolderReader.eachSignature.load(ordering: .relaxed) }
        set { DeviceFolderReader.eachSignature.store(newValue, ordering: .relaxed) }
    }

    /// The seconds one Ed25519 signature of a chain head takes in this process, the mean of `count`:
    /// what a sealed write would cost more if it signed its own record rather than leave it to a mark
    /// (docs/sealed.md § Signing at sync points), for a benchmark to say.
    @_spi(Benchmarks) public static func secondsPerSignature(count: Int) -> Double {
        let key = Curve25519.Signing.PrivateKey()
        let head = [UInt8](repeating: 0x5a, count: SHA256.byteCount)
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<max(1, count) { _ = try? key.signature(for: head) }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 / Double(max(1, count))
    }

    /// The seconds the frame of one put of `valueBytes` bytes takes to make, the mean of `count`: plain, or
    /// sealed as the next record of a segment (padded, its nonce's MAC, ChaCha20-Poly1305, the chain's
    /// hash), as a write frames its record before its write(2); for a benchmark to say how much of a
    /// sealed write sealing is.
    @_spi(Benchmarks) public static func secondsPerFrame(sealed: Bool, valueBytes: Int, count: Int) -> Double {
        let device = DeviceID(bytes: [UInt8](repeating: 7, count: 16))
        let record = JournalRecord(stamp: Stamp(time: HLCTimestamp(rawValue: 1 << 40), device: device),
                                   operation: .put(key: StoreKey("k"), value: .string(String(repeating: "v", count: valueBytes))))
        let keys = SealingKeys(storeID: "bench", currentEpoch: 1, storeKeys: [1: SymmetricKey(size: .bits256)], device: device,
                               signingKey: Curve25519.Signing.PrivateKey(), members: [:])
        var sealer = RecordSealer(keys: keys, file: SealedFile(kind: .segment, generation: 1))
        var writer = ByteWriter(capacity: 4096)
        let start = DispatchTime.now().uptimeNanoseconds
        for _ in 0..<max(1, count) {
            writer.bytes.removeAll(keepingCapacity: true)
            if sealed { sealer.frame(record, signed: false, into: &writer) } else { RecordFrame.append(record, to: &writer) }
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9 / Double(max(1, count))
    }
}
