#!/usr/bin/env python3
"""Size of a wasm module per crate: every function body's bytes attributed to the crate of
its name (the module's `name` section), data segments as "data (static)", the other
sections as "other sections". Used by bench/wasm_size.sh.

    bench/wasm_size.py MODULE.wasm [--top N] [--json OUT] [--names CRATE]

Crate of a name (wasm-bindgen demangles, so names are Rust paths, e.g.
`<sqlparser::ast::Expr as core::fmt::Display>::fmt::h1234`; mangled `_ZN`/`_R` names are
read roughly too): the first path segment, but past the standard library — in
`core::ptr::drop_in_place<sqlparser::ast::Expr>` or `<alloc::vec::Vec<T> as
core::clone::Clone>::clone` the first segment that is not core/alloc/std. Legacy mangling
does not name a generic function's type arguments, so monomorphized std code (Vec::push for
sqlparser's types) stays with core/alloc. Functions without a name (none in an unstripped
build) and C code (zstd's `ZSTD_*`, `HUF_*`, …) get a crate from their prefix.

gzip estimate per crate: the crate's function bodies concatenated (in module order) and
gzip -9 compressed alone, then scaled so the crates add up to the module's gzip -9 (a
crate's share of the compressed module; compressing a crate alone loses the redundancy it
shares with the rest, so the unscaled sum is larger than the module's gzip).
"""
import argparse
import gzip
import json
import re
import sys
from collections import defaultdict

STD = {"core", "alloc", "std"}


def leb(b, i):
    r = s = 0
    while True:
        x = b[i]
        i += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, i


def sections(d):
    assert d[:4] == b"\0asm", "not a wasm module"
    i = 8
    while i < len(d):
        sid = d[i]
        size, j = leb(d, i + 1)
        name = None
        if sid == 0:
            n, k = leb(d, j)
            name = d[k:k + n].decode("utf-8", "replace")
        yield sid, name, i, j, j + size
        i = j + size


def imported_functions(d, start, end):
    count, i = leb(d, start)
    nfunc = 0
    for _ in range(count):
        for _ in range(2):  # module, field
            n, i = leb(d, i)
            i += n
        kind = d[i]
        i += 1
        if kind == 0:  # func: type index
            _, i = leb(d, i)
            nfunc += 1
        elif kind == 1:  # table: reftype, limits
            i += 1
            flags, i = leb(d, i)
            _, i = leb(d, i)
            if flags & 1:
                _, i = leb(d, i)
        elif kind == 2:  # memory: limits
            flags, i = leb(d, i)
            _, i = leb(d, i)
            if flags & 1:
                _, i = leb(d, i)
        elif kind == 3:  # global: valtype, mut
            i += 2
        elif kind == 4:  # tag
            i += 1
            _, i = leb(d, i)
        else:
            raise ValueError(f"import kind {kind}")
    return nfunc


def strip(d):
    """The module without its `name` and `.debug_*` custom sections."""
    out = [d[:8]]
    for sid, name, hdr, start, end in sections(d):
        if sid == 0 and (name == "name" or name.startswith(".debug")):
            continue
        out.append(d[hdr:end])
    return b"".join(out)


def function_names(d, start, end):
    n, i = leb(d, start)
    i += n  # "name"
    names = {}
    while i < end:
        sub = d[i]
        size, j = leb(d, i + 1)
        if sub == 1:
            count, k = leb(d, j)
            for _ in range(count):
                idx, k = leb(d, k)
                ln, k = leb(d, k)
                names[idx] = d[k:k + ln].decode("utf-8", "replace")
                k += ln
        i = j + size
    return names


