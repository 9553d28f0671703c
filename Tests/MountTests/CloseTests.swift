import Foundation
import Testing

/// docs/close-commit.md: every close commits (a bare `: > k` and `touch k`
/// included), a refused write leaves the old value or no key, and a key
/// being created reads as empty to everyone but its writer.
@Suite("The edges of close() on a real mount", .enabled(if: MountEnvironment.canMount, "FUSE cannot be mounted here"))
struct CloseTests {
    @Test("a bare O_TRUNC is seen by the next stat and open right after close(), 1000 times; : > k and touch too")
    func bareTruncateSeenAtOnce() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                python3 -c 'import os, sys
                path = sys.argv[1]
                stale = 0
                for i in range(1000):
                    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CREAT)
                    os.write(fd, b"full\n")
                    os.close(fd)
                    os.close(os.open(path, os.O_WRONLY | os.O_TRUNC))
                    stale += os.stat(path).st_size != 0 or len(open(path, "rb").read()) != 0
                print("old value seen after a bare O_TRUNC:", stale)' $M/k
                stale=0 missing=0
                for i in $(seq 1 100); do
                    echo full > $M/s; : > $M/s; [ -s $M/s ] && stale=$((stale + 1))
                    touch $M/new$i; [ -e $M/new$i ] || missing=$((missing + 1))
                done
                echo "old value after : > k: $stale; new key missing after touch: $missing"
                kvfs get k $S | wc -c
                """#, timeout: 120)
            #expect(output == "old value seen after a bare O_TRUNC: 0\nold value after : > k: 0; new key missing after touch: 0\n0\n")
        }
    }

    @Test("a value stored in another form than written (text without its newline) shows its stored size right after close(), 300 times, with and without a stat between the write and the close")
    func storedFormSizeSeenAtOnce() throws {
        try withMount { sandbox in
            // Without a stat in between, the daemon sends the kernel no notification: the
            // write made it drop the size it had (KeyFileSystem.commitBuffer); with one, it does.
            let output = try sandbox.ok(#"""
                python3 -c 'import os, sys
                path = sys.argv[1]
                stale = []
                for i in range(300):
                    value = b"v" * (i % 7 + 1)
                    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | (os.O_CREAT if i % 3 == 0 else 0), 0o644)
                    os.write(fd, value)
                    if i % 2: os.fstat(fd)
                    os.close(fd)
                    sizes = (os.stat(path).st_size, len(open(path, "rb").read()))
                    if sizes != (len(value) + 1,) * 2: stale.append((i, sizes))
                    if i % 3 == 2: os.unlink(path)
                print("stale sizes:", stale[:5])' $M/k
                """#, timeout: 120)
            #expect(output == "stale sizes: []\n")
        }
    }

    @Test("what close() and unlink() acknowledged is what the writer, another process and the next create see at once, 1000 times")
    func acknowledgedChangesSeenAtOnce() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                python3 -c 'import os, sys
                d = sys.argv[1]
                path = d + "/k"
                stale, seen, kept = [], [], []
                numbers, done = os.pipe(), os.pipe()
                child = os.fork()
                if child == 0:
                    # Another process reads the key as soon as the writer says it closed it.
                    os.close(numbers[1])
                    told = os.fdopen(numbers[0], "rb", buffering=0)
                    for line in iter(told.readline, b""):
                        i = int(line)
                        with open(path, "rb") as f: value = f.read()
                        if int(value) < i: stale.append((i, value))
                    os.write(done[1], repr(stale[:5]).encode())
                    os._exit(0)
                os.close(numbers[0])
                tell = os.fdopen(numbers[1], "wb", buffering=0)
                for i in range(1000):
                    fd = os.open(path, os.O_WRONLY | os.O_TRUNC | os.O_CREAT, 0o644)
                    os.write(fd, b"%d\n" % i)
                    os.close(fd)
                    tell.write(b"%d\n" % i)
                    with open(path, "rb") as f: value = f.read()
                    if value != b"%d\n" % i: stale.append((i, value))
                    name = d + "/u%d" % (i % 10)
                    os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
                    os.unlink(name)
                    if os.path.exists(name) or ("u%d" % (i % 10)) in os.listdir(d): seen.append(i)
                tell.close()
                os.waitpid(child, 0)
                print("stale reads by the writer:", stale[:5])
                print("stale reads by another process:", os.read(done[0], 4096).decode())
                print("unlinked keys still there:", seen[:5])' $M
                kvfs get k $S
                ls $M
                """#, timeout: 180)
            #expect(output == "stale reads by the writer: []\nstale reads by another process: []\nunlinked keys still there: []\n999\nk\n")
        }
    }

    @Test("echo big > k refused for quota (EDQUOT from write) leaves the old value, through standard output or another descriptor; so does a refused type")
    func refusedRedirectionKeepsOldValue() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                echo old > $M/k
                head -c 1048577 /dev/zero | tr '\0' x > $M/k 2>/dev/null; echo "big: $?"
                bytes $M/k
                kvfs set n 7 --type integer $S
                echo seven > $M/n 2>/dev/null; bytes $M/n
                ( exec > $M/k; echo "$(head -c 1048577 /dev/zero | tr '\0' y)" ) 2>/dev/null; echo "subshell: $?"
                bytes $M/k
                ( exec 7> $M/k; python3 -c 'import os; os.write(7, b"z" * 1048577)' ) 2>/dev/null; echo "descriptor 7: $?"
                bytes $M/k
                kvfs get k $S
                """#)
            #expect(output == "big: 1\nb'old\\n'\nb'7\\n'\nsubshell: 1\nb'old\\n'\ndescriptor 7: 0\nb'old\\n'\nold\n")
        }
    }

    @Test("kill -9 right after bare truncates and creates return, 10 rounds: no acknowledged change is lost")
    func killNineAfterBareCloses() throws {
        try withSandbox { sandbox in
            try sandbox.mount()
            var lost: [String] = []
            var acknowledged = 0
            for round in 1...10 {
                // cp from /dev/null is an O_TRUNC open and a close with no write that, unlike the
                // shell's `: >`, checks close(); touch checks it too. The kill follows the last close at once.
                let result = try sandbox.run(#"""
                    pid=$(jq .pid $M/.kvfs/status)
                    for i in 1 2 3 4 5; do echo full > $M/t\#(round)-$i; done
                    : > acked
                    for i in 1 2 3 4 5; do
                        cp /dev/null $M/t\#(round)-$i && echo "empty t\#(round)-$i" >> acked
                        touch $M/c\#(round)-$i && echo "exists c\#(round)-$i" >> acked
                    done
                    kill -9 $pid
                    kvfs mount $M $S || exit 1
                    while read what k; do
                        case $what in
                            empty) [ -s $M/$k ] && echo "lost truncate of $k" ;;
                            exists) [ -e $M/$k ] || echo "lost create of $k" ;;
                        esac
                    done < acked
                    echo "acknowledged $(wc -l < acked)"
                    """#)
                #expect(result.status == 0, "round \(round): \(result)")
                let lines = result.output.split(separator: "\n").map(String.init)
                lost += lines.filter { $0.hasPrefix("lost") }
                acknowledged += lines.last.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
                if result.status != 0 { break }
            }
            print("kill -9 right after bare closes: \(acknowledged) acknowledged truncates and creates, \(lost.count) lost")
            #expect(lost.isEmpty, "\(lost)")
            #expect(acknowledged == 100)
        }
    }

    @Test("a key being created reads as empty to others while its writer writes 64 KB chunks")
    func newKeyEmptyUntilCommitted() throws {
        try withMount { sandbox in
            let output = try sandbox.ok(#"""
                python3 -c 'import os, sys, subprocess
                path = sys.argv[1]
                # The reader is another process, started before the open: a child forked after
                # it would inherit the descriptor, and its close (at exec) would commit the buffer.
                reader = subprocess.Popen([sys.executable, "-c", "\n".join([
                    "import os, subprocess, sys",
                    "for line in sys.stdin:",
                    "    p = line.strip()",
                    "    sizes = {os.stat(p).st_size, len(open(p, \"rb\").read())}",
                    "    sizes.add(int(subprocess.run([\"wc\", \"-c\", p], capture_output=True).stdout.split()[0]))",
                    "    print(*sorted(sizes), flush=True)"])], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
                fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
                seen = set()
                for i in range(6):
                    os.write(fd, b"x" * 65536)
                    reader.stdin.write(path + "\n"); reader.stdin.flush()
                    seen.update(int(size) for size in reader.stdout.readline().split())
                print("others saw sizes", sorted(seen), "writer sees", os.fstat(fd).st_size)
                os.close(fd)
                reader.stdin.write(path + "\n"); reader.stdin.flush()
                print("after close", reader.stdout.readline().strip())' $M/new
                """#)
            #expect(output == "others saw sizes [0] writer sees 393216\nafter close 393217\n")
        }
    }

    @Test("after a refused create the name is free: echo, rm, cat, kvfs set behave as if it never was")
    func refusedCreateLeavesNameFree() throws {
        try withMount { sandbox in
            let output = try sandbox.run(#"""
                printf '<plist><bogus' > $M/new; echo "bogus: $?"
                cat $M/new 2>&1 | sed 's/.*: //'
                rm $M/new 2>&1 | sed 's/.*: //'
                echo hi > $M/new; echo "echo: $?"; cat $M/new
                printf '<plist><bogus' > $M/new2
                kvfs set new2 there $S; echo "set: $?"; cat $M/new2
                head -c 1048577 /dev/zero > $M/new3 2>/dev/null; echo "too big: $?"
                echo fits > $M/new3; echo "echo: $?"; cat $M/new3
                ls $M | tr '\n' ' '
                """#)
            #expect(output.output == """
                bogus: 0
                No such file or directory
                No such file or directory
                echo: 0
                hi
                set: 0
                there
                too big: 1
                echo: 0
                fits
                new new2 new3 
                """, "\(output)")
        }
    }
}
