#!/usr/bin/env python3
"""Fails when a target imports a module that its entry in Package.swift does not declare.

SwiftPM's own --explicit-target-dependency-import-check accepts modules a target reaches
through its other dependencies, so an import can go undeclared until a dependency changes.
This reads `swift package dump-package` and every target's `import` lines instead.
Modules of the toolchain (Foundation, Glibc, Testing, ...) need no declaration.

It also fails when a test target depends on a macro target: SwiftPM then builds the whole
test product, and every library under it, a second time for the host. Test the library the
macro plugin serves instead (StateBusMacroExpansion).
"""
import glob
import json
import re
import subprocess
import sys

TOOLCHAIN = {"Foundation", "FoundationEssentials", "Glibc", "Darwin", "Dispatch", "Synchronization",
             "Observation", "Testing", "XCTest", "_Concurrency", "os"}
IMPORT = re.compile(r"^\s*(?:@_exported |@testable |@_spi\(\w+\) |@preconcurrency )*import (?:(?:struct|class|enum|func|protocol) )?(\w+)")

package = json.loads(subprocess.run(["swift", "package", "dump-package"], check=True, capture_output=True, text=True).stdout)
failures = []
for target in package["targets"]:
    if target["type"] in ("system", "plugin", "binary"):
        continue
    name = target["name"]
    folder = target.get("path") or ("Tests/" if target["type"] == "test" else "Sources/") + name
    declared = set()
    for dependency in target["dependencies"]:
        for kind in ("byName", "target", "product"):
            if kind in dependency:
                declared.add(dependency[kind][0])
    for path in glob.glob(folder + "/**/*.swift", recursive=True):
        with open(path, encoding="utf-8") as source:
            in_string = False
            for number, line in enumerate(source, 1):
                # Skip Swift multi-line string literals (test scripts in other languages).
                if line.count('"""') % 2 == 1:
                    in_string = not in_string
                    continue
                match = None if in_string else IMPORT.match(line)
                if match and match.group(1) not in declared | TOOLCHAIN | {name}:
                    failures.append(f"{path}:{number}: {name} imports {match.group(1)}, which Package.swift does not declare for it")
macros = {target["name"] for target in package["targets"] if target["type"] == "macro"}
macro_failures = []
for target in package["targets"]:
    if target["type"] != "test":
        continue
    for dependency in target["dependencies"]:
        for kind in ("byName", "target"):
            if kind in dependency and dependency[kind][0] in macros:
                macro_failures.append(
                    f"Package.swift: test target {target['name']} depends on the macro target {dependency[kind][0]}, which makes "
                    "SwiftPM build every test and library twice; depend on the library the macro serves (StateBusMacroExpansion)")
for failure in failures + macro_failures:
    print(failure, file=sys.stderr)
if failures:
    print("check-imports: add each module to the target's dependencies in Package.swift", file=sys.stderr)
if failures or macro_failures:
    sys.exit(1)
print("check-imports: every import is declared")
