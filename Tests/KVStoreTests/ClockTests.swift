import Synchronization
import Testing
@testable import KVStore

@Suite("Hybrid logical clock")
struct ClockTests {
    @Test func neverGoesBackwardsAndPassesWhatItObserves() throws {
        let wall = Mutex<UInt64>(1000)
        let clock = HybridLogicalClock { wall.withLock { $0 } }
        let first = try clock.now()
        let second = try clock.now()
        #expect(second > first && second.milliseconds == 1000 && second.counter == 1)
        wall.withLock { $0 = 500 }  // the wall clock jumps back
        #expect(try clock.now() > second)
        let remote = HLCTimestamp(milliseconds: 3_600_000, counter: 7)  // a device an hour ahead
        #expect(clock.observe(remote))
        let after = try clock.now()
        #expect(after > remote)
        wall.withLock { $0 = 4_000_000 }
        #expect(try clock.now() == HLCTimestamp(milliseconds: 4_000_000, counter: 0))
    }

    @Test("a remote stamp past the maximum offset leaves the clock where it was; the wall clock catching up lets it in")
    func farFutureRemoteStampsDoNotDragTheClock() throws {
        let start: UInt64 = 1_795_000_000_000
        let wall = Mutex<UInt64>(start)
        let clock = HybridLogicalClock { wall.withLock { $0 } }
        let offset = HybridLogicalClock.maximumOffset
        #expect(clock.horizon() == HLCTimestamp(milliseconds: start + offset, counter: .max))
        #expect(!clock.observe(.latest), "one record stamped 9999-12-31 must not carry the clock there")
        let ahead = HLCTimestamp(milliseconds: start + offset + 1, counter: 0)
        #expect(!clock.observe(ahead))
        #expect(try clock.now().milliseconds == start)
        #expect(clock.observe(HLCTimestamp(milliseconds: start + offset, counter: 3)), "exactly at the offset is in")
        wall.withLock { $0 = start + 2 }
        #expect(clock.observe(ahead))
        #expect(try clock.now() > ahead)
    }

    @Test("the clock never issues a stamp the reader refuses: past the year 9999 it throws")
    func theClockStopsAtTheLastStampAReaderAccepts() throws {
        let last = HLCTimestamp.latest.milliseconds
        let wall = Mutex<UInt64>(last + 1)  // a wall clock in the year 10000
        let clock = HybridLogicalClock { wall.withLock { $0 } }
        #expect(throws: KVStoreError.clockOutOfRange(HLCTimestamp(milliseconds: last + 1, counter: 0))) { try clock.now() }
        wall.withLock { $0 = last }
        #expect(clock.observe(HLCTimestamp(milliseconds: last, counter: .max - 1)))  // within the maximum offset of the wall clock
        #expect(try clock.now() == .latest)
        #expect(throws: KVStoreError.self) { try clock.now() }
        #expect("\(KVStoreError.clockOutOfRange(.latest))".contains("set the system clock"))
        let frame = RecordFrame.encode(JournalRecord(stamp: Stamp(time: .latest, device: .random()), operation: .remove(key: "k")))
        #expect(frame.withUnsafeBytes { RecordFrame.scan($0) }.records.count == 1, "the reader takes the latest stamp the clock issues")
    }

    @Test func stampsOrderByTimeThenDevice() {
        let a = DeviceID(bytes: Array(repeating: 1, count: 16)), b = DeviceID(bytes: Array(repeating: 2, count: 16))
        let t = HLCTimestamp(milliseconds: 5, counter: 0)
        #expect(Stamp(time: t, device: a) < Stamp(time: t, device: b))
        #expect(Stamp(time: HLCTimestamp(milliseconds: 4, counter: 9), device: b) < Stamp(time: t, device: a))
    }

    @Test func deviceIDsRejectJunkFolderNames() {
        #expect(DeviceID(hex: "..") == nil)
        #expect(DeviceID(hex: ".DS_Store") == nil)
        #expect(DeviceID(hex: String(repeating: "A", count: 32)) == nil)
        let id = DeviceID.random()
        #expect(DeviceID(hex: id.hex) == id)
        #expect(DeviceID(bytes: id.bytes) == id)
    }
}
