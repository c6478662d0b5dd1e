#!/usr/bin/env python3
"""Fails when a file of the StateBus module names a type declared in a higher layer.

The module's folders are layers (Sources/StateBus/Docs.docc/Architecture.md, "Layers"):
a file may use the types of its own folder and of the folders below it, never those of a
folder above, so that no two folders depend on each other and a lower layer can be read,
tested and changed without the ones above it. The order is LAYERS below, lowest first.

A type is a top-level `struct`, `class`, `enum`, `protocol`, `actor` or `typealias`; a use is
its name as a word in code (comments and string literals are skipped). A name that two
folders declare is ambiguous and is reported too. A new folder must be added to LAYERS.
"""
import glob
import os
import re
import sys

LAYERS = [
    "Core",         # errors, CPU pinning, metric counters: what every part uses
    "Schema",       # objects, properties and actions as the model declares them
    "Observation",  # change feeds and journals
    "Security",     # keys, authorized keys, what an endpoint exposes
    "Store",        # the host's state without I/O: objects, batches, the ledger
    "Wire",         # the domain to and from the generated protobuf types
    "Persistence",  # SQLite, durable writes, the commit pipeline
    "Replica",      # the view: its engine, its facade, probes of a host
    "Host",         # the host's engine and facade
    "Relay",        # a relay: a host's view upstream, a host downstream
    "Model",        # @SharedModel models on a host or a replica
    "Environment",  # SwiftUI-like environment values
]
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "StateBus")
NESTED = re.compile(r"\b(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)")
DECLARATION = re.compile(
    r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|final|indirect|nonisolated)\s+)*"
    r"(?:struct|class|enum|protocol|actor|typealias)\s+(\w+)",
    re.M,
)


def code_of(path):
    """The file's text without comments and string literals."""
    text = open(path, encoding="utf-8").read()
    text = re.sub(r"/\*[\s\S]*?\*/", "", text)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"""[\s\S]*?"""', '""', text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def main():
    files = sorted(glob.glob(os.path.join(ROOT, "*", "*.swift")))
    code = {path: code_of(path) for path in files}
    failures = []
    owner = {}
    for path in files:
        folder = os.path.basename(os.path.dirname(path))
        if folder not in LAYERS:
            failures.append(f"{os.path.relpath(path)}: folder '{folder}' is not a layer; add it to LAYERS in {os.path.relpath(__file__)}")
            continue
        for name in DECLARATION.findall(code[path]):
            if owner.get(name, folder) != folder:
                failures.append(f"{os.path.relpath(path)}: '{name}' is declared in both {owner[name]}/ and {folder}/")
            owner[name] = folder
    for path in files:
        folder = os.path.basename(os.path.dirname(path))
        if folder not in LAYERS:
            continue
        level = LAYERS.index(folder)
        # A type the file declares itself (a nested `Binding`, say) is not another folder's.
        own = set(NESTED.findall(code[path]))
        for name in sorted(set(re.findall(r"\b[A-Z]\w*\b", code[path])) - own):
            above = owner.get(name)
            if above is not None and LAYERS.index(above) > level:
                failures.append(
                    f"{os.path.relpath(path)}: names '{name}' of {above}/, a layer above {folder}/; "
                    f"move one of them, or pass what the lower layer needs as a parameter"
                )
    for failure in failures:
        print("check-layers:", failure, file=sys.stderr)
    if failures:
        print(f"check-layers: {len(failures)} layering violation(s); the order, lowest first: {', '.join(LAYERS)}", file=sys.stderr)
        return 1
    print(f"check-layers: {len(files)} files in {len(LAYERS)} layers, no file names a type of a layer above its own")
    return 0


if __name__ == "__main__":
    sys.exit(main())
