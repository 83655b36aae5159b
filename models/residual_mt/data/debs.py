"""Debian packages read as files: `apt-get download` into a scratch folder
and `dpkg-deb -x` into scratch/root (nothing installed), each .deb once."""
import os
import subprocess


def _deb_of(scratch, package):
    debs = sorted(f for f in os.listdir(scratch) if f.startswith(package + "_") and f.endswith(".deb"))
    return debs[-1] if debs else None


def unpack(scratch, packages):
    """Unpacks the packages' .debs (downloaded if absent) into scratch/root;
    returns (root, {package: version})."""
    os.makedirs(scratch, exist_ok=True)
    root = os.path.join(scratch, "root")
    versions = {}
    for package in packages:
        deb = _deb_of(scratch, package)
        if deb is None:
            subprocess.run(["apt-get", "download", package], cwd=scratch, check=True, capture_output=True)
            deb = _deb_of(scratch, package)
        marker = os.path.join(root, ".unpacked-" + deb)
        if not os.path.exists(marker):
            subprocess.run(["dpkg-deb", "-x", os.path.join(scratch, deb), root], check=True)
            open(marker, "w").close()
        versions[package] = deb.split("_")[1].replace("%3a", ":")
    return root, versions
