"""Checks that every locked dependency declares a rust-version no newer than urnscan's own.

Reads `cargo metadata --format-version 1 --locked` on stdin. A dependency that needs a newer
Rust than the README promises would break the build there (`cargo build` takes Cargo.lock's
versions); `resolver = "3"` in Cargo.toml keeps `cargo update` from choosing one, and this
check keeps a hand-edited or older lock file from slipping through. It trusts what each
package declares: `ignore` 0.4.30 declares 1.72 and needs 1.88, so Cargo.toml holds it
below; only a build with that Rust proves the rest (see Cargo.toml's comment on
rust-version).
"""

import json
import re
import sys


def version(text):
    parts = [int(p) for p in re.findall(r"\d+", text)[:3]]
    return tuple(parts + [0] * (3 - len(parts)))


meta = json.load(sys.stdin)
root = next(p for p in meta["packages"] if p["id"] in meta["workspace_members"])
promised = version(root["rust_version"])
newer = sorted(
    "{} {} needs Rust {}".format(p["name"], p["version"], p["rust_version"])
    for p in meta["packages"]
    if p["rust_version"] and version(p["rust_version"]) > promised
)
if newer:
    print("dependencies newer than rust-version {}:".format(root["rust_version"]))
    print("\n".join("  " + line for line in newer))
    sys.exit(1)
print("{} packages, none needs a Rust newer than {}".format(len(meta["packages"]), root["rust_version"]))
