"""Debian packages read as files: `apt-get download` into a scratch folder
and unpacked into scratch/root (`dpkg-deb --fsys-tarfile | tar`, only the
files asked for; nothing installed), each .deb once."""
import hashlib
import os
import subprocess


def _deb_of(scratch, package):
    debs = sorted(f for f in os.listdir(scratch) if f.startswith(package + "_") and f.endswith(".deb"))
    return debs[-1] if debs else None


def extract(deb, out_dir, patterns):
    """Unpacks the files of deb whose paths match one of the tar wildcards
    (e.g. "*/es/LC_MESSAGES/*.mo") into out_dir; no match is not an error."""
    os.makedirs(out_dir, exist_ok=True)
    unpack = subprocess.Popen(["dpkg-deb", "--fsys-tarfile", deb], stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", out_dir, "--wildcards"] + list(patterns),
                   stdin=unpack.stdout, capture_output=True)
    unpack.stdout.close()
    if unpack.wait() != 0:
        raise RuntimeError("dpkg-deb could not read " + deb)


def unpack(scratch, packages, patterns=("*",)):
    """Unpacks the files matching patterns (tar wildcards) of the packages'
    .debs (downloaded if absent) into scratch/root; returns (root,
    {package: version})."""
    os.makedirs(scratch, exist_ok=True)
    root = os.path.join(scratch, "root")
    versions = {}
    for package in packages:
        deb = _deb_of(scratch, package)
        if deb is None:
            subprocess.run(["apt-get", "download", package], cwd=scratch, check=True, capture_output=True)
            deb = _deb_of(scratch, package)
        # a marker per .deb and set of patterns: other patterns unpack again
        wanted = hashlib.sha256("\n".join(patterns).encode()).hexdigest()[:12]
        marker = os.path.join(root, ".unpacked-%s-%s" % (deb, wanted))
        if not os.path.exists(marker):
            extract(os.path.join(scratch, deb), root, patterns)
            open(marker, "w").close()
        versions[package] = deb.split("_")[1].replace("%3a", ":")
    return root, versions
