import CFUSE
import Glibc
import Synchronization

/// libfuse's own messages (`fuse_log`: an unknown mount option, a failed
/// `mount(2)`, the `-d` request trace), which libfuse otherwise prints to
/// standard error. A program that reports errors in its own words, or logs
/// somewhere else, takes them here.
public enum LibfuseLog {
    /// The handler, or nil for libfuse's default (standard error).
    private static let handler = Mutex<(@Sendable (String) -> Void)?>(nil)
    /// Text of a line libfuse writes in several calls, until its newline.
    private static let partialLine = Mutex("")

    /// Sends every later libfuse message (one line, without its newline:
    /// libfuse writes some lines in several calls) to `handler`; nil gives
    /// them back to standard error.
    public static func setHandler(_ handler: (@Sendable (String) -> Void)?) {
        self.handler.withLock { $0 = handler }
        fuse_set_log_func(handler == nil ? nil : forwardLibfuseMessage)
    }

    /// Hands on each whole line of `text`, keeping an unfinished one for the next call.
    fileprivate static func deliver(_ text: String) {
        let lines: [String] = partialLine.withLock { pending in
            pending += text
            var parts = pending.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
            pending = parts.removeLast()
            return parts
        }
        for line in lines { deliverLine(line) }
    }

    private static func deliverLine(_ message: String) {
        let current = handler.withLock { $0 }
        if let current {
            current(message)
        } else {
            let line = Array((message + "\n").utf8)
            _ = line.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
        }
    }
}

/// The `fuse_log_func_t` libfuse calls: formats the message and hands it on.
private let forwardLibfuseMessage: fuse_log_func_t = { _, format, arguments in
    guard let format, let arguments else { return }
    var buffer = [UInt8](repeating: 0, count: 4096)
    let length = buffer.withUnsafeMutableBufferPointer { buffer in
        buffer.withMemoryRebound(to: CChar.self) { Int(vsnprintf($0.baseAddress, $0.count, format, arguments)) }
    }
    LibfuseLog.deliver(String(decoding: buffer.prefix(min(max(length, 0), buffer.count - 1)), as: UTF8.self))
}
