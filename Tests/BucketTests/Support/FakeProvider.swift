import Foundation
import TestSupport

/// An S3 endpoint on 127.0.0.1 that gets conditional writes wrong as some
/// providers do, to check that `kvfs bucket add`'s probe refuses it: a small
/// Python server, stopped when the test is done. `ignoring` answers every PUT
/// 200, whatever its conditions; `unimplemented` answers a conditional PUT
/// 501 NotImplemented (as B2 is reported to). DELETE is always 204.
final class FakeProvider {
    enum Behaviour: String { case ignoring, unimplemented }

    let endpoint: String
    private let process: ChildProcess

    init(_ behaviour: Behaviour, logIn folder: String) throws {
        let port = ChildProcess.freePort()
        endpoint = "http://127.0.0.1:\(port)"
        let script = """
            import http.server, sys
            mode = sys.argv[2]
            class Handler(http.server.BaseHTTPRequestHandler):
                def answer(self, status, body=b""):
                    self.send_response(status)
                    self.send_header("ETag", '"0123"')
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                def do_PUT(self):
                    self.rfile.read(int(self.headers.get("Content-Length", 0)))
                    conditional = "If-None-Match" in self.headers or "If-Match" in self.headers
                    if mode == "unimplemented" and conditional:
                        self.answer(501, b"<Error><Code>NotImplemented</Code><Message>no</Message></Error>")
                    else:
                        self.answer(200)
                def do_DELETE(self):
                    self.answer(204)
                def do_GET(self):
                    self.answer(200)
            http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Handler).serve_forever()
            """
        process = try ChildProcess("python3", ["-c", script, String(port), behaviour.rawValue], log: folder + "/fake-provider.log")
        let endpoint = endpoint
        guard poll(seconds: 10, every: 0.05, until: {
            (try? ChildProcess.run("curl", ["-s", "-o", "/dev/null", "-w", "%{http_code}", endpoint + "/"]))?.output == "200"
        }) else { throw ChildProcessError.failed("the fake provider", "did not answer") }
    }

    deinit { process.stop(grace: 2) }
}
