"""Writes inputs at the decoding limits (DecodingLimits.standard: 2^17 values,
depth 256, 2 MiB of content; frames up to 4 MiB) for mount-scripts/fuzz.sh
--measure, one folder per fuzz target, in the folder given."""
import os
import struct
import sys

out = sys.argv[1]


def save(target, name, data):
    os.makedirs(os.path.join(out, target), exist_ok=True)
    with open(os.path.join(out, target, name), "wb") as f:
        f.write(data)


def crc32c(data):
    table = [0] * 256
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table[i] = c
    crc = 0xFFFFFFFF
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def bplist(objects, ref_size):
    body = b"bplist00"
    offsets = []
    for o in objects:
        offsets.append(len(body))
        body += o
    table = len(body)
    offset_size = 4
    body += b"".join(struct.pack(">I", o) for o in offsets)
    return body + bytes([0] * 6 + [offset_size, ref_size]) + struct.pack(">QQQ", len(objects), 0, table)


def shared(levels):
    """Arrays of 16 references to the next, `levels` deep, then an integer."""
    objects = [bytes([0xAF, 0x10, 16]) + bytes([i + 1]) * 16 for i in range(levels)]
    return bplist(objects + [b"\x10\x01"], 1)


save("binary-plist", "shared-within-limits", shared(4))       # 69,905 values
save("binary-plist", "shared-past-limits", shared(5))         # 1,118,481: refused at 2^17
save("binary-plist", "flat-2^17", bplist([bytes([0xAF, 0x12]) + struct.pack(">I", 131071) + b"\x01" * 131071, b"\x09"], 1))
save("binary-plist", "data-1MiB", bplist([bytes([0x4F, 0x12]) + struct.pack(">I", 1 << 20) + b"\xAB" * (1 << 20)], 1))
save("xml-plist", "flat-2^17", b"<plist><array>" + b"<true/>" * 131071 + b"</array></plist>")
save("xml-plist", "entities-1MiB", b"<plist><string>" + b"&amp;" * 200000 + b"</string></plist>")
save("xml-plist", "depth-256", b"<plist>" + b"<array>" * 256 + b"</array>" * 256 + b"</plist>")
save("xml-plist", "depth-1000000", b"<plist>" + b"<array>" * 1000000 + b"</array>" * 1000000 + b"</plist>")

device = bytes(range(16))


def record(version, value, ms=5, key=b"k"):
    return bytes([version]) + struct.pack("<Q", ms << 16) + device + b"\x01" + struct.pack("<I", len(key)) + key + value


def frame(payload):
    return struct.pack("<II", len(payload), crc32c(payload)) + payload


flat = b"\x06" + struct.pack("<I", 131071) + b"\x03\x01" * 131071
save("record", "flat-2^17", record(2, flat))
save("record", "data-1MiB", record(2, b"\x05" + struct.pack("<I", 1 << 20) + b"\xAB" * (1 << 20)))
save("record", "v1-shared-past-limits", record(1, b"\x06" + struct.pack("<I", len(shared(5))) + shared(5)))
n = 1 << 20
bomb = bytearray(n)
for u in range(0, n - 9, 9):
    bomb[u:u + 4] = struct.pack("<I", n - u - 8)
    bomb[u + 4] = 0xA5
    bomb[u + 6] = 1
    bomb[u + 8] = 1
save("journal-frame", "checksum-bomb-1MiB", bytes(bomb))
small = frame(record(2, b"\x01" + struct.pack("<q", 7)))
save("journal-frame", "records-1MiB", small * (n // len(small)))
save("journal-frame", "one-frame-flat-2^17", frame(record(2, flat)))


def roster(members, epoch, name=b"n" * 64, store=b"s" * 64):
    """A roster version's bytes (docs/sealed.md § Roster); the signature is not checked by the decoder."""
    body = b"KVROSTER\x01" + bytes([len(store)]) + store + struct.pack("<Q", 2) + b"\x07" * 32 + struct.pack("<I", epoch)
    body += struct.pack("<H", members)
    for i in range(members):
        body += bytes([2 if i == 0 else 1]) + struct.pack("<Q", i) * 2 + bytes([len(name)]) + name + b"\x09" * (64 + 92)
    earlier = b"" if epoch == 1 else b"\x0b" * (28 + 32 * (epoch - 1))
    return body + struct.pack("<H", len(earlier)) + earlier + b"\x00" * 16 + b"\x0c" * 64


save("roster", "at-limits-256-members-1024-epochs", roster(256, 1024))
save("roster", "past-limits-257-members", roster(257, 1))
save("roster", "past-limits-1025-epochs", roster(2, 1025))
save("pairing", "request-longest", b"KVPAIRRQ\x01" + bytes([64]) + b"s" * 64 + b"\x01" * 16 + bytes([64]) + b"n" * 64 + b"\x02" * 96)
save("pairing", "accept", b"KVPAIRAC\x01" + bytes([36]) + b"s" * 36 + b"\x01" * 16 + struct.pack("<Q", 2) + b"\x03" * 64)
