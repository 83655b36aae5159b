#!/usr/bin/env python3
"""Writes manifest.json for a model directory: SHA-256 and size of each file
the browser/Node loader fetches (js/load/loader.js verifies them; the service
worker derives its cache version from the manifest).

    python3 models/make_manifest.py models/es-en [more dirs...]
    python3 models/make_manifest.py --check models/es-en   # exit 1 if stale
"""
import hashlib
import json
import os
import sys

FILES = ["config.json", "model.safetensors", "spm.model"]


def manifest_for(directory):
    files = {}
    for name in FILES:
        path = os.path.join(directory, name)
        if not os.path.isfile(path):
            sys.exit(f"make_manifest: {path} is missing")
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                digest.update(chunk)
        files[name] = {"sha256": digest.hexdigest(), "size": os.path.getsize(path)}
    return {"format": "residual-mt-manifest/1", "files": files}


def text_for(directory):
    return json.dumps(manifest_for(directory), indent=2) + "\n"


def write(directory):
    """directory/manifest.json, for the files as they are now."""
    with open(os.path.join(directory, "manifest.json"), "w") as f:
        f.write(text_for(directory))


def main(argv):
    check = "--check" in argv
    dirs = [a for a in argv if a != "--check"]
    if not dirs:
        sys.exit(__doc__)
    stale = False
    for directory in dirs:
        text = text_for(directory)
        path = os.path.join(directory, "manifest.json")
        old = open(path).read() if os.path.exists(path) else None
        if check:
            if old != text:
                print(f"{path} is missing or stale")
                stale = True
        elif old != text:
            with open(path, "w") as f:
                f.write(text)
            print(f"wrote {path}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
