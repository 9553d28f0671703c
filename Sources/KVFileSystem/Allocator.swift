#if canImport(Glibc)
import Glibc
#endif

/// glibc's malloc tuning, which Swift's Glibc module does not import
/// (`malloc.h`), found by name at run time.
///
/// Editors' scratch files grow to tens of megabytes in memory. glibc serves
/// a large block from its own mapping, returned to the system on free, but
/// after freeing one it raises that threshold (up to 32 MiB), so the next
/// buffers, grown by doubling, come from the heap and stay there: 241 MB of
/// 16 removed swap files did. A fixed threshold keeps large buffers mapped.
enum Allocator {
    private typealias Mallopt = @convention(c) (Int32, Int32) -> Int32
    private typealias MallocTrim = @convention(c) (Int) -> Int32
    /// `M_MMAP_THRESHOLD` in malloc.h.
    private static let mmapThresholdParameter: Int32 = -3

    /// Blocks of 1 MiB and more get their own mapping, always: freeing one gives its memory back.
    static func mapLargeBlocks() {
        guard let symbol = dlsym(nil, "mallopt") else { return }
        _ = unsafeBitCast(symbol, to: Mallopt.self)(mmapThresholdParameter, 1 << 20)
    }

    /// Gives the heap's free pages back to the system (`malloc_trim(0)`).
    static func trim() {
        guard let symbol = dlsym(nil, "malloc_trim") else { return }
        _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
    }
}
