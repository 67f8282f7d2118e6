#!/usr/bin/env python3
"""Write the explorer's dist/ from wasm-bindgen's output (scripts/build-explorer), as
`trunk build` would from index.html:

  dist_index.py INDEX_HTML STYLE_CSS BINDGEN_DIR DIST

- deltalens-web.js and deltalens-web_bg.wasm from BINDGEN_DIR and STYLE_CSS are copied
  under content-hashed names (`deltalens-web-<hash>.js`, `…_bg.wasm`, `style-<hash>.css`):
  a new build never meets a stale cached file;
- INDEX_HTML's `<link data-trunk rel="rust" …>` becomes a module script that loads the
  wasm, plus preloads with Subresource Integrity; `<link data-trunk rel="css" …>` becomes
  the stylesheet link with its integrity. Any other `data-trunk` link is an error (this
  script does not know it).
- the codec module (web/codecs: deltalens-codecs.js, deltalens-codecs_bg.wasm) and the
  writer module (web/extras: deltalens-extras.*) and the query module (web/query:
  deltalens-query.*, with its Web Worker script web/query/worker.js), when in BINDGEN_DIR,
  are copied under content-hashed names too, and the page says where they are
  (`globalThis.deltalensExtras.{codecs,extras,query}`): the explorer fetches one the first
  time a brotli or zstd page, a Parquet download or a query needs it, never on the first
  load;
- wasm-bindgen's `snippets/` (the JavaScript of `inline_js` imports, which the glue
  imports by relative path) is copied as it is;
- DIST is replaced only once everything is written (a failed build leaves the old one).
"""
import base64
import hashlib
import os
import re
import shutil
import sys


# the query module's Web Worker script (web/query/worker.js)
QUERY_WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "query", "worker.js")


def hashed(data):
    return hashlib.sha256(data).hexdigest()[:16]


def sri(data):
    return "sha384-" + base64.b64encode(hashlib.sha384(data).digest()).decode()


def main(index_html, style_css, bindgen_dir, dist):
    js = open(os.path.join(bindgen_dir, "deltalens-web.js"), "rb").read()
    wasm = open(os.path.join(bindgen_dir, "deltalens-web_bg.wasm"), "rb").read()
    css = open(style_css, "rb").read()
    # the wasm's name goes into nothing the JS hashes: loaded by the explicit path below
    js_name = f"deltalens-web-{hashed(js + wasm)}.js"
    wasm_name = f"deltalens-web-{hashed(js + wasm)}_bg.wasm"
    css_name = f"style-{hashed(css)}.css"
    extras = []
    where = {}
    for module in ("codecs", "extras", "query"):
        js_path = os.path.join(bindgen_dir, f"deltalens-{module}.js")
        if not os.path.exists(js_path):
            continue
        mjs = open(js_path, "rb").read()
        mwasm = open(os.path.join(bindgen_dir, f"deltalens-{module}_bg.wasm"), "rb").read()
        h = hashed(mjs + mwasm)
        names = (f"deltalens-{module}-{h}.js", f"deltalens-{module}-{h}_bg.wasm")
        extras += [(names[0], mjs), (names[1], mwasm)]
        worker = ""
        if module == "query":
            # the query module runs in a Web Worker started from this script
            wjs = open(QUERY_WORKER, "rb").read()
            wname = f"query-worker-{hashed(wjs)}.js"
            extras.append((wname, wjs))
            worker = f", worker: '/{wname}'"
        where[module] = f"{{ js: '/{names[0]}', wasm: '/{names[1]}'{worker} }}"
    where = (
        "globalThis.deltalensExtras = { " + ", ".join(f"{k}: {v}" for k, v in where.items()) + " };\n"
        if where else ""
    )
    script = (
        '<script type="module">\n'
        + where +
        f"import init from '/{js_name}';\n"
        f"await init({{ module_or_path: '/{wasm_name}' }});\n"
        "</script>\n"
        f'  <link rel="modulepreload" href="/{js_name}" crossorigin="anonymous" integrity="{sri(js)}">\n'
        f'  <link rel="preload" href="/{wasm_name}" crossorigin="anonymous" integrity="{sri(wasm)}" as="fetch" type="application/wasm">'
    )
    style = f'<link rel="stylesheet" href="/{css_name}" integrity="{sri(css)}"/>'
    html = open(index_html, encoding="utf-8").read()
    replaced = {"rust": 0, "css": 0}

    def link(m):
        rel = re.search(r'rel="([^"]+)"', m.group(0))
        kind = rel.group(1) if rel else "?"
        if kind not in replaced:
            sys.exit(f"dist_index.py: {index_html} has a data-trunk link of rel={kind!r}, which it cannot build")
        replaced[kind] += 1
        return script if kind == "rust" else style

    html = re.sub(r"<link data-trunk [^>]*>", link, html)
    if replaced != {"rust": 1, "css": 1}:
        sys.exit(f"dist_index.py: expected one rust and one css data-trunk link in {index_html}, found {replaced}")
    tmp = dist + ".tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    for name, data in [(js_name, js), (wasm_name, wasm), (css_name, css), ("index.html", html.encode())] + extras:
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(data)
    snippets = os.path.join(bindgen_dir, "snippets")
    if os.path.isdir(snippets):
        shutil.copytree(snippets, os.path.join(tmp, "snippets"))
    shutil.rmtree(dist, ignore_errors=True)
    os.rename(tmp, dist)
    print(f"dist: index.html, {js_name}, {wasm_name} ({len(wasm)} bytes), {css_name}"
          + "".join(f", {n} ({len(d)} bytes)" for n, d in extras))


if __name__ == "__main__":
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    main(*sys.argv[1:])