def legacy_demangle(s):
    """`_ZN4core3ptr13drop_in_place17h..E` → `core::ptr::drop_in_place`, roughly."""
    m = re.match(r"_?_ZN(.*)E?$", s)
    if not m:
        return s
    body, out, i = m.group(1), [], 0
    while i < len(body) and body[i].isdigit():
        j = i
        while body[j].isdigit():
            j += 1
        n = int(body[i:j])
        out.append(body[j:j + n])
        i = j + n
    p = "::".join(x for x in out if not re.fullmatch(r"h[0-9a-f]{16}", x))
    for a, b in (("$LT$", "<"), ("$GT$", ">"), ("$u20$", " "), ("..", "::"), ("$RF$", "&"),
                 ("$C$", ","), ("$u7b$", "{"), ("$u7d$", "}"), ("$BP$", "*")):
        p = p.replace(a, b)
    return p


C_PREFIXES = [
    (re.compile(r"^(ZSTD|ZSTDv\d+|HUF|FSE|HIST|ZDICT|COVER|POOL|ERR|BIT|MEM|XXH|ZSTDMT)_|^(zstd|huf|fse)_|^XXH"), "zstd (C)"),
    (re.compile(r"^rust_zstd_wasm_shim_"), "zstd-sys"),
    (re.compile(r"^(mem(cpy|set|move|cmp)|__rust_|__rdl_|__rg_|rust_begin_unwind|rust_panic|__wbindgen|__wbg_|__externref|__multi3|__udivti3|__umodti3|__divti3|__modti3|__ashlti3|__lshrti3|__ashrti3|__muloti4|__floattidf|__fixdfti|compiler_builtins)"), "runtime/compiler_builtins"),
]

# the root of each path in a name: an identifier followed by `::` that does not itself follow `::`
PATH = re.compile(r"(?:^|(?<=[<\s,(&*\[;]))([A-Za-z_][A-Za-z0-9_]*)(?:\[[0-9a-f]+\])?::")


def crate_of(name):
    if name is None:
        return "(unnamed)"
    if name.startswith("_ZN") or name.startswith("__ZN"):
        name = legacy_demangle(name)
    elif name.startswith("_R"):
        # v0 mangling: crate roots are `C<disambiguator>?<len><ident>`; take the idents
        roots = re.findall(r"C(?:s[0-9A-Za-z_]*_)?(\d+)([A-Za-z_][A-Za-z0-9_]*)", name)
        idents = [ident[:int(n)] for n, ident in roots]
        for c in idents:
            if c not in STD:
                return c
        return idents[0] if idents else "(unknown)"
    for rx, crate in C_PREFIXES:
        if rx.search(name):
            return crate
    segs = PATH.findall(name)
    for c in segs:
        if c not in STD and not c.startswith("_"):
            return c
    if segs:
        return segs[0]
    if name.startswith("wasm_bindgen"):
        return "wasm_bindgen"
    return "(other: " + re.sub(r"[0-9]+$", "", name.split("::")[0])[:24] + ")"


