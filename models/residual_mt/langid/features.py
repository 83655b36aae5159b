"""The language identifier's features, from the engine's own C function
(rmt_langid_features in src/langid_features.c) through ctypes: training and
the engine cannot disagree about what a feature is.  The C file is compiled
once into a shared library in the scratch folder."""
import ctypes
import os
import subprocess

import numpy as np

from .. import paths

ROOT = paths.ROOT
SOURCES = ["src/langid_features.c", "src/error.c"]


def load_library(scratch):
    lib_path = os.path.join(scratch, "librmt_langid_features.so")
    sources = [os.path.join(ROOT, s) for s in SOURCES]
    newest = max(os.path.getmtime(s) for s in sources + [os.path.join(ROOT, "src/langid.h")])
    if not os.path.exists(lib_path) or os.path.getmtime(lib_path) < newest:
        subprocess.run(["cc", "-std=c11", "-O2", "-shared", "-fPIC", "-I" + os.path.join(ROOT, "src"), "-o", lib_path]
                       + sources, check=True)
    lib = ctypes.CDLL(lib_path)
    lib.rmt_langid_features.restype = ctypes.c_int
    lib.rmt_langid_features.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p, ctypes.c_void_p,
                                        ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    return lib


class Featurizer:
    def __init__(self, scratch, orders, buckets):
        self.lib = load_library(scratch)
        self.orders = np.array(orders, dtype=np.int32)
        self.buckets = np.array(buckets, dtype=np.int32)
        self.cap = 4096
        self.rows = np.zeros(self.cap, dtype=np.int32)
        self.groups = np.zeros(self.cap, dtype=np.int32)

    def __call__(self, text):
        """(rows, groups) of one text, as int32 arrays (copies)."""
        data = text.encode("utf-8")
        while True:
            n = self.lib.rmt_langid_features(data, len(data), self.orders.ctypes.data, self.buckets.ctypes.data,
                                             len(self.orders), self.rows.ctypes.data, self.groups.ctypes.data,
                                             self.cap)
            if n < 0:
                raise ValueError("rmt_langid_features failed: %d" % n)
            if n <= self.cap:
                return self.rows[:n].copy(), self.groups[:n].copy()
            self.cap = n
            self.rows = np.zeros(n, dtype=np.int32)
            self.groups = np.zeros(n, dtype=np.int32)
