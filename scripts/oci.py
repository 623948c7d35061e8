#!/usr/bin/env python3
"""OCI archives for scripts/release.sh, written byte for byte the same from the same inputs.

  oci.py index OUT.tar REF EPOCH ARCHIVE...
      One OCI archive (a tar of an OCI image layout) holding an image index over the single-platform
      images of the ARCHIVEs (scripts/images.sh's, one per architecture), with every blob they hold.
      index.json names the index REF (a full reference, REGISTRY/NAME:VERSION), so that skopeo, crane
      and `ctr images import` take the index as the image. Prints the index's digest.
  oci.py sbom ARCHIVE NAME VERSION PURL EPOCH
      An SPDX 2.3 JSON document for the one image of ARCHIVE (a single-platform archive): the Debian
      packages its dpkg database lists, the Go modules built into its Go programs (`go version -m`)
      and the project's own programs. PURL is the image's package URL.

Determinism: JSON is written with sorted keys and no spaces, tar members are sorted by name and carry
EPOCH as their time, root as owner and fixed modes; nothing reads the clock.
"""
import gzip
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.parse

INDEX_TYPE = "application/vnd.oci.image.index.v1+json"
MANIFEST_TYPE = "application/vnd.oci.image.manifest.v1+json"


def canonical(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":")).encode()