def analyse(path):
    d = open(path, "rb").read()
    secs = list(sections(d))
    nimp = 0
    names = {}
    bodies = []
    data_bytes = 0
    other = defaultdict(int)
    for sid, name, hdr, start, end in secs:
        if sid == 2:
            nimp = imported_functions(d, start, end)
        elif sid == 10:
            count, i = leb(d, start)
            for k in range(count):
                size, j = leb(d, i)
                bodies.append((k, i, j + size))  # bytes incl. the size prefix
                i = j + size
        elif sid == 11:
            data_bytes += end - hdr
        elif sid == 0 and name == "name":
            names = function_names(d, start, end)
        else:
            label = f"custom {name}" if sid == 0 else {1: "type", 2: "import", 3: "function", 4: "table", 5: "memory", 6: "global", 7: "export", 8: "start", 9: "elem", 12: "datacount", 13: "tag"}.get(sid, str(sid))
            other[label] += end - hdr
    per = defaultdict(lambda: [0, 0, []])  # bytes, count, chunks
    fn_sizes = []
    for k, a, b in bodies:
        nm = names.get(nimp + k)
        c = crate_of(nm)
        per[c][0] += b - a
        per[c][1] += 1
        per[c][2].append(d[a:b])
        fn_sizes.append((b - a, c, nm))
    return d, per, data_bytes, other, fn_sizes, names


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wasm")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--json")
    ap.add_argument("--names", help="list the largest functions of this crate")
    ap.add_argument("--modules", help="this crate's bytes by module (its first DEPTH path"
                    " segments, --depth, default 2)")
    ap.add_argument("--depth", type=int, default=2)
    ap.add_argument("--shipped", help="the shipped module, for the totals (default: this one"
                    " without its name and .debug_* sections, as a stripped build)")
    ap.add_argument("--write-shipped", help="write that stripped module here")
    args = ap.parse_args()
    d, per, data_bytes, other, fn_sizes, names = analyse(args.wasm)
    if args.modules:
        by = defaultdict(lambda: [0, 0])
        for size, c, nm in fn_sizes:
            if c != args.modules:
                continue
            m = re.search(re.escape(c) + r"(?:\[[0-9a-f]+\])?((?:::[A-Za-z_][A-Za-z0-9_]*)*)", nm or "")
            segs = [x for x in (m.group(1) if m else "").split("::") if x]
            key = "::".join([c] + segs[:args.depth - 1])
            by[key][0] += size
            by[key][1] += 1
        for key, (size, n) in sorted(by.items(), key=lambda kv: -kv[1][0])[:args.top]:
            print(f"{size:>9} {n:>5}  {key}")
        return
    if args.names:
        rows = sorted((f for f in fn_sizes if f[1] == args.names), reverse=True)
        for size, _, nm in rows[:args.top]:
            print(f"{size:>9} {nm}")
        return
    shipped = open(args.shipped, "rb").read() if args.shipped else strip(d)
    if args.write_shipped:
        open(args.write_shipped, "wb").write(shipped)
    total_gz = len(gzip.compress(shipped, 9))
    gz = {c: len(gzip.compress(b"".join(v[2]), 9)) for c, v in per.items()}
    gz["data (static)"] = len(gzip.compress(b"".join(
        d[s:e] for sid, _, _, s, e in sections(d) if sid == 11), 9))
    rows = [(v[0], c, v[1]) for c, v in per.items()]
    rows.append((data_bytes, "data (static)", 0))
    code_total = sum(v[0] for v in per.values())
    # sections the shipped module keeps (a stripped build has no name/debug sections)
    shipped_other = 0
    for sid, name, hdr, start, end in sections(shipped):
        if sid not in (10, 11):
            shipped_other += end - hdr
    gz_sum = sum(gz.values())
    scale = total_gz / gz_sum if gz_sum else 0
    raw_total = len(shipped)
    rows.sort(reverse=True)
    print(f"{'crate':<28} {'raw bytes':>10} {'share':>6} {'fns':>6} {'gzip est':>9}")
    result = []
    for size, c, n in rows:
        result.append({"crate": c, "raw": size, "functions": n, "gzip_alone": gz.get(c, 0),
                       "gzip_est": round(gz.get(c, 0) * scale)})
    for r in result[:args.top]:
        print(f"{r['crate']:<28} {r['raw']:>10} {100 * r['raw'] / raw_total:>5.1f}% {r['functions'] or '':>6} {r['gzip_est']:>9}")
    rest = result[args.top:]
    if rest:
        print(f"{f'({len(rest)} more)':<28} {sum(r['raw'] for r in rest):>10} {100 * sum(r['raw'] for r in rest) / raw_total:>5.1f}% {sum(r['functions'] for r in rest):>6} {sum(r['gzip_est'] for r in rest):>9}")
    print(f"{'other sections (shipped)':<28} {shipped_other:>10} {100 * shipped_other / raw_total:>5.1f}%")
    print(f"code {code_total} + data {data_bytes} + other {shipped_other} = {code_total + data_bytes + shipped_other} (shipped module {raw_total} bytes raw, {total_gz} gzip -9)")
    print("gzip est: each crate's bodies gzip -9 alone, scaled to add up to the module's gzip -9"
          f" (scale {scale:.2f})")
    if args.json:
        json.dump({"raw": raw_total, "gzip": total_gz, "other_sections": shipped_other,
                   "crates": result, "other": dict(other)}, open(args.json, "w"), indent=1)


if __name__ == "__main__":
    main()
