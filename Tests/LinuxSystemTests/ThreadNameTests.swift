import Foundation
import Synchronization
import LinuxSystem
import Testing

@Suite("LinuxSystem: thread names")
struct ThreadNameTests {
    @Test("a thread's name reaches the kernel (ps -L, /proc/PID/task/TID/comm), cut to 15 bytes; other threads keep theirs")
    func namesReachTheKernel() throws {
        let before = try ThreadName.current()
        let names = Mutex<[String]>([])
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            ThreadName.set("kvfs-test-thread-with-a-long-name")
            names.withLock { $0.append((try? ThreadName.current()) ?? "unreadable") }
            done.signal()
        }
        thread.start()
        done.wait()
        #expect(names.withLock { $0 } == ["kvfs-test-threa"])
        #expect(try ThreadName.current() == before)
    }
}
