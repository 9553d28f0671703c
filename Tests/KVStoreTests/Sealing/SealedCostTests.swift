import Foundation
import Testing
@testable import KVStore

/// Issue 26 item 5: what sealing costs, measured against the same store
/// unsealed in one run (docs/sealed.md § Checking signatures): writes, reads,
/// and opening a store whose other device's journal holds many records, with
/// each signature checked and with the last of each read alone.
///
/// The suite runs a short form (it checks that the figures come out and the
/// stores agree); `KVFS_BENCH_ONLY=sealed mount-scripts/benchmark.sh` runs the
/// long form (`KVFS_SEALED_WRITES`, default 20000, and `KVFS_SEALED_RECORDS`,
/// default 1000000) and prints the `sealed:` lines. Speed is reported, never asserted.
@Suite("Sealed costs")
struct SealedCostTests {
    static let environment = ProcessInfo.processInfo.environment
    static let writes = environment["KVFS_SEALED_WRITES"].flatMap(Int.init) ?? 300
    static let records = environment["KVFS_SEALED_RECORDS"].flatMap(Int.init) ?? 3000

    static func seconds(_ work: () throws -> Void) rethrows -> Double {
        let start = ContinuousClock.now
        try work()
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    static func say(_ line: String) { print("sealed: " + line) }

    @Test("writes and reads, plain and sealed, in one run")
    func writesAndReads() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        TestSealing.seal(fixture.root.path + "/sealed")
        var perWrite: [Double] = [], perRead: [Double] = []
        for sync in ["plain", "sealed"] {
            let store = try fixture.open("w-" + sync, sync: sync)
            defer { store.close() }
            let value = PropertyListValue.string(String(repeating: "v", count: 100))
            perWrite.append(try Self.seconds { for index in 0..<Self.writes { try store.set(value, forKey: StoreKey("k\(index % 1000)")) } } / Double(Self.writes))
            perRead.append(Self.seconds { for index in 0..<Self.writes { _ = store.value(forKey: StoreKey("k\(index % 1000)")) } } / Double(Self.writes))
            #expect(store.values.count == min(Self.writes, 1000))
        }
        Self.say(String(format: "%d writes of 100 bytes: plain %.1f µs, sealed %.1f µs a write (%.2fx)",
                        Self.writes, perWrite[0] * 1e6, perWrite[1] * 1e6, perWrite[1] / perWrite[0]))
        Self.say(String(format: "%d reads: plain %.2f µs, sealed %.2f µs a read (%.2fx)",
                        Self.writes, perRead[0] * 1e6, perRead[1] * 1e6, perRead[1] / perRead[0]))
    }

    @Test("opening a store whose other device's journal holds many records, plain and sealed; each signature checked, or the last of each read")
    func openingALongJournal() throws {
        let fixture = SyncFixture()
        defer { fixture.cleanup() }
        TestSealing.seal(fixture.root.path + "/sealed")
        var opening: [Double] = []
        for sync in ["plain", "sealed"] {
            let writer = try fixture.open("w-" + sync, sync: sync)
            let (device, storeID) = (writer.deviceID, writer.storeID)
            writer.close()
            let path = fixture.root.path + "/" + sync + "/devices/" + device.hex + "/" + DeviceFolder.segmentName(1)
            let keys = TestSealing.keys(of: device, storeID: storeID)
            #expect((keys == nil) == (sync == "plain"))
            var sealer = keys.map { RecordSealer(keys: $0, file: SealedFile(kind: .segment, generation: 1)) }
            var bytes: [UInt8] = []
            // Every record a write of its own (each signed, as the writer signs them), 1000 keys.
            for index in 0..<Self.records {
                let record = JournalRecord(stamp: Stamp(time: HLCTimestamp(milliseconds: 1_700_000_000_000 + UInt64(index), counter: 0), device: device),
                                           operation: .put(key: StoreKey("k\(index % 1000)"), value: .integer(Int64(index))))
                bytes += sealer?.frame(record, signed: true) ?? RecordFrame.encode(record)
            }
            try Files.writeAtomically(path, bytes)
            if let keys {
                for verifiesEach in [true, false] {
                    var scan: RecordFrame.Scan?
                    let time = Self.seconds {
                        scan = bytes.withUnsafeBytes { RecordFrame.scan($0, opener: SealedFileOpener(keys: keys, device: device,
                            chain: RecordChain(storeID: storeID, device: device, file: SealedFile(kind: .segment, generation: 1)), verifiesEach: verifiesEach)) }
                    }
                    #expect(scan?.records.count == Self.records && scan?.refused == nil)
                    Self.say(String(format: "reading %d records, %@: %.2f s", Self.records, verifiesEach ? "each signature checked" : "the last signature checked", time))
                }
            } else {
                let time = Self.seconds { #expect(bytes.withUnsafeBytes { RecordFrame.scan($0) }.records.count == Self.records) }
                Self.say(String(format: "reading %d records, plain: %.2f s", Self.records, time))
            }
            var reader: DeviceStore?
            opening.append(try Self.seconds {
                reader = try fixture.open("r-" + sync, sync: sync)
                _ = reader?.refresh()
            })
            #expect(reader?.values.count == min(Self.records, 1000))
            #expect(!fixture.warnings.contain("refused"))
            reader?.close()
        }
        Self.say(String(format: "opening a store and reading a journal of %d records: plain %.2f s, sealed %.2f s (%.2fx)",
                        Self.records, opening[0], opening[1], opening[1] / opening[0]))
    }
}
