#if canImport(Glibc)
import Glibc
#endif

/// The C library's heap, under Swift's allocations.
public enum Heap {
    /// Gives back to the system the pages the heap holds free (glibc's
    /// `malloc_trim(0)`), so that a burst of allocations does not stay in the
    /// process's resident size once it is freed: glibc keeps freed memory
    /// for later inside its arenas, and returns on its own only what lies at
    /// the top of the main one. Nothing where the C library has no
    /// `malloc_trim` (it is looked up when called: `<malloc.h>` is not in
    /// Swift's Glibc module).
    ///
    /// It walks every arena with its lock held, a few milliseconds for a
    /// heap of tens of megabytes: for after a rare, large job, not after each request.
    public static func returnFreedMemory() {
        typealias MallocTrim = @convention(c) (Int) -> Int32
        _ = cFunction("malloc_trim", as: MallocTrim.self)?(0)
    }
}

/// The C library's function `name`, looked up when called (`dlsym`): for
/// functions whose headers Swift's Glibc module leaves out (`<malloc.h>`,
/// `<sys/eventfd.h>`, `<sys/pidfd.h>`); nil when this C library lacks it.
/// `Function` must be the `@convention(c)` type of its C declaration.
func cFunction<Function>(_ name: String, as type: Function.Type) -> Function? {
    dlsym(nil, name).map { unsafeBitCast($0, to: type) }
}
