#!/usr/bin/env python3
"""Find module cycles in a Rust crate: two sibling modules that depend on each other.

    scripts/module_cycles.py [--all-levels] CRATE_SRC_ROOT...   (e.g. runtime/src/lib.rs)
    scripts/module_cycles.py --self-test   (checks the checker on small crates it writes)

Reads the module tree from the `mod` declarations (starting at the given lib.rs
or main.rs), and in each module's code every path through `crate::`, `$crate::`,
`super::` or `self::` (in `use` trees and in expressions). A reference from
module a::x::… to b::y::… is an edge a -> b between the crate root's children;
with --all-levels also x -> y between the children of any module (a parent and
its own children are not siblings, so `use super::…` is never an edge). Names a
module re-exports (`pub use`, at the root or in any module) are followed to
where they are defined: `use super::Api` in a child of `providers` depends on
the sibling that defines `Api`, not on `providers`.
Test code (`#[cfg(test)]` items and modules) and comments are not read: a test
may build fixtures with a module its subject must not depend on.

Prints each strongly connected component of more than one module (a cycle) with
the references that make its edges, and exits 1 if there is any.

Why a script rather than a cargo tool: it reads the sources only, so it runs in
well under a second on a fresh clone with nothing to build or install.
"""

import os
import re
import sys
from collections import defaultdict

TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<line_comment>//[^\n]*)
  | (?P<raw_string>b?r(?P<hashes>\#*)"(?:.|\n)*?"(?P=hashes))
  | (?P<string>b?"(?:\\.|\\\n|[^"\\])*")
  | (?P<char>b?'(?:\\(?:u\{[0-9a-fA-F]+\}|x[0-9a-fA-F]{2}|.)|[^\\'\n])')
  | (?P<lifetime>'[A-Za-z_][A-Za-z0-9_]*)
  | (?P<ident>\$?(?:r\#)?[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9][0-9A-Za-z_.]*)
  | (?P<path_sep>::)
  | (?P<punct>.)
    """,
    re.VERBOSE,
)


def block_comment_end(text, i):
    """The index after the (nested) block comment that starts at `i`."""
    depth = 0
    n = len(text)
    while i < n:
        if text.startswith("/*", i):
            depth += 1
            i += 2
        elif text.startswith("*/", i):
            depth -= 1
            i += 2
            if depth == 0:
                return i
        else:
            i += 1
    return n


def tokens(text):
    """(kind, value, line) for each meaningful token; comments and literals dropped."""
    line = 1
    result = []
    i = 0
    n = len(text)
    while i < n:
        if text.startswith("/*", i):
            end = block_comment_end(text, i)
            line += text.count("\n", i, end)
            i = end
            continue
        m = TOKEN.match(text, i)
        kind = m.lastgroup if m.lastgroup != "hashes" else "raw_string"
        value = m.group(0)
        if kind in ("ident", "path_sep", "punct"):
            result.append((kind, value, line))
        elif kind in ("string", "raw_string", "char", "number"):
            result.append(("literal", value, line))
        line += value.count("\n")
        i = m.end()
    return result


class Crate:
    def __init__(self, root_file):
        self.root_file = root_file
        self.modules = {}  # tuple path -> file
        self.reexports = defaultdict(dict)  # module path -> name -> full path (tuple)
        self.refs = []  # (from module path, to path tuple, file, line)
        self.uses = []  # (module, path as written, alias, is pub, file, line)

    def load(self):
        self._read_file(self.root_file, (), os.path.dirname(self.root_file), True)
        # A use path resolves once every module is known: `use child::X` names
        # a module declared anywhere in the file, before or after it.
        for module, path, alias, is_pub, file, line in self.uses:
            resolved = self._resolve_relative(module, path)
            if resolved is None and path and module + (path[0],) in self.modules:
                resolved = module + tuple(path)
            if resolved is None:
                continue  # another crate's
            if is_pub and alias not in ("*", "self") and alias:
                self.reexports[module][alias] = resolved
            self.refs.append((module, resolved, file, line))

    def _read_file(self, path, module, child_dir, is_dir_owner):
        self.modules[module] = path
        with open(path, encoding="utf-8") as f:
            toks = tokens(f.read())
        self._walk(toks, 0, len(toks), module, child_dir, path)

    def _walk(self, toks, i, end, module, child_dir, file):
        pending_attrs = []
        while i < end:
            kind, value, line = toks[i]
            if value == "#" and i + 1 < end and toks[i + 1][1] in ("[", "!"):
                j = i + 1
                inner = toks[i + 1][1] == "!"
                if inner:
                    j += 1
                close = self._matching(toks, j)
                attr = [t[1] for t in toks[j + 1 : close]]
                if not inner:
                    pending_attrs.append(attr)
                i = close + 1
                continue
            if self._is_test_only(pending_attrs):
                # Skip the item the attribute is on.
                i = self._item_end(toks, i, end)
                pending_attrs = []
                continue
            path_attr = None
            for attr in pending_attrs:
                if attr[:2] == ["path", "="]:
                    path_attr = attr[2].strip('"')
            if value == "mod" and kind == "ident" and i + 2 < end and toks[i + 1][0] == "ident":
                name = toks[i + 1][1].replace("r#", "")
                after = toks[i + 2][1]
                if after == ";":
                    child_file = self._child_file(child_dir, name, path_attr, file)
                    if child_file:
                        sub_dir = os.path.join(child_dir, name)
                        if os.path.basename(child_file) == "mod.rs":
                            sub_dir = os.path.dirname(child_file)
                        self._read_file(child_file, module + (name,), sub_dir, False)
                    i += 3
                    pending_attrs = []
                    continue
                if after == "{":
                    close = self._matching(toks, i + 2)
                    self.modules[module + (name,)] = file
                    self._walk(toks, i + 3, close, module + (name,), os.path.join(child_dir, name), file)
                    i = close + 1
                    pending_attrs = []
                    continue
            pending_attrs = []
            if value == "use" and kind == "ident":
                is_pub = i > 0 and self._is_pub_before(toks, i)
                j = i + 1
                stop = j
                while toks[stop][1] != ";":
                    stop += 1
                for path, alias in self._use_tree(toks, j, stop, ()):
                    self.uses.append((module, path, alias, is_pub, file, toks[i][2]))
                i = stop + 1
                continue
            if kind == "ident" and value in ("crate", "$crate", "super", "self") and i + 1 < end and toks[i + 1][1] == "::":
                path = [value]
                j = i + 1
                while j + 1 < end and toks[j][1] == "::" and toks[j + 1][0] == "ident":
                    path.append(toks[j + 1][1])
                    j += 2
                resolved = self._resolve_relative(module, path)
                if resolved is not None:
                    self.refs.append((module, resolved, file, line))
                i = j
                continue
            i += 1

    @staticmethod
    def _is_pub_before(toks, i):
        j = i - 1
        if toks[j][1] == ")":
            while j > 0 and toks[j][1] != "(":
                j -= 1
            j -= 1
        return toks[j][1] == "pub"

    @staticmethod
    def _is_test_only(attrs):
        return any(a == ["cfg", "(", "test", ")"] for a in attrs)

    @staticmethod
    def _matching(toks, j):
        pairs = {"(": ")", "[": "]", "{": "}"}
        depth = 0
        for k in range(j, len(toks)):
            v = toks[k][1]
            if v in pairs:
                depth += 1
            elif v in pairs.values():
                depth -= 1
                if depth == 0:
                    return k
        return len(toks) - 1

    def _item_end(self, toks, i, end):
        while i < end:
            v = toks[i][1]
            if v == ";":
                return i + 1
            if v in "([":
                i = self._matching(toks, i) + 1
                continue
            if v == "{":
                return self._matching(toks, i) + 1
            i += 1
        return end

    @staticmethod
    def _child_file(child_dir, name, path_attr, file):
        if path_attr:
            candidate = os.path.join(os.path.dirname(file), path_attr)
            return candidate if os.path.exists(candidate) else None
        for candidate in (os.path.join(child_dir, name + ".rs"), os.path.join(child_dir, name, "mod.rs")):
            if os.path.exists(candidate):
                return candidate
        return None

    def _use_tree(self, toks, j, stop, prefix):
        """Expand a use tree into (path, alias) pairs."""
        result = []
        path = list(prefix)
        k = j
        while k < stop:
            v = toks[k][1]
            if v == "{":
                close = self._matching(toks, k)
                # Split the group on top-level commas.
                start = k + 1
                depth = 0
                for m in range(k + 1, close + 1):
                    t = toks[m][1]
                    if t == "{":
                        depth += 1
                    elif t == "}" and m != close:
                        depth -= 1
                    if (t == "," and depth == 0) or m == close:
                        if m > start:
                            result.extend(self._use_tree(toks, start, m, tuple(path)))
                        start = m + 1
                return result
            if v == "::":
                k += 1
                continue
            if v == "as":
                alias = toks[k + 1][1]
                return [(path, alias)]
            if v == "*":
                return [(path, "*")]
            if toks[k][0] == "ident":
                path.append(v)
            k += 1
        if not path:
            return []
        alias = path[-1]
        if alias == "self":
            path = path[:-1]
            alias = path[-1] if path else None
        return [(path, alias)]

    @staticmethod
    def _resolve_relative(module, path):
        """A path from inside `module` as an absolute tuple, or None if it leaves the crate."""
        if not path:
            return None
        head = path[0]
        if head in ("crate", "$crate"):
            return tuple(path[1:])
        if head == "self":
            return module + tuple(path[1:])
        if head == "super":
            base = list(module)
            k = 0
            while k < len(path) and path[k] == "super":
                if not base:
                    return None
                base.pop()
                k += 1
            return tuple(base) + tuple(path[k:])
        return None

    def resolve(self, path, seen=None):
        """The module a path ends in, following re-exports."""
        seen = seen or set()
        k = 0
        while k < len(path) and path[: k + 1] in self.modules:
            k += 1
        module = path[:k]
        if k < len(path):
            target = self.reexports.get(module, {}).get(path[k])
            if target is not None and (module, path[k]) not in seen:
                seen.add((module, path[k]))
                return self.resolve(target + path[k + 1 :], seen)
        return module


def sccs(nodes, edges):
    index = {}
    low = {}
    stack = []
    on_stack = set()
    result = []
    counter = [0]

    def connect(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            result.append(sorted(component))

    for v in sorted(nodes):
        if v not in index:
            connect(v)
    return result


def cycles(crate, all_levels):
    """(parent, component, evidence) for each cycle among siblings."""
    # parent -> child -> child -> [(file, line)]
    edges = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    for source, target, file, line in crate.refs:
        target = crate.resolve(target)
        k = 0
        while k < len(source) and k < len(target) and source[k] == target[k]:
            k += 1
        if k == len(source) or k == len(target):
            continue  # one is inside the other
        if k > 0 and not all_levels:
            continue
        edges[source[:k]][source[k]][target[k]].append((file, line))
    found = []
    for parent in sorted(edges):
        children = {m[len(parent)] for m in crate.modules if len(m) > len(parent) and m[: len(parent)] == parent}
        graph = {a: set(bs) for a, bs in edges[parent].items()}
        for component in sccs(children, graph):
            if len(component) > 1:
                members = set(component)
                evidence = {
                    (a, b): edges[parent][a][b] for a in component for b in edges[parent][a] if b in members
                }
                found.append((parent, component, evidence))
    return found


SELF_TEST_CRATE = {
    "lib.rs": """
        //! `crate::c::Z` in a comment is no reference.
        mod a;
        mod b;
        mod c;
        mod e;
        #[path = "elsewhere.rs"]
        mod d;
        pub use a::Alpha;
        #[cfg(test)]
        mod tests;
    """,
    "a/mod.rs": """
        mod inner;
        use crate::b::{self, Beta as B};
        fn f() -> &'static str { "crate::c::Z" }
        fn g() -> char { '"' }
        pub struct Alpha;
    """,
    "a/inner.rs": "use super::super::d::Delta; use super::Alpha;",
    "b.rs": """
        /* crate::c::Z /* nested */ crate::c::Z */
        pub struct Beta(crate::Alpha);
        #[cfg(test)]
        mod tests { use crate::c::Z; }
        #[cfg(test)]
        fn helper() -> crate::c::Z { todo!() }
    """,
    "c.rs": "pub struct Z; fn h() -> r#\"crate::a::Alpha\"# { }",
    "elsewhere.rs": "pub struct Delta; macro_rules! m { () => { $crate::c::Z } }",
    "tests.rs": "use crate::c::Z; use crate::d::Delta;",
    # x <-> y, seen only through e's own re-export of X.
    "e/mod.rs": "mod x; mod y; pub use x::X;",
    "e/x.rs": "pub struct X; fn f() -> super::y::Y { todo!() }",
    "e/y.rs": "pub struct Y(super::X);",
}


def self_test():
    """The checker on a crate with one cycle (a <-> b, through a re-export at
    the root and a grandchild's super::super path) and references it must not
    count (comments, strings, test code, a child's use of its parent)."""
    import tempfile

    with tempfile.TemporaryDirectory() as root:
        for name, text in SELF_TEST_CRATE.items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
        crate = Crate(os.path.join(root, "lib.rs"))
        crate.load()
        assert set(crate.modules) == {
            (), ("a",), ("a", "inner"), ("b",), ("c",), ("d",), ("e",), ("e", "x"), ("e", "y")
        }, crate.modules
        found = cycles(crate, all_levels=False)
        assert [(p, c) for p, c, _ in found] == [((), ["a", "b"])], found
        found = cycles(crate, all_levels=True)
        assert [(p, c) for p, c, _ in found] == [((), ["a", "b"]), (("e",), ["x", "y"])], found
        edges = {
            (s[0], crate.resolve(t)[0])
            for s, t, _, _ in crate.refs
            if s and crate.resolve(t) and s[0] != crate.resolve(t)[0]
        }
        assert edges == {("a", "b"), ("a", "d"), ("b", "a"), ("d", "c")}, edges
        # Without the root's re-export b -> a is gone, and so is the cycle;
        # y naming only a type of its own ends the other.
        with open(os.path.join(root, "b.rs"), "w", encoding="utf-8") as f:
            f.write("pub struct Beta;")
        with open(os.path.join(root, "e", "y.rs"), "w", encoding="utf-8") as f:
            f.write("pub struct Y(u8);")
        crate = Crate(os.path.join(root, "lib.rs"))
        crate.load()
        assert cycles(crate, all_levels=True) == [], cycles(crate, all_levels=True)
    print("self-test passed")
    return 0


def main(argv):
    if "--self-test" in argv:
        return self_test()
    all_levels = "--all-levels" in argv
    roots = [a for a in argv if not a.startswith("--")]
    if not roots:
        print(__doc__, file=sys.stderr)
        return 2
    total = 0
    for root in roots:
        crate = Crate(root)
        crate.load()
        for parent, component, evidence in cycles(crate, all_levels):
            total += 1
            where = "::".join(("crate",) + parent)
            print(f"{root}: cycle in {where}: {' <-> '.join(component)}")
            pairs = [f"{a} <-> {b}" for (a, b) in sorted(evidence) if a < b and (b, a) in evidence]
            if pairs:
                print(f"    pairs that depend on each other: {', '.join(pairs)}")
            for (a, b), places in sorted(evidence.items()):
                shown = ", ".join(f"{os.path.relpath(f)}:{l}" for f, l in sorted(set(places))[:4])
                more = f" (+{len(set(places)) - 4} more)" if len(set(places)) > 4 else ""
                print(f"    {a} -> {b}: {shown}{more}")
    if total:
        print(f"{total} module cycle(s)")
        return 1
    print("no module cycles")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
