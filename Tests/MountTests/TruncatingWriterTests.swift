import Foundation
import Testing

/// docs/close-commit.md § Buffers, and issue 11: while another process truncates a key
/// (O_TRUNC) and writes into it, readers see the old value and its size
/// until the writer's close commits, never the kernel's idea of the size
/// from the writer's open and writes.
@Suite("Readers while another process truncates", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct TruncatingWriterTests {
    @Test("while another process holds k open with O_TRUNC and writes into it, readers see the old value and size")
    func truncationBySecondProcess() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                echo "old value" > $M/k
                cat $M/k > /dev/null; stat -c %s $M/k > /dev/null  # what the kernel caches, cached
                # The writer: open with O_TRUNC, wait, write, wait, close; each step told by a file in $T.
                python3 -c 'import os, sys, time
                def wait(name):
                    while not os.path.exists(name): time.sleep(0.01)
                fd = os.open(sys.argv[1] + "/k", os.O_WRONLY | os.O_TRUNC)
                open("truncated", "w").close(); wait("go")
                os.write(fd, b"a much longer new value\n")
                open("written", "w").close(); wait("close")
                os.close(fd)
                open("closed", "w").close()' $M &
                until [ -e truncated ]; do sleep 0.01; done
                cat $M/k; stat -c %s $M/k; wc -c < $M/k
                touch go; until [ -e written ]; do sleep 0.01; done
                cat $M/k; stat -c %s $M/k
                python3 -c 'import sys; print(open(sys.argv[1], "rb").read(100))' $M/k
                touch close; until [ -e closed ]; do sleep 0.01; done
                cat $M/k; stat -c %s $M/k
                """#)
            #expect(output == """
                old value
                10
                10
                old value
                10
                b'old value\\n'
                a much longer new value
                24

                """)
        }
    }
}
