"""Big-endian fields of a byte string, each read checked against its end:
the one reader of the binary formats the corpus build parses itself (Qt's
.qm and .rcc, R's serialization)."""
import struct


class Bytes:
    def __init__(self, data, what):
        self.data, self.pos, self.what = data, 0, what

    def take(self, n):
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("%s: truncated at byte %d (%d more wanted)" % (self.what, self.pos, n))
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def u8(self):
        return self.take(1)[0]

    def u16(self):
        return struct.unpack(">H", self.take(2))[0]

    def u32(self):
        return struct.unpack(">I", self.take(4))[0]

    def i32(self):
        return struct.unpack(">i", self.take(4))[0]

    def at(self, pos):
        if not 0 <= pos <= len(self.data):
            raise ValueError("%s: offset %d outside the file" % (self.what, pos))
        self.pos = pos
        return self
