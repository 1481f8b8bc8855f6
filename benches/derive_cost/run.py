#!/usr/bin/env python3
"""The compile cost of `#[derive(AgentMessage)]`, against plain serde derives.

Generates a scratch workspace of four crates holding the same N structs (100 by
default, six fields each):

  plain     `#[derive(Serialize, Deserialize)]`, the baseline of every ratio;
  bounds    plus `Debug, Clone, PartialEq`, the derives `CustomMessage` requires;
  hand      `plain` plus a hand-written `inventory::submit!` per type of a
            registration holding `serde_json::from_str::<T>`;
  derive    `bounds` plus `#[derive(AgentMessage)]` (a UI-only kind each);
  before    with `--before PATH`, `derive` against another agentmsg checkout
            (its own scratch workspace, as cargo takes one `agentmsg` path per
            workspace), measured in the same rounds.

Dependencies are built once per mode; then each round rebuilds each crate alone
(its `src/lib.rs` touched, `CARGO_INCREMENTAL=0`), in an order that rotates from
round to round, for `debug` (`cargo build`), `release` (`cargo build --release`)
and `check` (`cargo check`). A round's ratio is a crate's time over `plain`'s in
the same round, so a slow phase of a shared machine hits both sides; the median
round is printed, with the spread of the rounds as the noise. Both the CPU time
of cargo and rustc (what the ratios should be read by on a shared machine: other
builders inflate it far less) and the wall time are shown. Last, the lines and
functions of each crate's unoptimized LLVM IR, which do not depend on the load.

    python3 benches/derive_cost/run.py                 # 7 rounds, all modes
    python3 benches/derive_cost/run.py --rounds 5 --modes debug,check
    python3 benches/derive_cost/run.py --agentmsg /path/to/other/checkout
    python3 benches/derive_cost/run.py --before /path/to/older/checkout
    python3 benches/derive_cost/run.py --rounds 0 --modes debug   # the IR only

`--layout crates` measures the issue's bar instead: `--crates` (100) structs
of 5 to 8 fields (`String`, `u64`, `bool`, `Option<String>`, `Vec<String>`,
`serde_json::Value`; a third with a nested struct), each in a crate of its own
(one workspace each), every crate rebuilt alone after its `src/lib.rs` is
touched; a round's figure for a variant is the sum over its crates, the crates
interleaved, and the ratios are the medians of the rounds' ratios, wall and CPU.

    python3 benches/derive_cost/run.py --layout crates --rounds 3 --modes debug,release
    python3 benches/derive_cost/run.py --layout crates --before /path/to/main-checkout

`--layout deps` measures the fixed cost of depending on agentmsg: clean builds
of an empty crate that depends on `agentmsg` (default features) against one
that depends on serde_json alone.

    python3 benches/derive_cost/run.py --layout deps --rounds 3 --modes debug,release

The scratch workspace and its target directory are under `--work` (default
`$CARGO_TARGET_DIR/derive_cost`, else `target/derive_cost`).
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

VARIANTS = ["plain", "bounds", "hand", "derive"]
# The `hand` variant's registration: what a crate writes to register its types
# by hand, as typetag's users would.
HAND_REGISTRATION = """use std::any::Any;

pub struct Registration {
    pub kind: &'static str,
    pub decode: fn(&str) -> serde_json::Result<Box<dyn Any>>,
}

inventory::collect!(Registration);