def digest_of(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


class Archive:
    """A single-platform OCI archive as scripts/images.sh writes it."""

    def __init__(self, path):
        self.tar = tarfile.open(path)
        index = json.loads(self.read("index.json"))
        if len(index["manifests"]) != 1:
            sys.exit(f"oci: {path} holds {len(index['manifests'])} images, not one")
        self.desc = index["manifests"][0]
        if self.desc["mediaType"] != MANIFEST_TYPE:
            sys.exit(f"oci: {path}: {self.desc['mediaType']} is not a single-platform image")
        self.manifest = json.loads(self.blob(self.desc["digest"]))
        self.config = json.loads(self.blob(self.manifest["config"]["digest"]))

    def read(self, name):
        return self.tar.extractfile(name).read()

    def blob(self, digest):
        return self.read("blobs/sha256/" + digest.split(":", 1)[1])

    def platform(self):
        p = {"architecture": self.config["architecture"], "os": self.config["os"]}
        if self.config.get("variant"):
            p["variant"] = self.config["variant"]
        return p

    def blob_digests(self):
        return [self.desc["digest"], self.manifest["config"]["digest"]] + \
               [layer["digest"] for layer in self.manifest["layers"]]


def add_member(out, name, data, epoch, mode=0o644):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = epoch
    info.mode = mode
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    out.addfile(info, io.BytesIO(data))


def add_dir(out, name, epoch):
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mtime = epoch
    info.mode = 0o755
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    out.addfile(info)


def cmd_index(out_path, ref, epoch, archives):
    epoch = int(epoch)
    images = [Archive(p) for p in archives]
    platforms = [json.dumps(a.platform(), sort_keys=True) for a in images]
    if len(set(platforms)) != len(platforms):
        sys.exit("oci: two archives are for the same platform")
    index = {
        "schemaVersion": 2,
        "mediaType": INDEX_TYPE,
        "manifests": [{"mediaType": MANIFEST_TYPE, "digest": a.desc["digest"], "size": a.desc["size"],
                       "platform": a.platform()} for a in images],
    }
    index_bytes = canonical(index)
    index_digest = digest_of(index_bytes)
    tag = ref.rsplit(":", 1)[1]
    top = {"schemaVersion": 2, "mediaType": INDEX_TYPE, "manifests": [{
        "mediaType": INDEX_TYPE, "digest": index_digest, "size": len(index_bytes),
        # containerd reads the first, the OCI tools the second (a tag, as the image-spec says).
        "annotations": {"io.containerd.image.name": ref, "org.opencontainers.image.ref.name": tag}}]}
    blobs = {index_digest: (None, index_bytes)}
    for a in images:
        for d in a.blob_digests():
            blobs.setdefault(d, (a, None))
    tmp = out_path + ".tmp"
    with tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as out:
        add_dir(out, "blobs", epoch)
        add_dir(out, "blobs/sha256", epoch)
        for d in sorted(blobs):
            src, data = blobs[d]
            name = "blobs/sha256/" + d.split(":", 1)[1]
            if data is None:
                member = src.tar.getmember(name)
                info = tarfile.TarInfo(name)
                info.size, info.mtime, info.mode = member.size, epoch, 0o644
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                out.addfile(info, src.tar.extractfile(member))
            else:
                add_member(out, name, data, epoch)
        add_member(out, "index.json", canonical(top), epoch)
        add_member(out, "oci-layout", canonical({"imageLayoutVersion": "1.0.0"}), epoch)
    os.replace(tmp, out_path)
    print(index_digest)


def layer_files(archive, wanted):
    """The last version of each path in wanted (paths without a leading slash) across the image's
    layers, honouring whiteouts; a dict path -> bytes."""
    found = {}
    for layer in archive.manifest["layers"]:
        data = archive.blob(layer["digest"])
        if layer["mediaType"].endswith("+gzip"):
            data = gzip.decompress(data)
        with tarfile.open(fileobj=io.BytesIO(data)) as t:
            for m in t:
                name = m.name.lstrip("./")
                base = os.path.basename(name)
                if base.startswith(".wh."):
                    found.pop(os.path.join(os.path.dirname(name), base[4:]), None)
                elif m.isfile() and wanted(name):
                    found[name] = t.extractfile(m).read()
    return found


def spdx_id(*parts):
    return "SPDXRef-" + re.sub(r"[^A-Za-z0-9.-]", "-", "-".join(parts))


def package(pid, name, version, purl, supplier="NOASSERTION"):
    return {"SPDXID": pid, "name": name, "versionInfo": version, "supplier": supplier,
            "downloadLocation": "NOASSERTION", "filesAnalyzed": False,
            "licenseConcluded": "NOASSERTION", "licenseDeclared": "NOASSERTION",
            "copyrightText": "NOASSERTION",
            "externalRefs": [{"referenceCategory": "PACKAGE-MANAGER", "referenceType": "purl",
                              "referenceLocator": purl}]}


def dpkg_packages(status, arch):
    out = []
    for stanza in status.decode().split("\n\n"):
        fields = dict(re.findall(r"^([A-Za-z-]+): ?(.*)$", stanza, re.M))
        if "installed" not in fields.get("Status", "").split():
            continue
        name, version = fields["Package"], fields["Version"]
        a = fields.get("Architecture", arch)
        purl = f"pkg:deb/debian/{name}@{urllib.parse.quote(version, safe='.-_~')}?arch={a}&distro=debian-12"
        out.append(package(spdx_id("deb", name, a), name, version, purl,
                           "Organization: Debian"))
    return out


def go_modules(data):
    """What `go version -m` reads from a Go program: its toolchain (as pkg:golang/stdlib), its main
    package, its main module and its dependencies. Empty when data is not a Go program."""
    with tempfile.NamedTemporaryFile() as f:
        f.write(data)
        f.flush()
        r = subprocess.run(["go", "version", "-m", f.name], capture_output=True, text=True)
    lines = r.stdout.splitlines()
    if r.returncode != 0 or not lines:
        return []
    toolchain = lines[0].rsplit(" ", 1)[-1]
    out = [package(spdx_id("go", "stdlib", toolchain), "stdlib", toolchain, f"pkg:golang/stdlib@{toolchain}")]
    main_version = "NOASSERTION"
    for line in lines[1:]:
        cols = line.split("\t")
        if len(cols) >= 4 and cols[1] in ("mod", "dep"):
            mod, ver = cols[2], cols[3]
            if cols[1] == "mod":
                main_version = ver
            out.append(package(spdx_id("go", mod, ver), mod, ver, f"pkg:golang/{mod}@{ver}"))
    for line in lines[1:]:
        cols = line.split("\t")
        if len(cols) >= 3 and cols[1] == "path":
            out.append(package(spdx_id("go", cols[2]), cols[2], main_version, f"pkg:golang/{cols[2]}"))
    return out


def image_packages(a, archive_path, version):
    """The packages of the image in archive a, cached under $OCI_SBOM_CACHE when set: finding them
    unpacks every layer (seconds an image), and scripts/images.sh names an archive after its content,
    so the archive's name, the version and this script key the list."""
    cache = os.environ.get("OCI_SBOM_CACHE")
    path = None
    if cache:
        with open(__file__, "rb") as f:
            me = f.read()
        key = digest_of(os.path.basename(archive_path).encode() + b"\0" + version.encode() + b"\0" + me)
        path = os.path.join(cache, key.split(":")[1][:32] + ".json")
        if os.path.exists(path):
            with open(path) as f:
                return json.load(f)
    packages = scan_packages(a, version)
    if path:
        os.makedirs(cache, exist_ok=True)
        with open(path + ".tmp", "w") as f:
            json.dump(packages, f)
        os.replace(path + ".tmp", path)
    return packages


def scan_packages(a, version):
    """The Debian packages, Go modules and the project's own programs in the image, sorted by id."""
    arch = a.config["architecture"]
    bin_dirs = ("usr/local/bin/",)
    files = layer_files(a, lambda p: p == "var/lib/dpkg/status" or p.startswith(bin_dirs))
    packages = dpkg_packages(files.get("var/lib/dpkg/status", b""), arch)
    for path in sorted(p for p in files if p.startswith(bin_dirs)):
        program = os.path.basename(path)
        mods = go_modules(files[path])
        if mods:
            packages += mods
        elif program.startswith("zoekt-"):
            # The project's own C programs, built from this release's sources.
            packages.append(package(spdx_id("zoekt-operator", program), program, version,
                                    f"pkg:github/zoekt-operator/zoekt-operator@{version}#{program}",
                                    "Organization: zoekt-operator"))
    unique = {p["SPDXID"]: p for p in packages}
    return [unique[k] for k in sorted(unique)]


def cmd_sbom(archive_path, name, version, purl, epoch):
    a = Archive(archive_path)
    arch = a.config["architecture"]
    packages = image_packages(a, archive_path, version)
    image_id = spdx_id("image", name, arch)
    image = package(image_id, name, version, purl, "Organization: zoekt-operator")
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(epoch)))
    doc = {
        "spdxVersion": "SPDX-2.3", "dataLicense": "CC0-1.0", "SPDXID": "SPDXRef-DOCUMENT",
        "name": f"{name}-{version}-{arch}",
        "documentNamespace": f"https://github.com/zoekt-operator/zoekt-operator/sbom/{name}/{version}/"
                             f"{a.desc['digest']}",
        "creationInfo": {"created": created, "creators": ["Tool: zoekt-operator-scripts/oci.py"]},
        "packages": [image] + packages,
        "relationships": [{"spdxElementId": "SPDXRef-DOCUMENT", "relationshipType": "DESCRIBES",
                           "relatedSpdxElement": image_id}] +
                         [{"spdxElementId": image_id, "relationshipType": "CONTAINS",
                           "relatedSpdxElement": p["SPDXID"]} for p in packages],
    }
    sys.stdout.write(json.dumps(doc, sort_keys=True, indent=1) + "\n")


def main(argv):
    if len(argv) >= 5 and argv[1] == "index":
        cmd_index(argv[2], argv[3], argv[4], argv[5:])
    elif len(argv) == 7 and argv[1] == "sbom":
        cmd_sbom(*argv[2:])
    else:
        sys.stderr.write(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
