"""The one hash that decides every split, sample and order of the data
(the corpus build, the language identifier's data and training): the text's
SHA-256, its first 48 bits, the same on every machine and run (Python's own
hash() is salted per process)."""
import hashlib


def stable_hash(text):
    return int(hashlib.sha256(text.encode("utf-8")).hexdigest()[:12], 16)
