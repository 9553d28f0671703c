import LinuxSystem
import SystemPackage
import Testing

@Suite("LinuxSystem: the C library's heap")
struct HeapTests {
    @Test("memory freed between live allocations goes back to the system when asked, not before")
    func freedMemoryGoesBack() async {
        // In a process of its own: other tests' allocations would move this one's resident size.
        await #expect(processExitsWith: .success) {
            func residentMegabytes() -> Int {
                let status = String(decoding: (try? FileDescriptor.contents(of: "/proc/self/status")) ?? [], as: UTF8.self)
                let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
                return (Int(line.split(separator: " ")[1]) ?? 0) / 1024
            }
            // 96 MB in blocks of 4 KB, every 16th kept: what is freed lies between live blocks, where glibc keeps it.
            var blocks = (0..<24_576).map { _ in UnsafeMutableRawPointer.allocate(byteCount: 4000, alignment: 8) }
            for block in blocks { block.initializeMemory(as: UInt8.self, repeating: 1, count: 4000) }
            for index in blocks.indices where index % 16 != 0 { blocks[index].deallocate() }
            blocks = blocks.enumerated().filter { $0.offset % 16 == 0 }.map(\.element)
            let before = residentMegabytes()
            Heap.returnFreedMemory()
            let after = residentMegabytes()
            for block in blocks { block.deallocate() }
            if before - after < 40 { fatalError("resident \(before) MB before, \(after) MB after") }
        }
    }
}
