import Synchronization
import Testing
@testable import KVStore

@Suite("Hybrid logical clock")
struct ClockTests {
    @Test func neverGoesBackwardsAndPassesWhatItObserves() {
        let wall = Mutex<UInt64>(1000)
        let clock = HybridLogicalClock { wall.withLock { $0 } }
        let first = clock.now()
        let second = clock.now()
        #expect(second > first && second.milliseconds == 1000 && second.counter == 1)
        wall.withLock { $0 = 500 }  // the wall clock jumps back
        #expect(clock.now() > second)
        let remote = HLCTimestamp(milliseconds: 3_600_000, counter: 7)  // a device an hour ahead
        clock.observe(remote)
        let after = clock.now()
        #expect(after > remote)
        wall.withLock { $0 = 4_000_000 }
        #expect(clock.now() == HLCTimestamp(milliseconds: 4_000_000, counter: 0))
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
