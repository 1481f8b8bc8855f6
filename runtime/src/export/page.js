"use strict";
(function () {
  var tree = JSON.parse(document.getElementById("am-tree").textContent);
  var chunks = Array.from(document.querySelectorAll("script.am-chunk"));
  var el = {};
  ["am-main", "am-ctx", "am-ctxcount", "am-q", "am-find", "am-err", "am-prev", "am-next", "am-where", "am-status", "am-leafinfo", "am-hits", "am-outline", "am-filter", "am-collapse", "am-expand"].forEach(function (id) {
    el[id] = document.getElementById(id);
  });
  // The tree as written is short: parents as distances back, kinds as
  // indexes into their names, times as seconds since the time before.
  var n = tree.pd.length;
  tree.p = tree.pd.map(function (d, i) { return d === 0 ? -1 : i - d; });
  tree.kinds = tree.k.map(function (k) { return tree.kn[k]; });
  var times = new Array(n);
  var clock = 0;
  for (var t = 0; t < n; t++) {
    if (tree.t[t] === null) { times[t] = null; continue; }
    clock += tree.t[t];
    times[t] = clock;
  }
  var children = new Array(n);
  var i, p;
  for (i = 0; i < n; i++) children[i] = [];
  for (i = 0; i < n; i++) {
    p = tree.p[i];
    if (p >= 0 && p < n) children[p].push(i);
  }
  // The leaf a branch leads to: its last entry in file order.
  var last = new Array(n);
  for (i = n - 1; i >= 0; i--) {
    var best = i;
    for (var c = 0; c < children[i].length; c++) {
      if (last[children[i][c]] > best) best = last[children[i][c]];
    }
    last[i] = best;
  }
  var byId = new Map();
  for (i = 0; i < n; i++) if (!byId.has(tree.ids[i])) byId.set(tree.ids[i], i);

  // A chunk's text: its markup deflated and in base64 (`data-deflate`),
  // inflated by the browser, or the markup as it is.
  function inflate(script) {
    var text = script.textContent;
    if (!script.hasAttribute("data-deflate")) return Promise.resolve(text);
    var bytes;
    if (Uint8Array.fromBase64) bytes = Uint8Array.fromBase64(text);
    else {
      var bin = atob(text);
      bytes = new Uint8Array(bin.length);
      for (var b = 0; b < bin.length; b++) bytes[b] = bin.charCodeAt(b);
    }
    return new Response(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate"))).text();
  }
  var texts = [];

  // A chunk is the markup of its entries one after the other, each an
  // <article> (nothing else in an entry's markup opens one).
  var cache = new Map();
  function chunk(k) {
    var got = cache.get(k);
    if (!got) {
      got = (texts[k] || "").split("<article ");
      got.shift();
      for (var a = 0; a < got.length; a++) got[a] = "<article " + got[a];
      if (cache.size > 8) cache.delete(cache.keys().next().value);
      cache.set(k, got);
    }
    return got;
  }
  function html(i) { return chunk(Math.floor(i / tree.chunk))[i % tree.chunk]; }

  // Flags of an entry in the tree (with 1, a compaction, and 2, an error).
  var QUIET = 8, CALLS = 16, CALL_FAILED = 32;
  var state = { leaf: tree.leaf, path: [], onPath: null, ctx: null, hit: -1 };
  // The window (see below): its first and last path positions, how many
  // entries it holds, the calls in it by id; the filter, collapse or expand
  // all, where the reader is (the first path position in view), the entry
  // j and k marked.
  var lo = 0, hi = 0, count = 0, calls = new Map(), filter = "", folds = "", seen = -1, cursor = -1;
  var main = el["am-main"];
  function rect(node) { return node.getBoundingClientRect(); }
  function mk(tag) { return document.createElement(tag); }

  function pathTo(leaf) {
    var path = [];
    var at = leaf;
    while (at >= 0 && at < n && path.length <= n) {
      path.push(at);
      at = tree.p[at];
    }
    return path.reverse();
  }

  // What the model sees at the leaf, by the session's rules: after the last
  // compaction on the path, its summary, what it kept, and what follows.
  function contextOf(path) {
    var ctx = new Set();
    var at = -1;
    for (var k = path.length - 1; k >= 0; k--) {
      if (tree.f[path[k]] & 1) { at = k; break; }
    }
    var from = 0;
    if (at >= 0) {
      ctx.add(path[at]);
      var fk = tree.fk[path[at]];
      from = at;
      if (fk !== undefined) {
        for (var j = 0; j < at; j++) if (tree.ids[path[j]] === fk) { from = j; break; }
      }
      for (var m = from; m < at; m++) if (tree.s[path[m]] > 0 && !(tree.f[path[m]] & 1)) ctx.add(path[m]);
      from = at + 1;
    }
    for (var q = from; q < path.length; q++) if (tree.s[path[q]] > 0 && !(tree.f[path[q]] & 1)) ctx.add(path[q]);
    return ctx;
  }


  // The tokens and cost of each reply on the path, as bars (neighbours summed
  // past tree.mb bars), with the cost as a line; a reply of unknown cost is
  // marked, never counted as zero.
  var SVG = "http://www.w3.org/2000/svg";
  function svg(name, attrs) {
    var node = document.createElementNS(SVG, name);
    for (var a in attrs) node.setAttribute(a, String(attrs[a]));
    return node;
  }
  function drawChart(path) {
    var slot = document.getElementById("am-chart");
    slot.textContent = "";
    var replies = [];
    for (var k = 0; k < path.length; k++) {
      var u = tree.u[path[k]];
      if (u) replies.push(u);
    }
    slot.setAttribute("data-replies", String(replies.length));
    if (!replies.length) return;
    var per = Math.ceil(replies.length / tree.mb);
    var bars = [];
    for (var s = 0; s < replies.length; s += per) {
      var bar = { first: s + 1, n: 0, t: [0, 0, 0, 0], cost: 0, unknown: 0 };
      for (var r = s; r < Math.min(s + per, replies.length); r++) {
        var v = replies[r];
        bar.n++;
        for (var t = 0; t < 4; t++) bar.t[t] += v[t];
        if (v[4] === null) bar.unknown++; else bar.cost += v[4];
      }
      bars.push(bar);
    }
    var maxTokens = 1, maxCost = 0;
    bars.forEach(function (b) {
      maxTokens = Math.max(maxTokens, b.t[0] + b.t[1] + b.t[2] + b.t[3]);
      maxCost = Math.max(maxCost, b.cost);
    });
    var w = 4, h = 80;
    var root = svg("svg", { "class": "chart", role: "img", "aria-label": "tokens and cost per reply", viewBox: "0 0 " + (w * bars.length) + " " + (h + 12), preserveAspectRatio: "none", width: "100%", height: "110" });
    var points = [];
    bars.forEach(function (b, n) {
      var x = n * w, y = h;
      var g = svg("g", {});
      var title = svg("title", {});
      var label = b.n === 1 ? "reply " + b.first : "replies " + b.first + "–" + (b.first + b.n - 1);
      var cost = b.unknown === b.n ? "cost unknown" : b.unknown > 0 ? "$" + b.cost.toFixed(4) + " + unknown for " + b.unknown : "$" + b.cost.toFixed(4);
      title.textContent = label + ": " + b.t[0] + " in, " + b.t[1] + " out, " + b.t[2] + " cache read, " + b.t[3] + " cache write; " + cost;
      g.appendChild(title);
      [[b.t[2], "t-cr"], [b.t[0], "t-in"], [b.t[3], "t-cw"], [b.t[1], "t-out"]].forEach(function (part) {
        if (!part[0]) return;
        var height = part[0] / maxTokens * h;
        y -= height;
        g.appendChild(svg("rect", { "class": part[1], x: x.toFixed(1), y: y.toFixed(2), width: (w * 0.8).toFixed(1), height: height.toFixed(2) }));
      });
      if (b.unknown > 0) g.appendChild(svg("rect", { "class": "t-unknown", x: x.toFixed(1), y: h + 3, width: (w * 0.8).toFixed(1), height: 8 }));
      root.appendChild(g);
      if (maxCost > 0) points.push((x + w * 0.4).toFixed(1) + "," + (h - b.cost / maxCost * h).toFixed(2));
    });
    if (points.length) root.appendChild(svg("polyline", { "class": "t-cost", fill: "none", points: points.join(" ") }));
    slot.appendChild(root);
  }

  function setLeaf(leaf) {
    state.leaf = leaf;
    state.path = pathTo(leaf);
    state.onPath = new Map();
    for (var k = 0; k < state.path.length; k++) state.onPath.set(state.path[k], k);
    state.ctx = contextOf(state.path);
    var sent = 0;
    state.ctx.forEach(function (i) { sent += tree.s[i]; });
    el["am-ctxcount"].textContent = sent + " messages sent at this leaf";
    el["am-ctxcount"].setAttribute("data-count", String(sent));
    var leafId = leaf >= 0 ? tree.ids[leaf] : "none";
    el["am-leafinfo"].setAttribute("data-leaf", leafId);
    el["am-leafinfo"].textContent = "leaf: " + leafId + " (" + state.path.length + " entries on its path, " + n + " in the session)";
    drawChart(state.path);
    // The window is shown afresh, on this path.
    main.textContent = "";
    lo = hi = count = 0;
  }

  // Syntax highlighting: a small tokenizer per family of languages (comments,
  // strings, numbers, keywords), building text nodes and spans, never markup.
  var FAMILY = {};
  // `tag`, when given, is what else counts as a keyword (a markup tag's name).
  function family(exts, kw, comment, tag) {
    var words = new Set(kw.split(" "));
    var re = new RegExp("(" + comment + ")|(\"(?:[^\"\\\\\\n]|\\\\.)*\"|'(?:[^'\\\\\\n]|\\\\.)*'|`(?:[^`\\\\]|\\\\.)*`)|(\\b\\d[\\d_.xXa-fA-F]*\\b)|(" + (tag ? tag + "|" : "") + "[A-Za-z_$][\\w$]*)", "g");
    exts.split(" ").forEach(function (e) { FAMILY[e] = { words: words, re: re, tag: !!tag }; });
  }
  family("rs", "as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err", "//[^\\n]*|/\\*[\\s\\S]*?\\*/");
  family("js mjs cjs jsx ts tsx mts cts json jsonl", "async await break case catch class const continue default delete do else export extends false finally for from function if import in instanceof interface let new null of return static super switch this throw true try type typeof undefined var void while yield", "//[^\\n]*|/\\*[\\s\\S]*?\\*/");
  family("c h cc cpp cxx hpp hh java kt kts cs go swift scala dart php m mm zig", "auto break case catch char class const continue default defer do double else enum extends false final float fn for func go if import int interface let long namespace new nil null package private protected public return static string struct switch this throw true try type typedef unsigned val var void while", "//[^\\n]*|/\\*[\\s\\S]*?\\*/");
  family("py pyi rb sh bash zsh fish yaml yml toml ini cfg conf makefile dockerfile pl r nix tf", "and as assert async await break case class continue def del do done elif else end esac except export false fi finally for from function if import in is lambda local nil none None not or pass raise return self then true True False try until while with yield", "#[^\\n]*");
  family("sql lua hs", "and as by create delete desc do else end false for from function group having if in insert into is join left limit local nil not null on or order return select set table then true update values where", "--[^\\n]*");
  family("css scss less", "important", "/\\*[\\s\\S]*?\\*/");
  family("html htm xhtml xml svg vue svelte plist xsd xsl csproj", "DOCTYPE", "<!--[\\s\\S]*?-->", "</?[A-Za-z][\\w:.-]*|/?>");
  family("clj cljs cljc edn el lisp scm ss rkt fnl", "def defn defmacro defun define do fn if let lambda loop nil ns quote recur require setq t true false when", ";[^\\n]*");
  family("ex exs erl hrl", "after alias case catch cond def defmodule defp do else end false fn if import nil receive true try when with", "#[^\\n]*|%[^\\n]*");
  family("ml mli fs fsi fsx", "and begin do done else end false fun function if in let match module mutable of open rec then true try type val when with", "\\(\\*[\\s\\S]*?\\*\\)|//[^\\n]*");
  family("ps1 psm1 jl cmake proto graphql gql gradle groovy sol v sv tex bat cmd", "begin break catch class continue do else elseif end enum false for foreach function if import in message module mutable param query return service struct switch then throw true try type using var while", "#[^\\n]*|//[^\\n]*|%[^\\n]*|\\bREM\\b[^\\n]*|::[^\\n]*");
  var ALIAS = { rust: "rs", javascript: "js", typescript: "ts", python: "py", shell: "sh", console: "sh", golang: "go", "c++": "cpp", ruby: "rb", yml: "yaml", kotlin: "kt", csharp: "cs", elixir: "ex", erlang: "erl", clojure: "clj", ocaml: "ml", fsharp: "fs", powershell: "ps1", julia: "jl", markup: "html", svelte: "svelte", scheme: "scm", racket: "rkt" };
  function langOf(code) {
    var lang = code.getAttribute("data-lang");
    if (!lang) {
      var m = /(?:^|\s)language-(\S+)/.exec(code.className);
      if (m) lang = m[1].toLowerCase();
    }
    if (!lang) return null;
    return FAMILY[ALIAS[lang] || lang] || null;
  }
  // A diff's lines, marked by their first character (a patch's headers too).
  function markDiff(code, patch) {
    var lines = code.textContent.split("\n");
    if (lines.length && lines[lines.length - 1] === "") lines.pop();
    var frag = document.createDocumentFragment();
    lines.forEach(function (line) {
      var c = line.charAt(0);
      var cls = "ctx";
      if (patch && /^(\*\*\*|@@|\+\+\+ |--- |diff )/.test(line)) cls = "hunk";
      else if (c === "+") cls = "add";
      else if (c === "-") cls = "del";
      var span = mk("span");
      span.className = cls;
      span.textContent = line;
      frag.appendChild(span);
      frag.appendChild(document.createTextNode("\n"));
    });
    code.textContent = "";
    code.appendChild(frag);
  }
  function highlight(code) {
    var lang = code.getAttribute("data-lang");
    if (lang === "diff" || lang === "patch") { if (!code.querySelector("span")) markDiff(code, lang === "patch"); return; }
    var f = langOf(code);
    var text = code.textContent;
    if (!f || text.length > 200000 || code.querySelector("span")) return;
    var frag = document.createDocumentFragment();
    var last = 0, m, cls;
    f.re.lastIndex = 0;
    while ((m = f.re.exec(text)) !== null) {
      cls = m[1] ? "cm" : m[2] ? "st" : m[3] ? "nu" : f.words.has(m[4]) || (f.tag && /^<|>$/.test(m[4])) ? "kw" : null;
      if (!cls) continue;
      if (m.index > last) frag.appendChild(document.createTextNode(text.slice(last, m.index)));
      var span = mk("span");
      span.className = "hl-" + cls;
      span.textContent = m[0];
      frag.appendChild(span);
      last = m.index + m[0].length;
    }
    if (last === 0) return;
    if (last < text.length) frag.appendChild(document.createTextNode(text.slice(last)));
    code.textContent = "";
    code.appendChild(frag);
    code.classList.add("hl");
  }

  // What an entry is about, in a line: its first text, past its header.
  function gist(i) {
    var markup = html(i).replace(/<header>[\s\S]*?<\/header>/, "").replace(/<summary>[\s\S]*?<\/summary>/g, "").replace(/<p class="note">[\s\S]*?<\/p>/g, "");
    var t = plain(markup).replace(/\s+/g, " ").trim();
    return t.length > 70 ? t.slice(0, 70) + "…" : t;
  }
  function quietKind(i) { return (tree.f[i] & QUIET) !== 0; }
  // A branch's name: the first message on it (past app lines), found once
  // (every page showing its fork names it).
  var branchNames = new Map();
  function branchName(c) {
    if (!branchNames.has(c)) branchNames.set(c, firstMessage(c));
    return branchNames.get(c);
  }
  function firstMessage(c) {
    var at = c, steps = 0;
    while (at >= 0 && steps < 200) {
      if (!quietKind(at)) {
        var g = gist(at);
        if (g) return tree.kinds[at] + ": " + g;
      }
      var next = -1;
      for (var q = 0; q < children[at].length; q++) if (last[children[at][q]] === last[at]) { next = children[at][q]; break; }
      at = next;
      steps++;
    }
    // No message on it: its first line's kind and gist.
    var m = /data-kind="([^"]*)"/.exec(html(c));
    var g = /<span class="gist">([\s\S]*?)<\/span>/.exec(html(c));
    return (m ? plain(m[1]) : tree.kinds[c]) + (g ? ": " + plain(g[1]).slice(0, 60) : "");
  }

  // What the markup leaves to the page, written once in the tree: the
  // entry's id and index, its kind's name, its permalink, and each tool
  // call's head.
  function dress(art, i) {
    art.setAttribute("data-i", String(i));
    art.setAttribute("data-entry-id", tree.ids[i]);
    var head = art.querySelector("header, summary");
    if (head) {
      var kind = mk("span");
      kind.className = "kind";
      kind.textContent = art.getAttribute("data-kind");
      head.insertBefore(kind, head.firstChild);
      if (times[i] !== null) {
        var time = mk("time");
        var iso = new Date(times[i] * 1000);
        time.textContent = isNaN(iso.getTime()) ? String(times[i]) : iso.toISOString().slice(0, 19) + "Z";
        var before = head.querySelector(".label");
        head.insertBefore(time, before);
      }
      var perma = mk("a");
      perma.className = "perma";
      perma.href = "#" + encodeURIComponent(tree.ids[i]);
      perma.textContent = "#" + tree.ids[i];
      head.appendChild(perma);
    }
    var usage = art.querySelector("p.usage[data-stop]");
    var u = tree.u[i];
    if (usage && u) {
      usage.textContent = u[0] + " in, " + u[1] + " out, " + u[2] + " cache read, " + u[3] + " cache write; ";
      if (u[4] === null) {
        var unknown = mk("span");
        unknown.className = "unknown";
        unknown.textContent = "cost unknown";
        usage.appendChild(unknown);
      } else {
        usage.appendChild(document.createTextNode("$" + u[4].toFixed(4) + (usage.hasAttribute("data-priced") ? " (priced from the price database)" : "")));
      }
      usage.appendChild(document.createTextNode("; stop: " + usage.getAttribute("data-stop")));
    }
    var rh = art.querySelector(".resulthead");
    if (rh && art.hasAttribute("data-tool")) {
      var of = mk("b");
      of.textContent = art.getAttribute("data-tool");
      rh.insertBefore(of, rh.firstChild);
      rh.insertBefore(document.createTextNode("result of "), of);
      rh.insertBefore(document.createTextNode(" "), of.nextSibling);
    }
    art.querySelectorAll(".call[data-tool]").forEach(function (call) {
      var h = mk("div");
      h.className = "callhead";
      var b = mk("b");
      b.textContent = call.getAttribute("data-tool");
      var c = mk("code");
      c.textContent = call.getAttribute("data-call");
      h.appendChild(b);
      h.appendChild(document.createTextNode(" "));
      h.appendChild(c);
      call.insertBefore(h, call.firstChild);
    });
  }

  // The path is one scroll, shown as a window of it: the path's entries
  // from lo to hi (those the filter shows), grown by GROW entries as the
  // reader nears either end and cut at the far end past BOUND, so the page holds a bounded number of entries whatever the
  // path's length. The view stays put: whatever is added or taken away
  // above it is made up by scrolling (the browser's own scroll anchoring is
  // off, in the style).
  // STEP entries are rendered around an entry opened, a fifth of that at a
  // time as the reader scrolls (a short frame), BOUND at most kept.
  var STEP = tree.step, GROW = Math.ceil(STEP / 5), BOUND = 3 * STEP, JUMP = 100;

  function shows(i) {
    var f = filter;
    if (!f) return true;
    if (f === "user") return tree.kinds[i] === "user";
    if (f === "tools") return (tree.f[i] & CALLS) !== 0 || tree.kinds[i] === "toolResult";
    return (tree.f[i] & (2 | CALL_FAILED)) !== 0;
  }

  // Entry k of the path as an article at the end of box (a tool's result
  // inside its call when the call is shown), then its branches when it
  // forks.
  function entryAt(k, box) {
    var i = state.path[k];
    box.insertAdjacentHTML("beforeend", html(i));
    var art = box.lastElementChild;
    dress(art, i);
    art.dataset.k = k;
    art.classList.add(state.ctx.has(i) ? "ctx" : "out");
    art.setAttribute("data-s", String(state.ctx.has(i) ? tree.s[i] : 0));
    if (i === state.leaf) art.classList.add("leaf");
    if (i === state.hit) art.classList.add("hit");
    if (i === cursor) art.classList.add("cursor");
    art.querySelectorAll(".call[data-call]").forEach(function (call) {
      calls.set(call.getAttribute("data-call"), { el: call, k: k });
    });
    var of = art.getAttribute("data-result-of");
    var call = of === null ? null : calls.get(of);
    if (call && call.k < k && (call.el.isConnected || box.contains(call.el))) call.el.querySelector(".slot").appendChild(art);
    art.querySelectorAll("pre code").forEach(highlight);
    if (folds === "collapsed") {
      if (!art.classList.contains("quiet")) art.classList.add("collapsed");
      art.querySelectorAll("details[open]").forEach(function (d) { d.open = false; });
    } else if (folds === "expanded") {
      art.querySelectorAll("details:not(.line)").forEach(function (d) { d.open = true; });
    }
    if (children[i].length > 1 && !filter) {
      var nav = branchNav(i, k + 1 < state.path.length ? state.path[k + 1] : -1);
      nav.dataset.k = k;
      box.appendChild(nav);
    }
  }

  // The first entry from `from` on the reader sees or has below (not a
  // run of app lines, which the change may regroup), and where it is;
  // keep() scrolls it back there after a change above it.
  function anchorAt(from) {
    var kids = main.children, a = seenFrom(from), c;
    for (c = a; c < kids.length; c++) if (!isRun(kids[c])) return { el: kids[c], top: rect(kids[c]).top };
    for (c = a - 1; c >= from; c--) if (!isRun(kids[c])) return { el: kids[c], top: rect(kids[c]).top };
    return null;
  }
  // The first child of main from `a` on whose bottom is below the
  // viewport's top.
  function seenFrom(a) {
    var kids = main.children, b = kids.length, mid;
    while (a < b) { mid = (a + b) >> 1; if (rect(kids[mid]).bottom > 0) b = mid; else a = mid + 1; }
    return a;
  }
  function keep(anchor) {
    if (!anchor || !anchor.el.isConnected) return;
    var d = rect(anchor.el).top - anchor.top;
    if (d) window.scrollBy(0, d);
  }
  function isRun(node) { return node.matches(".quiet,.run"); }
  function entriesIn(node) { return (node.matches("article.entry") ? 1 : 0) + node.querySelectorAll("article.entry").length; }

  // Adds up to `want` entries (those the filter shows) past the window's
  // end (dir 1) or before its start (dir -1), then cuts the other end.
  function grow(dir, want) {
    if (calls.size > 4 * BOUND) calls.forEach(function (c, id) { if (!c.el.isConnected) calls.delete(id); });
    var box = mk("div");
    var len = state.path.length, added = 0, k;
    if (dir > 0) {
      for (k = hi; k < len && added < want; k++) if (shows(state.path[k])) { entryAt(k, box); added++; }
      hi = k;
    } else {
      var from = lo;
      while (from > 0 && added < want) { from--; if (shows(state.path[from])) added++; }
      for (k = from; k < lo; k++) if (shows(state.path[k])) entryAt(k, box);
      lo = from;
    }
    count += added;
    var frag = document.createDocumentFragment();
    while (box.firstChild) frag.appendChild(box.firstChild);
    var old = Array.from(main.children);
    if (dir > 0) {
      // A result may go inside its call above: the view is kept.
      var at = anchorAt(0);
      main.appendChild(frag);
      fold();
      keep(at);
      trim(-1);
      return;
    }
    // Above the reader: kept in view by an entry past the run (if any) the
    // new entries may join.
    var lead = 0;
    while (lead < old.length && isRun(old[lead])) lead++;
    var anchor = anchorAt(lead);
    main.insertBefore(frag, main.firstChild);
    // A result shown alone at the old start goes inside its call, now shown.
    old.forEach(function (node) {
      var of = node.getAttribute("data-result-of");
      var call = of === null ? null : calls.get(of);
      if (call && call.el.isConnected && call.k < +node.dataset.k) call.el.querySelector(".slot").appendChild(node);
    });
    fold();
    keep(anchor);
    trim(1);
  }

  // Cuts entries off the end away from the reader (dir -1: the start, 1:
  // the end) down to BOUND, never one within four screens of the viewport
  // (twice the distance at which the window grows, so that it does not
  // grow again where it was cut); a long run of app lines loses its far
  // lines and keeps its row.
  function trim(dir) {
    var over = count - BOUND;
    if (over <= 0) return;
    var margin = 4 * innerHeight;
    var kids = Array.from(main.children);
    if (dir > 0) kids.reverse();
    var cut = [], c = 0;
    function away(node) {
      var r = rect(node);
      return dir < 0 ? r.bottom < -margin : r.top > innerHeight + margin;
    }
    for (; c < kids.length && over > 0; c++) {
      var node = kids[c], next = kids[c + 1];
      if (away(node)) {
        // A fork's buttons go with the entry before them.
        if (next && (dir < 0 ? next : node).classList.contains("branches")) {
          if (dir > 0 && !away(next)) break;
          cut.push(next);
          over -= entriesIn(next);
          c++;
        }
        cut.push(node);
        over -= entriesIn(node);
        continue;
      }
      if (node.classList.contains("run") && !node.open) {
        var lines = Array.from(node.querySelectorAll(":scope > article"));
        if (dir > 0) lines.reverse();
        for (var j = 0; j + 1 < lines.length && over > 0; j++) { cut.push(lines[j]); over--; }
      }
      break;
    }
    if (!cut.length) return;
    var anchor = dir < 0 ? anchorAt(c) : null;
    cut.forEach(function (node) { count -= entriesIn(node); node.remove(); });
    // The window's ends: its first and last entries shown.
    var min = Infinity, max = -1;
    main.querySelectorAll("article.entry[data-k]").forEach(function (a) {
      var k = +a.dataset.k;
      if (k < min) min = k;
      if (k > max) max = k;
    });
    if (dir < 0 && max >= 0) lo = min;
    if (dir > 0 && max >= 0) hi = max + 1;
    fold();
    keep(anchor);
  }

  // App lines side by side, two or more, as one row that opens on demand:
  // redone after every change, so that a run cut by the window's edge and
  // grown again stays one row.
  function fold() {
    var group = [];
    Array.from(main.children).forEach(function (node) {
      if (isRun(node)) group.push(node);
      else { foldRun(group); group = []; }
    });
    foldRun(group);
  }
  function foldRun(group) {
    var lines = [], run = null;
    group.forEach(function (g) {
      if (g.tagName === "DETAILS") {
        if (!run) run = g;
        lines.push.apply(lines, g.querySelectorAll(":scope > article"));
      } else lines.push(g);
    });
    if (!run && lines.length < 2) return;
    if (!run) {
      run = mk("details");
      run.className = "run";
      run.appendChild(mk("summary"));
      run.open = folds === "expanded";
    }
    if (group.length > 1) {
      main.insertBefore(run, group[0]);
      lines.forEach(function (a) { run.appendChild(a); });
      group.forEach(function (g) { if (g !== run && g.tagName === "DETAILS") g.remove(); });
    }
    if (run.dataset.n != lines.length) {
      var kinds = new Map(), names = [];
      lines.forEach(function (a) { var k = a.getAttribute("data-kind"); kinds.set(k, (kinds.get(k) || 0) + 1); });
      kinds.forEach(function (count, k) { names.push(count + " " + k); });
      run.firstElementChild.textContent = lines.length + " app lines: " + names.join(", ");
      run.dataset.n = lines.length;
    }
  }

  // Shows the window around path position k afresh.
  function reset(k) {
    main.textContent = "";
    count = 0;
    calls = new Map();
    lo = hi = Math.max(0, Math.min(k, state.path.length));
    grow(1, k > 0 ? Math.ceil(STEP / 2) : STEP);
    if (lo > 0) grow(-1, Math.floor(STEP / 2));
  }

  var pending = false;
  function later() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(function () { pending = false; check(); });
  }
  // Near an end of the window (within two screens), it grows there, a step
  // a frame, until the reader has room. The window holds more than BOUND
  // only when more entries than that are within reach of the view (never
  // more than ten times BOUND, whatever the entries' height).
  function check() {
    var first = main.firstElementChild, last = main.lastElementChild, margin = 2 * innerHeight;
    if (count < 10 * BOUND) {
      if (hi < state.path.length && (!last || rect(last).bottom < innerHeight + margin)) { grow(1, GROW); later(); }
      else if (lo > 0 && (!first || rect(first).top > -margin)) { grow(-1, GROW); later(); }
    }
    where();
  }
  window.addEventListener("scroll", later, { passive: true });
  window.addEventListener("resize", later);

  // The path position of node's first (or last) entry.
  function kOf(node, end) {
    if (node.dataset.k) return +node.dataset.k;
    var all = node.querySelectorAll("[data-k]");
    return all.length ? +all[end ? all.length - 1 : 0].dataset.k : -1;
  }
  // Where the reader is: the entries from the first to the last in view.
  function where() {
    var kids = main.children, len = kids.length, first = seenFrom(0), a = first, b = len, mid;
    while (a < b) { mid = (a + b) >> 1; if (rect(kids[mid]).top < innerHeight) a = mid + 1; else b = mid; }
    var from = first < len ? kOf(kids[first], false) : -1;
    var to = a - 1 >= first ? kOf(kids[a - 1], true) : from;
    seen = from;
    var w = el["am-where"];
    w.textContent = from < 0 ? "no entries shown" : "entries " + (from + 1) + "–" + (to + 1) + " of " + state.path.length;
    w.dataset.lo = lo;
    w.dataset.hi = hi;
    w.dataset.n = state.path.length;
  }

  function branchNav(at, taken) {
    var nav = mk("div");
    nav.className = "branches";
    var head = mk("span");
    head.textContent = children[at].length + " branches: ";
    nav.appendChild(head);
    children[at].forEach(function (c, k) {
      var b = mk("button");
      b.type = "button";
      b.className = "branch" + (c === taken ? " on" : "");
      b.setAttribute("data-to", tree.ids[c]);
      b.textContent = (k + 1) + ". " + branchName(c);
      b.addEventListener("click", function () {
        setLeaf(last[c]);
        show(c);
      });
      nav.appendChild(b);
    });
    return nav;
  }

  function article(i) {
    return main.querySelector("article.entry[data-i=\"" + i + "\"]");
  }

  // Shows entry i of the path, marked, the window centred on it when it
  // was not in it (the filter let go when it hides the entry).
  function show(i) {
    var k = state.onPath.get(i);
    if (k === undefined) return false;
    if (!shows(i)) setFilter("", -1);
    var a = article(i);
    if (!a) { reset(k); a = article(i); }
    if (!a) return false;
    main.querySelectorAll("article.hit").forEach(function (h) { h.classList.remove("hit"); });
    // Out of any fold: a run, a call's entry collapsed.
    for (var up = a; up; up = up.parentElement) {
      if (up.tagName === "DETAILS") up.open = true;
      up.classList.remove("collapsed");
    }
    a.classList.add("hit");
    state.hit = i;
    a.scrollIntoView({ block: "center" });
    where();
    later();
    return true;
  }

  // Opens entry i: on its branch (the path to the last entry under it),
  // whatever branch or compaction it sits behind.
  function open(i) {
    if (!state.onPath.has(i)) setLeaf(last[i]);
    return show(i);
  }

  // Moves the view by `by` entries of the path from the first in view.
  function jump(by) {
    var len = state.path.length;
    if (!len) return;
    var k = Math.max(0, Math.min(len - 1, Math.max(seen, 0) + by));
    while (k + 1 < len && !shows(state.path[k])) k++;
    var a = article(state.path[k]);
    if (!a) { reset(k); a = article(state.path[k]); }
    if (!a) return;
    // Its box at the top: a result's call, a line's run.
    while (a.parentElement !== main) a = a.parentElement;
    a.scrollIntoView({ block: "start" });
    where();
    later();
  }

  // Shows only what `value` lets through, from where the reader is (or
  // from path position k).
  function setFilter(value, k) {
    filter = value;
    el["am-filter"].value = value;
    document.body.setAttribute("data-filter", value);
    var from = k >= 0 ? k : Math.max(seen, 0);
    reset(from);
    var a = Array.from(main.querySelectorAll("article.entry[data-k]")).find(function (x) { return +x.dataset.k >= from; });
    if (a && a.getClientRects().length) a.scrollIntoView({ block: "start" });
    where();
    later();
  }

  function plain(markup) {
    return markup.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&");
  }
  function textOf(markup) { return plain(markup).toLowerCase(); }

  function findFrom(test, what) {
    var from = state.hit >= 0 && state.onPath.has(state.hit) ? state.onPath.get(state.hit) + 1 : Math.max(seen, 0);
    for (var step = 0; step < state.path.length; step++) {
      var k = (from + step) % state.path.length;
      if (test(state.path[k])) {
        show(state.path[k]);
        el["am-status"].textContent = what + " found";
        return;
      }
    }
    el["am-status"].textContent = "no " + what;
  }

  // Search over every entry of the session, every branch: the entries whose
  // text holds the query, as a list of links; "find next" steps through them.
  var MAX_HITS = 500;
  function escapeText(q) { return q.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;"); }
  function search(q) {
    var hits = [];
    var variants = [escapeText(q), escapeText(q).replace(/"/g, "&quot;").replace(/'/g, "&#39;")];
    var total = 0;
    for (var k = 0; k < texts.length; k++) {
      var raw = texts[k].toLowerCase();
      if (raw.indexOf(variants[0]) < 0 && raw.indexOf(variants[1]) < 0 && !/[&<>"']/.test(q)) continue;
      var entries = chunk(k);
      for (var e = 0; e < entries.length; e++) {
        if (textOf(entries[e]).indexOf(q) >= 0) {
          total++;
          if (hits.length < MAX_HITS) hits.push(k * tree.chunk + e);
        }
      }
    }
    return { q: q, hits: hits, total: total };
  }
  function showHits(found) {
    var box = el["am-hits"];
    box.textContent = "";
    box.hidden = false;
    var head = mk("p");
    head.className = "note";
    head.textContent = found.total + (found.total === 1 ? " entry holds \u201c" : " entries hold \u201c") + found.q + "\u201d" + (found.total > found.hits.length ? " (the first " + found.hits.length + " listed)" : "") + ", on every branch";
    box.appendChild(head);
    var ol = mk("ol");
    found.hits.forEach(function (i) {
      var li = mk("li");
      var a = mk("a");
      a.href = "#" + encodeURIComponent(tree.ids[i]);
      a.setAttribute("data-i", String(i));
      a.textContent = tree.kinds[i] + " #" + tree.ids[i];
      li.appendChild(a);
      var raw = plain(html(i));
      var t = raw.toLowerCase();
      if (t.length !== raw.length) raw = t;
      var at = t.indexOf(found.q);
      var snip = mk("span");
      snip.className = "snip";
      snip.textContent = " " + (at > 30 ? "…" : "") + raw.slice(Math.max(0, at - 30), at + found.q.length + 50).replace(/\s+/g, " ");
      li.appendChild(snip);
      if (!state.onPath.has(i)) li.classList.add("offpath");
      ol.appendChild(li);
    });
    box.appendChild(ol);
  }
  var found = null;
  el["am-find"].addEventListener("click", function () {
    var q = el["am-q"].value.toLowerCase();
    if (!q) return;
    if (!found || found.q !== q) { found = search(q); showHits(found); }
    if (!found.hits.length) { el["am-status"].textContent = "no match"; return; }
    // The next hit after the one shown, in file order.
    var next = found.hits[0];
    for (var h = 0; h < found.hits.length; h++) if (found.hits[h] > state.hit) { next = found.hits[h]; break; }
    if (state.hit < 0 || !state.onPath.has(state.hit)) {
      // From where the reader is: the first hit on the path at or after it, else the first.
      var first = Math.max(seen, 0);
      var best = -1;
      found.hits.forEach(function (i) { var k = state.onPath.get(i); if (k !== undefined && k >= first && (best < 0 || k < state.onPath.get(best))) best = i; });
      if (best >= 0) next = best;
    }
    open(next);
    el["am-status"].textContent = "match found";
  });
  el["am-q"].addEventListener("keydown", function (e) { if (e.key === "Enter") el["am-find"].click(); });
  el["am-err"].addEventListener("click", function () {
    findFrom(function (i) { return (tree.f[i] & 2) !== 0; }, "error");
  });
  el["am-prev"].addEventListener("click", function () { jump(-JUMP); });
  el["am-next"].addEventListener("click", function () { jump(JUMP); });
  el["am-ctx"].addEventListener("change", function () {
    document.body.classList.toggle("ctxmode", el["am-ctx"].checked);
  });
  el["am-filter"].addEventListener("change", function () { setFilter(el["am-filter"].value, -1); });
  el["am-collapse"].addEventListener("click", function () {
    folds = "collapsed";
    main.querySelectorAll("article.entry:not(.quiet)").forEach(function (a) { a.classList.add("collapsed"); });
    main.querySelectorAll("details[open]").forEach(function (d) { d.open = false; });
    later();
  });
  el["am-expand"].addEventListener("click", function () {
    folds = "expanded";
    main.querySelectorAll("article.entry.collapsed").forEach(function (a) { a.classList.remove("collapsed"); });
    main.querySelectorAll("details:not(.line)").forEach(function (d) { d.open = true; });
    later();
  });
  // A collapsed entry opens (and closes again) by its header.
  main.addEventListener("click", function (e) {
    var h = e.target.closest ? e.target.closest("article.entry > header") : null;
    if (!h || e.target.closest("a")) return;
    var a = h.parentElement;
    if (a.classList.contains("collapsed")) a.classList.remove("collapsed");
    else if (folds === "collapsed") a.classList.add("collapsed");
  });

  // The outline: where the session starts (each root), where it branches
  // (each branch by its first message), its compactions, summaries and
  // labels, each a link to the entry.
  var MAX_OUTLINE = 2000;
  function outline() {
    var ol = el["am-outline"].querySelector("ol");
    var items = 0;
    function item(i, what, depth) {
      if (items++ >= MAX_OUTLINE) return;
      var li = mk("li");
      li.className = "o-" + what.split(" ")[0];
      li.style.marginLeft = Math.min(depth, 12) + "em";
      var a = mk("a");
      a.href = "#" + encodeURIComponent(tree.ids[i]);
      a.textContent = what + ": " + (tree.lb[i] && what === "label" ? tree.lb[i] : (gist(i) || tree.kinds[i]));
      li.appendChild(a);
      ol.appendChild(li);
    }
    var depth = new Array(n);
    var roots = 0;
    for (var i = 0; i < n; i++) {
      var p = tree.p[i];
      depth[i] = p >= 0 ? (depth[p] || 0) + (children[p].length > 1 ? 1 : 0) : 0;
      if (p < 0 && !quietKind(i)) { roots++; item(i, "start", 0); }
      if (p >= 0 && children[p].length > 1) item(i, "branch " + (children[p].indexOf(i) + 1) + " of " + children[p].length, depth[i]);
      if (tree.f[i] & 1) item(i, "compaction", depth[i]);
      else if (tree.kinds[i] === "branchSummary" || tree.kinds[i] === "branch_summary") item(i, "branch summary", depth[i]);
      if (tree.lb[i] !== undefined) item(i, "label", depth[i]);
    }
    if (items > MAX_OUTLINE) {
      var more = mk("li");
      more.textContent = "… " + (items - MAX_OUTLINE) + " more";
      ol.appendChild(more);
    }
    el["am-outline"].setAttribute("data-items", String(items));
  }
  el["am-outline"].addEventListener("toggle", function () {
    if (el["am-outline"].open && !el["am-outline"].querySelector("li")) outline();
  });

  // Keys: j/k the next and previous entry, [ ] a hundred entries back and
  // on, / search, e the next error, o the outline.
  // The entry after (dir 1) or before (dir -1) the one marked, else the
  // first in view; the window grows when it is past its end.
  function step(dir, again) {
    var list = Array.from(main.querySelectorAll("article.entry")).filter(function (a) { return a.offsetParent !== null; });
    var c = list.findIndex(function (a) { return a.classList.contains("cursor"); }), next = c + dir;
    if (c < 0) for (next = 0; next + 1 < list.length && rect(list[next]).bottom <= 0; next++);
    if (!again && (next >= list.length ? hi < state.path.length : next < 0 && lo > 0)) { grow(dir, GROW); return step(dir, 1); }
    var a = list[Math.max(0, Math.min(list.length - 1, next))];
    if (!a) return;
    main.querySelectorAll("article.cursor").forEach(function (x) { x.classList.remove("cursor"); });
    a.classList.add("cursor");
    cursor = +a.getAttribute("data-i");
    a.scrollIntoView({ block: "nearest" });
    later();
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
    if (e.key === "j" || e.key === "k") step(e.key === "j" ? 1 : -1);
    else if (e.key === "]") jump(JUMP);
    else if (e.key === "[") jump(-JUMP);
    else if (e.key === "e") el["am-err"].click();
    else if (e.key === "/") { e.preventDefault(); el["am-q"].focus(); }
    else if (e.key === "o") { el["am-outline"].open = !el["am-outline"].open; }
  });

  function follow() {
    var id;
    try { id = decodeURIComponent(location.hash.slice(1)); } catch (e) { id = location.hash.slice(1); }
    if (!id || !byId.has(id)) return false;
    return open(byId.get(id));
  }
  window.addEventListener("hashchange", follow);
  // A link to the entry the address names already (a hit, an outline
  // item, a permalink followed before) shows it again.
  document.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest("a[href^=\"#\"]") : null;
    if (a && a.getAttribute("href") === location.hash) { e.preventDefault(); follow(); }
  });

  // The chunks are inflated once, when the page opens; their elements are
  // then let go, so the page holds each entry's markup once.
  Promise.all(chunks.map(inflate)).then(function (got) {
    texts = got;
    chunks.forEach(function (script) { script.remove(); });
    setLeaf(state.leaf);
    if (!follow()) reset(0);
    where();
    later();
    document.body.setAttribute("data-ready", "1");
  }, function (e) {
    el["am-main"].textContent = "The page's entries could not be read (" + e + "): this browser may lack DecompressionStream.";
  });
})();