fn decode<T: serde::de::DeserializeOwned + Any>(line: &str) -> serde_json::Result<Box<dyn Any>> {
    serde_json::from_str::<T>(line).map(|value| Box::new(value) as Box<dyn Any>)
}
"""
# The `hand-full` variant's registration: by hand, what the derive registers
# besides decoding, so that a type-erased message can be written, cloned,
# compared and printed (each a function of the type, compiled in its crate).
# Writing goes the cheapest way, straight to serde_json's writer.
HAND_FULL_REGISTRATION = """pub struct Full {
    pub kind: &'static str,
    pub decode: fn(&str) -> serde_json::Result<Box<dyn Any>>,
    pub encode: fn(&dyn Any, &mut Vec<u8>) -> serde_json::Result<()>,
    pub clone: fn(&dyn Any) -> Box<dyn Any>,
    pub eq: fn(&dyn Any, &dyn Any) -> bool,
    pub debug: fn(&dyn Any, &mut std::fmt::Formatter<'_>) -> std::fmt::Result,
}

inventory::collect!(Full);

fn encode<T: Serialize + Any>(value: &dyn Any, out: &mut Vec<u8>) -> serde_json::Result<()> {
    match value.downcast_ref::<T>() {
        Some(value) => serde_json::to_writer(out, value),
        None => Err(serde::ser::Error::custom("another type")),
    }
}

fn clone<T: Clone + Any>(value: &dyn Any) -> Box<dyn Any> {
    match value.downcast_ref::<T>() {
        Some(value) => Box::new(value.clone()),
        None => Box::new(()),
    }
}

fn eq<T: PartialEq + Any>(a: &dyn Any, b: &dyn Any) -> bool {
    a.downcast_ref::<T>().is_some() && a.downcast_ref::<T>() == b.downcast_ref::<T>()
}

fn debug<T: std::fmt::Debug + Any>(value: &dyn Any, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
    match value.downcast_ref::<T>() {
        Some(value) => value.fmt(f),
        None => f.write_str("another type"),
    }
}
"""
MODES = {
    "debug": ["build"],
    "release": ["build", "--release"],
    "check": ["check"],
}


def fields(i):
    return f"""    pub name{i}: String,
    pub count: u32,
    pub ratio: f64,
    pub tags: Vec<String>,
    pub note: Option<String>,
    pub done: bool,
"""


def source(variant, n):
    out = ["//! Generated by benches/derive_cost/run.py.", "#![allow(dead_code)]", ""]
    out.append("use serde::{Deserialize, Serialize};")
    if variant == "hand":
        out.append(HAND_REGISTRATION)
    if variant == "derive":
        out.append("use agentmsg::AgentMessage;")
    out.append("")
    for i in range(n):
        if variant in ("plain", "hand"):
            out.append("#[derive(Serialize, Deserialize)]")
        elif variant == "bounds":
            out.append("#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]")
        else:
            out.append("#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, AgentMessage)]")
            out.append(f'#[agent_message(kind = "kind{i}")]')
        out.append(f"pub struct Type{i} {{")
        out.append(fields(i).rstrip("\n"))
        out.append("}")
        if variant == "hand":
            out.append(
                f'inventory::submit! {{ Registration {{ kind: "kind{i}", decode: decode::<Type{i}> }} }}'
            )
        out.append("")
    return "\n".join(out)


def manifest(variant, agentmsg):
    deps = [
        'serde = { version = "1.0.200", features = ["derive"] }',
        'serde_json = { version = "1.0.120", features = ["float_roundtrip"] }',
    ]
    if variant in HAND_VARIANTS:
        deps.append('inventory = "0.3.15"')
    if variant == "derive":
        deps.append(f'agentmsg = {{ path = "{agentmsg}", default-features = false }}')
    if variant == "derive-default":
        deps.append(f'agentmsg = {{ path = "{agentmsg}" }}')
    return f"""[package]
name = "cost-{variant}"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
path = "src/lib.rs"

[dependencies]
{chr(10).join(deps)}
"""


def generate(ws, agentmsg, n, variants=VARIANTS):
    ws.mkdir(parents=True, exist_ok=True)
    members = ", ".join(f'"{v}"' for v in variants)
    write_if_changed(
        ws / "Cargo.toml",
        f'[workspace]\nmembers = [{members}]\nresolver = "2"\n',
    )
    for variant in variants:
        (ws / variant / "src").mkdir(parents=True, exist_ok=True)
        write_if_changed(ws / variant / "Cargo.toml", manifest(variant, agentmsg))
        write_if_changed(ws / variant / "src" / "lib.rs", source(variant, n))


# The bar's layout (`--layout crates`): one struct per crate, of 5 to 8 fields of
# the types below; every third struct also has a field of a nested struct.
BAR_VARIANTS = ["plain", "hand", "hand-bounds", "hand-full", "derive", "derive-default"]
# The variants that register their types by hand (`HAND_REGISTRATION`).
HAND_VARIANTS = ("hand", "hand-bounds", "hand-full")
BAR_TYPES = ["String", "u64", "bool", "Option<String>", "Vec<String>", "serde_json::Value"]
BAR_NAMES = ["name", "count", "done", "note", "tags", "data", "label", "size", "flag"]


def bar_fields(i):
    """The fields of the bar's struct `i`: a fixed pseudo-random pick, the same
    in every variant and every run."""
    state = (i + 1) * 2654435761 % 2**32
    count = 5 + state % 4
    out = []
    for f in range(count):
        state = (state * 1103515245 + 12345) % 2**31
        out.append((f"{BAR_NAMES[f % len(BAR_NAMES)]}{f}", BAR_TYPES[(state >> 8) % len(BAR_TYPES)]))
    if i % 3 == 0:
        out[-1] = (f"inner{count - 1}", f"Inner{i}")
    return out


def bar_source(variant, i):
    out = ["//! Generated by benches/derive_cost/run.py (`--layout crates`).", "#![allow(dead_code)]", ""]
    out.append("use serde::{Deserialize, Serialize};")
    hand = variant in HAND_VARIANTS
    derive = variant in ("derive", "derive-default", "before")
    if hand:
        out.append(HAND_REGISTRATION)
    if variant == "hand-full":
        out.append(HAND_FULL_REGISTRATION)
    if derive:
        out.append("use agentmsg::AgentMessage;")
    out.append("")
    bounds = "Serialize, Deserialize" if variant in ("plain", "hand") else "Debug, Clone, PartialEq, Serialize, Deserialize"
    if i % 3 == 0:
        out.append(f"#[derive({bounds})]")
        out.append(f"pub struct Inner{i} {{\n    pub id: String,\n    pub size: u64,\n    pub tags: Vec<String>,\n}}\n")
    if derive:
        out.append(f"#[derive({bounds}, AgentMessage)]")
        out.append(f'#[agent_message(kind = "kind{i}")]')
    else:
        out.append(f"#[derive({bounds})]")
    out.append(f"pub struct Type{i} {{")
    out.extend(f"    pub {name}: {ty}," for name, ty in bar_fields(i))
    out.append("}")
    if variant == "hand-full":
        out.append(
            f'inventory::submit! {{ Full {{ kind: "kind{i}", decode: decode::<Type{i}>, encode: encode::<Type{i}>,'
            f" clone: clone::<Type{i}>, eq: eq::<Type{i}>, debug: debug::<Type{i}> }} }}"
        )
    elif hand:
        out.append(f'inventory::submit! {{ Registration {{ kind: "kind{i}", decode: decode::<Type{i}> }} }}')
    out.append("")
    return "\n".join(out)


def bar_generate(root, variant, agentmsg, n):
    """`n` crates of `variant`, each a workspace of its own, under `root/variant`.
    They share one lock file, so every crate resolves the same dependencies."""
    crates = []
    for i in range(n):
        place = root / variant / f"c{i}"
        (place / "src").mkdir(parents=True, exist_ok=True)
        text = manifest("derive" if variant == "before" else variant, agentmsg).replace(
            'name = "cost-', f'name = "cost{i}-'
        )
        write_if_changed(place / "Cargo.toml", text + "\n[workspace]\n")
        write_if_changed(place / "src" / "lib.rs", bar_source(variant, i))
        crates.append(place)
    return crates


def print_ratio_rows(table, modes, rows):
    """One line per `(name, numerator, denominator)` of `rows`: the median of
    the rounds' ratios in each mode, with their spread."""
    print(f"{'':28}" + "".join(f"{mode:>24}" for mode in modes))
    for name, num, den in rows:
        cells = []
        for mode in modes:
            ratios = [t / p for t, p in zip(table[(mode, num)], table[(mode, den)])]
            cells.append(f"{statistics.median(ratios):.2f}x ({min(ratios):.2f}..{max(ratios):.2f})")
        print(f"{name:28}" + "".join(f"{c:>24}" for c in cells))


def write_if_changed(path, text):
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def cargo(ws, mode, package, env, extra=()):
    """Builds one crate; its wall time and the CPU time (user + system) of cargo
    and rustc, which a busy machine inflates far less than the wall time."""
    cmd = ["cargo", *MODES[mode], "--quiet", "-p", f"cost-{package}", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"`{' '.join(cmd)}` failed:\n{result.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def llvm_ir(ws, target, variant, env):
    """Lines and functions of the crate's unoptimized LLVM IR."""
    cmd = ["cargo", "rustc", "--quiet", "-p", f"cost-{variant}", "--", "--emit=llvm-ir"]
    result = subprocess.run(cmd, cwd=ws, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"`{' '.join(cmd)}` failed:\n{result.stderr}")
    crate = f"cost_{variant}"
    files = sorted(
        (target / "debug" / "deps").glob(f"{crate}-*.ll"), key=lambda f: f.stat().st_mtime
    )
    text = files[-1].read_text()
    return text.count("\n"), sum(1 for line in text.splitlines() if line.startswith("define "))


def built(places, mode, variant, touched=False):
    """Builds `variant` where it lives (its `src/lib.rs` touched first when
    `touched`); its wall and CPU time."""
    place, place_env = places[variant]
    crate = "derive" if variant == "before" else variant
    if touched:
        touch(place / crate / "src" / "lib.rs")
    return cargo(place, mode, crate, place_env)


def run_crates(args, modes, work, agentmsg):
    """The bar's layout: `--crates` crates of one struct each per variant, each
    rebuilt alone; a round's figure for a variant is the sum over its crates."""
    root = work / "crates"
    variants = [v for v in args.variants.split(",") if v]
    for variant in variants:
        if variant not in BAR_VARIANTS:
            sys.exit(f"unknown variant `{variant}`; variants: {', '.join(BAR_VARIANTS)}")
    if "plain" not in variants:
        variants.insert(0, "plain")
    base_env = dict(os.environ, CARGO_INCREMENTAL="0")
    base_env.pop("RUSTFLAGS", None)
    lock = agentmsg / "Cargo.lock"
    places = {}
    for variant in variants + (["before"] if args.before else []):
        source = Path(args.before).resolve() if variant == "before" else agentmsg
        crates = bar_generate(root, variant, source, args.crates)
        # `before` builds another agentmsg, so it has a target directory of its
        # own; the other variants share one (their dependencies are the same).
        target = work / ("crates-target-before" if variant == "before" else "crates-target")
        env = dict(base_env, CARGO_TARGET_DIR=str(target))
        # One lock file per variant, resolved from agentmsg's (the same serde and
        # serde_json as the repository's tests), copied to each of its crates.
        first = crates[0] / "Cargo.lock"
        if not first.exists():
            first.write_bytes((source / "Cargo.lock").read_bytes() if (source / "Cargo.lock").exists() else lock.read_bytes())
            subprocess.run(["cargo", "tree", "--quiet"], cwd=crates[0], env=env, check=True, capture_output=True)
        for place in crates[1:]:
            write_bytes_if_changed(place / "Cargo.lock", first.read_bytes())
        places[variant] = (crates, env)
    if args.before:
        variants.append("before")

    print(
        f"layout: crates; agentmsg: {agentmsg}; {args.crates} crates of one struct per variant;"
        f" {args.rounds} rounds; scratch: {work}"
    )
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    for mode in modes:
        # The dependencies, not measured: each variant's first crate.
        for variant in variants:
            crates, env = places[variant]
            bar_cargo(crates[0], mode, env)
    times = {(m, v): [] for m in modes for v in variants}
    cpu = {(m, v): [] for m in modes for v in variants}
    for r in range(args.rounds):
        wall_sum = {(m, v): 0.0 for m in modes for v in variants}
        cpu_sum = {(m, v): 0.0 for m in modes for v in variants}
        for i in range(args.crates):
            for mode in modes:
                k = (r + i) % len(variants)
                order = variants[k:] + variants[:k]
                if (r + i) % 2:
                    order.reverse()
                for variant in order:
                    crates, env = places[variant]
                    touch(crates[i] / "src" / "lib.rs")
                    wall, used = bar_cargo(crates[i], mode, env)
                    wall_sum[(mode, variant)] += wall
                    cpu_sum[(mode, variant)] += used
        for key in wall_sum:
            times[key].append(wall_sum[key])
            cpu[key].append(cpu_sum[key])
        line = "  ".join(
            f"{mode} " + " ".join(f"{v}={wall_sum[(mode, v)]:.1f}s/{cpu_sum[(mode, v)]:.1f}s" for v in variants)
            for mode in modes
        )
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"round {r + 1} (wall/cpu, summed over the crates): {line}  [load {load}]", flush=True)

    rows = [(v, v, "plain") for v in variants[1:]]
    for num, den in [
        ("derive", "hand"),
        ("derive", "hand-bounds"),
        ("derive", "hand-full"),
        ("derive-default", "hand"),
        ("derive-default", "derive"),
    ]:
        if num in variants and den in variants:
            rows.append((f"{num}/{den}", num, den))
    if "before" in variants:
        rows.append(("derive/before", "derive", "before"))
    for title, table in [("wall time", times), ("CPU time (user + system)", cpu)] if args.rounds else []:
        print()
        print(
            f"{title}: median of the rounds' ratios of the sums over {args.crates} crates"
            f" ({args.rounds} interleaved rounds; min..max of the rounds)"
        )
        print_ratio_rows(table, modes, rows)
        print(
            "plain per crate: "
            + ", ".join(
                f"{mode} {statistics.median(table[(mode, 'plain')]) / args.crates:.3f}s" for mode in modes
            )
        )

    if not args.no_ir:
        count = min(args.crates, 3)
        print()
        print(f"unoptimized LLVM IR of the first {count} crates (deterministic): lines, functions")
        for variant in variants:
            crates, env = places[variant]
            lines = functions = 0
            for place in crates[:count]:
                a, b = bar_llvm_ir(place, env)
                lines += a
                functions += b
            print(f"{variant:14}{lines:>10} lines {functions:>7} functions")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def run_deps(args, modes, work, agentmsg):
    """The fixed cost of depending on agentmsg: clean builds of an empty crate
    that depends on `agentmsg` (default features) against one that depends on
    serde_json alone, interleaved, each round from an empty target directory."""
    root = work / "deps"
    base_env = dict(os.environ, CARGO_INCREMENTAL="0")
    base_env.pop("RUSTFLAGS", None)
    crates = {
        "serde_json": 'serde_json = "1.0.120"',
        "agentmsg": f'agentmsg = {{ path = "{agentmsg}" }}',
    }
    if args.before:
        # The same empty crate on another checkout, in the same rounds.
        crates["before"] = f'agentmsg = {{ path = "{Path(args.before).resolve()}" }}'
    places = {}
    for name, dep in crates.items():
        place = root / name
        (place / "src").mkdir(parents=True, exist_ok=True)
        write_if_changed(
            place / "Cargo.toml",
            f'[package]\nname = "dep-{name.replace("_", "-")}"\nversion = "0.0.0"\nedition = "2021"\n'
            f"publish = false\n\n[dependencies]\n{dep}\n\n[workspace]\n",
        )
        write_if_changed(place / "src" / "lib.rs", "//! Generated by benches/derive_cost/run.py (`--layout deps`).\n")
        lock = place / "Cargo.lock"
        if not lock.exists():
            source = Path(args.before).resolve() if name == "before" else agentmsg
            lock.write_bytes((source / "Cargo.lock").read_bytes())
            subprocess.run(["cargo", "tree", "--quiet"], cwd=place, env=base_env, check=True, capture_output=True)
        places[name] = place
    names = list(crates)
    print(f"layout: deps; agentmsg: {agentmsg}; {args.rounds} rounds of clean builds; scratch: {root}")
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}", flush=True)
    times = {(m, n): [] for m in modes for n in names}
    cpu = {(m, n): [] for m in modes for n in names}
    for r in range(args.rounds):
        for mode in modes:
            order = names if (r + modes.index(mode)) % 2 == 0 else names[::-1]
            for name in order:
                target = root / f"target-{name}"
                shutil.rmtree(target, ignore_errors=True)
                wall, used = bar_cargo(places[name], mode, dict(base_env, CARGO_TARGET_DIR=str(target)))
                times[(mode, name)].append(wall)
                cpu[(mode, name)].append(used)
                shutil.rmtree(target, ignore_errors=True)
        line = "  ".join(
            f"{mode} " + " ".join(f"{n}={times[(mode, n)][-1]:.1f}s/{cpu[(mode, n)][-1]:.1f}s" for n in names)
            for mode in modes
        )
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"round {r + 1} (wall/cpu): {line}  [load {load}]", flush=True)
    for title, table in [("wall time", times), ("CPU time (user + system)", cpu)]:
        print()
        print(f"{title}: clean build of an empty crate, median of {args.rounds} rounds (min..max)")
        for mode in modes:
            cells = []
            for name in names:
                values = table[(mode, name)]
                cells.append(f"{name} {statistics.median(values):.1f}s ({min(values):.1f}..{max(values):.1f})")
            summary = []
            for name in names[1:]:
                ratios = [a / b for a, b in zip(table[(mode, name)], table[(mode, "serde_json")])]
                summary.append(
                    f"{name}/serde_json {statistics.median(ratios):.2f}x ({min(ratios):.2f}..{max(ratios):.2f})"
                )
            print(f"{mode:8} " + "  ".join(cells) + "  " + "  ".join(summary))
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def bar_cargo(place, mode, env):
    """Builds one of the bar's crates (a workspace of its own); wall and CPU time."""
    cmd = ["cargo", *MODES[mode], "--quiet", "--offline"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    result = subprocess.run(cmd, cwd=place, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"`{' '.join(cmd)}` in {place} failed:\n{result.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def bar_llvm_ir(place, env):
    """Lines and functions of one bar crate's unoptimized LLVM IR."""
    cmd = ["cargo", "rustc", "--quiet", "--offline", "--", "--emit=llvm-ir"]
    result = subprocess.run(cmd, cwd=place, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.exit(f"`{' '.join(cmd)}` in {place} failed:\n{result.stderr}")
    name = (place / "Cargo.toml").read_text().split('name = "', 1)[1].split('"', 1)[0].replace("-", "_")
    files = sorted(
        (Path(env["CARGO_TARGET_DIR"]) / "debug" / "deps").glob(f"{name}-*.ll"), key=lambda f: f.stat().st_mtime
    )
    text = files[-1].read_text()
    for f in files:
        f.unlink()
    return text.count("\n"), sum(1 for line in text.splitlines() if line.startswith("define "))


def write_bytes_if_changed(path, data):
    if not path.exists() or path.read_bytes() != data:
        path.write_bytes(data)


def touch(path):
    now = time.time()
    os.utime(path, (now, now))


def main():
    here = Path(__file__).resolve()
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--types", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--modes", default="debug,release,check")
    parser.add_argument("--agentmsg", default=str(here.parents[2]), help="the agentmsg checkout to measure")
    default_work = Path(os.environ.get("CARGO_TARGET_DIR", here.parents[2] / "target")) / "derive_cost"
    parser.add_argument("--work", default=str(default_work))
    parser.add_argument("--before", help="another agentmsg checkout whose derive is measured as `before`")
    parser.add_argument("--no-ir", action="store_true", help="skip counting the LLVM IR")
    parser.add_argument(
        "--layout",
        choices=["crates", "one", "deps"],
        default="one",
        help="`crates`: the issue's bar, one struct per crate; `one`: one crate of --types structs;"
        " `deps`: clean builds of an empty crate depending on agentmsg against serde_json alone",
    )
    parser.add_argument("--crates", type=int, default=100, help="with --layout crates: crates per variant")
    parser.add_argument(
        "--variants",
        default="plain,hand,derive",
        help="with --layout crates: the variants measured, of " + ", ".join(BAR_VARIANTS),
    )
    args = parser.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    for mode in modes:
        if mode not in MODES:
            sys.exit(f"unknown mode `{mode}`; modes: {', '.join(MODES)}")

    work = Path(args.work).resolve()
    if args.layout == "crates":
        run_crates(args, modes, work, Path(args.agentmsg).resolve())
        return
    if args.layout == "deps":
        run_deps(args, modes, work, Path(args.agentmsg).resolve())
        return
    ws = work / "ws"
    target = work / "target"
    generate(ws, Path(args.agentmsg).resolve(), args.types)
    env = dict(os.environ, CARGO_TARGET_DIR=str(target), CARGO_INCREMENTAL="0")
    env.pop("RUSTFLAGS", None)
    # Where each variant is built: `before` in a workspace of its own.
    places = {v: (ws, env) for v in VARIANTS}
    variants = list(VARIANTS)
    if args.before:
        ws_before = work / "ws-before"
        generate(ws_before, Path(args.before).resolve(), args.types, ["derive"])
        env_before = dict(env, CARGO_TARGET_DIR=str(work / "target-before"))
        places["before"] = (ws_before, env_before)
        variants.append("before")

    print(f"agentmsg: {Path(args.agentmsg).resolve()}; {args.types} types; {args.rounds} rounds; scratch: {work}")
    times = {(m, v): [] for m in modes for v in variants}
    cpu = {(m, v): [] for m in modes for v in variants}
    for mode in modes:
        # Dependencies and a first build of each crate, not measured. Each crate
        # alone, as measured: `-p` unifies the features of its dependencies
        # (serde_json's) for it alone, so a workspace build would leave them to
        # be rebuilt in the first round.
        for variant in variants:
            built(places, mode, variant)
    for r in range(args.rounds):
        for mode in modes:
            order = variants[r % len(variants):] + variants[: r % len(variants)]
            if r % 2:
                order.reverse()
            for variant in order:
                wall, used = built(places, mode, variant, touched=True)
                times[(mode, variant)].append(wall)
                cpu[(mode, variant)].append(used)
        line = "  ".join(
            f"{mode} "
            + " ".join(f"{v}={times[(mode, v)][-1]:.2f}s/{cpu[(mode, v)][-1]:.2f}s" for v in variants)
            for mode in modes
        )
        print(f"round {r + 1} (wall/cpu): {line}", flush=True)

    for title, table in [("CPU time (user + system)", cpu), ("wall time", times)] if args.rounds else []:
        print()
        print(
            f"{title}: median ratio to plain serde over {args.rounds} interleaved rounds"
            " (min..max of the rounds' ratios)"
        )
        rows = [(v, v, "plain") for v in variants[1:]] + [("derive/bounds", "derive", "bounds")]
        if "before" in variants:
            rows.append(("derive/before", "derive", "before"))
        print_ratio_rows(table, modes, rows)
        print(
            "plain median: "
            + ", ".join(f"{mode} {statistics.median(table[(mode, 'plain')]):.2f}s" for mode in modes)
        )

    if not args.no_ir:
        print()
        print("unoptimized LLVM IR of each crate (deterministic): lines, functions")
        for variant in variants:
            place, place_env = places[variant]
            crate = "derive" if variant == "before" else variant
            lines, functions = llvm_ir(place, Path(place_env["CARGO_TARGET_DIR"]), crate, place_env)
            print(f"{variant:14}{lines:>10} lines {functions:>7} functions")


if __name__ == "__main__":
    main()
