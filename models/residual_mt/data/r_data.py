"""Character vectors from an R package's data, read without R: the lazy-load
database an installed package keeps its datasets in (data/Rdata.rdx, the
index: a gzip-compressed serialized list; data/Rdata.rdb, the values: each
a 4-byte big-endian length and a zlib stream, at the offset and length the
index gives), both in R's serialization format (XDR, versions 2 and 3).

Only what datasets of text need is read: vectors (character, logical,
integer, double, list), pairlists, symbols, attributes, references to
symbols already read and compact sequences (1:n as R writes it); anything
else (closures, environments, other ALTREP forms) is an error that names
the type.  A character or integer NA is None.
"""
import gzip
import struct
import zlib

from .binary import Bytes

# SEXP types (R Internals, "Serialization formats")
NILSXP, SYMSXP, LISTSXP, CHARSXP, LGLSXP, INTSXP, REALSXP, STRSXP, VECSXP = 0, 1, 2, 9, 10, 13, 14, 16, 19
REFSXP, NILVALUE_SXP, ALTREP_SXP = 255, 254, 238
_IS_OBJECT, _HAS_ATTR, _HAS_TAG = 1 << 8, 1 << 9, 1 << 10
_NA_INT = -(1 << 31)


class Unserializer(Bytes):
    def __init__(self, data, what):
        super().__init__(data, what)
        self.refs = []

    def int(self):
        return self.i32()

    def length(self):
        n = self.int()
        if n == -1:  # a long vector: two more ints
            n = (self.int() << 32) + self.int()
        if n < 0 or n > len(self.data) - self.pos:  # every element takes a byte at least
            raise ValueError("%s: a length of %d at byte %d does not fit the data" % (self.what, n, self.pos))
        return n

    def header(self):
        if self.take(2) != b"X\n":
            raise ValueError("%s: not R's XDR serialization" % self.what)
        version = self.int()
        self.take(8)  # the writer's R version, the oldest reader's
        if version == 3:
            self.take(self.length())  # the native encoding's name
        elif version != 2:
            raise ValueError("%s: serialization version %d unknown" % (self.what, version))
        return self.item()

    def item(self):
        flags = self.int()
        kind = flags & 0xFF
        if kind == NILVALUE_SXP:
            return None
        if kind == REFSXP:
            index = (flags >> 8) or self.int()
            if not 1 <= index <= len(self.refs):
                raise ValueError("%s: reference %d to nothing read" % (self.what, index))
            return self.refs[index - 1]
        if kind == SYMSXP:
            symbol = Symbol(self.item())
            self.refs.append(symbol)
            return symbol
        if kind == LISTSXP:
            return self.pairlist(flags)
        if kind == ALTREP_SXP:
            return self.altrep()
        value = self.vector(kind, flags)
        if flags & _HAS_ATTR:
            return Attributed(value, self.item())
        return value

    def pairlist(self, flags):
        """{tag: value} (or [values] without tags) of a pairlist."""
        items = []
        while True:
            attributes = self.item() if flags & _HAS_ATTR else None  # noqa: F841 (a pairlist's own, unused)
            tag = self.item() if flags & _HAS_TAG else None
            items.append((tag.name if isinstance(tag, Symbol) else tag, self.item()))
            flags = self.int()
            if flags & 0xFF == NILVALUE_SXP:
                break
            if flags & 0xFF != LISTSXP:  # a dotted pair's tail: not in data
                raise ValueError("%s: a pairlist ends in type %d" % (self.what, flags & 0xFF))
        return dict(items) if all(t is not None for t, _ in items) else [v for _, v in items]

    def altrep(self):
        """A compact sequence R wrote in its short form (1:n, seq_len):
        (class, package, type), its state (length, start, step), attributes."""
        info, state, attributes = self.item(), self.item(), self.item()
        name = info[0].name if isinstance(info, list) and isinstance(info[0], Symbol) else "?"
        if name not in ("compact_intseq", "compact_realseq") or not isinstance(state, list) or len(state) != 3:
            raise ValueError("%s: R's compact form %s not read here" % (self.what, name))
        n, start, step = state
        if not 0 <= n <= len(self.data) * 8:
            raise ValueError("%s: a compact sequence of %s elements" % (self.what, n))
        cast = int if name == "compact_intseq" else float
        value = [cast(start + k * step) for k in range(int(n))]
        return value if attributes is None else Attributed(value, attributes)

    def vector(self, kind, flags):
        if kind == CHARSXP:
            n = self.int()
            return None if n == -1 else self.take(n).decode("utf-8", errors="replace")
        if kind in (LGLSXP, INTSXP):
            n = self.length()
            return [None if v == _NA_INT else v for v in struct.unpack(">%di" % n, self.take(4 * n))]
        if kind == REALSXP:
            n = self.length()
            return list(struct.unpack(">%dd" % n, self.take(8 * n)))
        if kind in (STRSXP, VECSXP):
            return [self.item() for _ in range(self.length())]
        raise ValueError("%s: R type %d not read here" % (self.what, kind))


class Symbol:
    def __init__(self, name):
        self.name = name


class Attributed:
    """A value with attributes (names, class, dim ...)."""

    def __init__(self, value, attributes):
        self.value, self.attributes = value, attributes


def unserialize(data, what="R data"):
    return Unserializer(data, what).header()


def plain(value):
    return value.value if isinstance(value, Attributed) else value


def named(value, what):
    """{name: element} of a list R gave names."""
    if not isinstance(value, Attributed) or not isinstance(value.attributes, dict) \
            or len(value.attributes.get("names") or []) != len(value.value or []):
        raise ValueError("%s: a list without names" % what)
    return dict(zip(value.attributes["names"], value.value))


def lazy_load_index(rdx_bytes):
    """{name: (offset, length)} of a lazy-load database's index."""
    index = named(unserialize(gzip.decompress(rdx_bytes), "Rdata.rdx"), "Rdata.rdx")
    if "variables" not in index:
        raise ValueError("Rdata.rdx: no variables")
    return {name: tuple(plain(spot)) for name, spot in named(index["variables"], "Rdata.rdx variables").items()}


def lazy_load_value(rdb_bytes, spot, name):
    """One value of the database, from its (offset, length) in the index."""
    offset, length = spot
    if offset < 0 or length < 5 or offset + length > len(rdb_bytes):
        raise ValueError("Rdata.rdb: %s lies outside the file" % name)
    chunk = rdb_bytes[offset:offset + length]
    size = struct.unpack(">I", chunk[:4])[0]
    data = zlib.decompress(chunk[4:])
    if len(data) != size:
        raise ValueError("Rdata.rdb: %s unpacks to %d bytes, not %d" % (name, len(data), size))
    return unserialize(data, name)
