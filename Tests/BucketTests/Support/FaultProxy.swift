import Foundation
import TestSupport
import Testing

/// A proxy between kvfs and moto that injects one fault into the next
/// requests (issue 40 item 6): an error answer, a connection reset or a body
/// cut short (an answer without a body, a PUT's, is lost whole, after the
/// request took effect), a body with a wrong byte, a slow answer,
/// conditional headers dropped, or a DeleteObjects answered 200 unheard. A small Python server on 127.0.0.1, stopped when the test is done;
/// its state sits behind one lock, so requests racing for a fault get it once.
final class FaultProxy {
    /// What the next faulted requests get.
    enum Fault: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case error500 = "500", error503 = "503", error409 = "409"
        case reset, truncated, wrongBytes = "wrong-bytes", slow
        case conditionsIgnored = "conditions-ignored"
        /// DeleteObjects answered 200 without deleting, as some services have.
        case deleteIgnored = "delete-ignored"
        var testDescription: String { rawValue }
    }

    let endpoint: String
    private let stateFile: String
    private let process: ChildProcess

    /// A proxy to `target` (moto's endpoint), its state and log in `folder`.
    init(to target: String, in folder: String) throws {
        let port = ChildProcess.freePort()
        endpoint = "http://127.0.0.1:\(port)"
        stateFile = folder + "/fault.json"
        try Data("{}".utf8).write(to: URL(fileURLWithPath: stateFile))
        let targetPort = String(target.split(separator: ":").last!)
        process = try ChildProcess("python3", ["-c", Self.script, String(port), targetPort, stateFile], log: folder + "/fault-proxy.log")
        let endpoint = endpoint
        guard poll(seconds: 10, every: 0.05, until: {
            (try? ChildProcess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", endpoint + "/"]))?.output == "200"
        }) else { throw ChildProcessError.failed("the fault proxy", "did not answer") }
    }

    deinit { process.stop(grace: 2) }

    /// Injects `fault` into the next `count` requests (of `method` only, and to a path holding `path`, if given).
    func inject(_ fault: Fault, count: Int, method: String? = nil, path: String = "") throws {
        let state: [String: Any] = ["fault": fault.rawValue, "remaining": count, "method": method ?? "", "path": path]
        try JSONSerialization.data(withJSONObject: state).write(to: URL(fileURLWithPath: stateFile))
    }

    /// Lets every request through again.
    func clear() throws { try Data("{}".utf8).write(to: URL(fileURLWithPath: stateFile)) }

    private static let script = #"""
        import http.server, http.client, json, socket, struct, sys, threading, time
        port, target, state_file = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
        lock = threading.Lock()

        def take(method, path):
            with lock:
                with open(state_file) as f:
                    state = json.load(f)
                if state.get("remaining", 0) <= 0 or state.get("method") not in ("", None, method) or state.get("path", "") not in path:
                    return None
                state["remaining"] -= 1
                with open(state_file, "w") as f:
                    json.dump(state, f)
                return state["fault"]

        class Proxy(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            def log_message(self, *args): pass
            def handle_any(self):
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length) if length else b""
                fault = take(self.command, self.path)
                if fault in ("500", "503", "409"):
                    text = b"<Error><Code>Injected</Code><Message>injected</Message></Error>"
                    self.send_response(int(fault)); self.send_header("Content-Length", str(len(text))); self.end_headers()
                    self.wfile.write(text); return
                if fault == "delete-ignored":
                    text = b'<?xml version="1.0" encoding="UTF-8"?><DeleteResult></DeleteResult>'
                    self.send_response(200); self.send_header("Content-Length", str(len(text))); self.end_headers()
                    self.wfile.write(text); return
                if fault == "slow":
                    time.sleep(4)
                dropped = ("host", "connection") + (("if-none-match", "if-match") if fault == "conditions-ignored" else ())
                headers = {k: v for k, v in self.headers.items() if k.lower() not in dropped}
                upstream = http.client.HTTPConnection("127.0.0.1", target, timeout=30)
                upstream.request(self.command, self.path, body, headers)
                answer = upstream.getresponse()
                data = answer.read()
                if fault == "wrong-bytes" and data:
                    data = bytes([data[0] ^ 1]) + data[1:]
                if fault in ("reset", "truncated") and not data:
                    # No body to cut (a PUT's answer): the whole answer is lost, after the request took effect.
                    if fault == "reset":
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                self.send_response(answer.status)
                for k, v in answer.getheaders():
                    if k.lower() not in ("content-length", "transfer-encoding", "connection", "date", "server"):
                        self.send_header(k, v)
                self.send_header("Content-Length", answer.getheader("Content-Length", "0") if self.command == "HEAD" else str(len(data)))
                self.end_headers()
                if self.command == "HEAD":
                    return
                if fault in ("reset", "truncated"):
                    self.wfile.write(data[: len(data) // 2]); self.wfile.flush()
                    if fault == "reset":
                        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    self.close_connection = True
                    return
                self.wfile.write(data)
            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = handle_any

        http.server.ThreadingHTTPServer(("127.0.0.1", port), Proxy).serve_forever()
        """#
}
