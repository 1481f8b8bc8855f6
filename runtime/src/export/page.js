"use strict";
(function () {
  var tree = JSON.parse(document.getElementById("am-tree").textContent);
  var chunks = Array.prototype.slice.call(document.querySelectorAll("script.am-chunk"));
  var el = {};
  ["am-main", "am-ctx", "am-ctxcount", "am-q", "am-find", "am-err", "am-prev", "am-next", "am-pageno", "am-status", "am-leafinfo", "am-hits", "am-outline", "am-filter", "am-collapse", "am-expand"].forEach(function (id) {
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

  var state = { leaf: tree.leaf, page: 0, path: [], onPath: null, ctx: null, hit: -1 };

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
  }

  function pages() { return Math.max(1, Math.ceil(state.path.length / tree.page)); }

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
      var span = document.createElement("span");
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
      var span = document.createElement("span");
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
  function quietKind(i) { return html(i).indexOf(" quiet\"") > 0; }
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

  // A run of app-only lines (two or more in a row) folds into one row.
  function foldRuns(main) {
    var kids = Array.prototype.slice.call(main.children);
    var run = [];
    function close() {
      if (run.length >= 2) {
        var d = document.createElement("details");
        d.className = "run";
        var s = document.createElement("summary");
        var kinds = new Map();
        run.forEach(function (a) { var k = a.getAttribute("data-kind"); kinds.set(k, (kinds.get(k) || 0) + 1); });
        var names = [];
        kinds.forEach(function (count, k) { names.push(count + " " + k); });
        s.textContent = run.length + " app lines: " + names.join(", ");
        d.appendChild(s);
        run[0].parentNode.insertBefore(d, run[0]);
        run.forEach(function (a) { d.appendChild(a); });
      }
      run = [];
    }
    kids.forEach(function (k) {
      if (k.classList && k.classList.contains("quiet")) run.push(k); else close();
    });
    close();
  }

  // What the markup leaves to the page, written once in the tree: the
  // entry's id and index, its kind's name, its permalink, and each tool
  // call's head.
  function dress(art, i) {
    art.setAttribute("data-i", String(i));
    art.setAttribute("data-entry-id", tree.ids[i]);
    var head = art.querySelector("header, summary");
    if (head) {
      var kind = document.createElement("span");
      kind.className = "kind";
      kind.textContent = art.getAttribute("data-kind");
      head.insertBefore(kind, head.firstChild);
      if (times[i] !== null) {
        var time = document.createElement("time");
        var iso = new Date(times[i] * 1000);
        time.textContent = isNaN(iso.getTime()) ? String(times[i]) : iso.toISOString().slice(0, 19) + "Z";
        var before = head.querySelector(".label");
        head.insertBefore(time, before);
      }
      var perma = document.createElement("a");
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
        var unknown = document.createElement("span");
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
      var of = document.createElement("b");
      of.textContent = art.getAttribute("data-tool");
      rh.insertBefore(of, rh.firstChild);
      rh.insertBefore(document.createTextNode("result of "), of);
      rh.insertBefore(document.createTextNode(" "), of.nextSibling);
    }
    art.querySelectorAll(".call[data-tool]").forEach(function (call) {
      var h = document.createElement("div");
      h.className = "callhead";
      var b = document.createElement("b");
      b.textContent = call.getAttribute("data-tool");
      var c = document.createElement("code");
      c.textContent = call.getAttribute("data-call");
      h.appendChild(b);
      h.appendChild(document.createTextNode(" "));
      h.appendChild(c);
      call.insertBefore(h, call.firstChild);
    });
  }

  // Collapse all: every entry shown but the app lines down to its header.
  function collapse(main) {
    main.querySelectorAll("article.entry:not(.quiet)").forEach(function (a) { a.classList.add("collapsed"); });
  }

  function render() {
    var main = el["am-main"];
    main.textContent = "";
    var start = state.page * tree.page;
    var end = Math.min(state.path.length, start + tree.page);
    var calls = new Map();
    for (var k = start; k < end; k++) {
      var i = state.path[k];
      main.insertAdjacentHTML("beforeend", html(i));
      var art = main.lastElementChild;
      dress(art, i);
      art.classList.add(state.ctx.has(i) ? "ctx" : "out");
      art.setAttribute("data-s", String(state.ctx.has(i) ? tree.s[i] : 0));
      if (i === state.leaf) art.classList.add("leaf");
      art.querySelectorAll(".call[data-call]").forEach(function (call) {
        calls.set(call.getAttribute("data-call"), call);
      });
      var of = art.getAttribute("data-result-of");
      if (of !== null && calls.has(of)) calls.get(of).querySelector(".slot").appendChild(art);
      if (i >= 0 && children[i].length > 1) main.appendChild(branchNav(i, k + 1 < state.path.length ? state.path[k + 1] : -1));
    }
    foldRuns(main);
    main.querySelectorAll("pre code").forEach(highlight);
    if (state.collapsed) collapse(main);
    el["am-pageno"].textContent = "page " + (state.page + 1) + " of " + pages();
    state.cursor = -1;
  }

  function branchNav(at, taken) {
    var nav = document.createElement("div");
    nav.className = "branches";
    var head = document.createElement("span");
    head.textContent = children[at].length + " branches: ";
    nav.appendChild(head);
    children[at].forEach(function (c, k) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "branch" + (c === taken ? " on" : "");
      b.setAttribute("data-to", tree.ids[c]);
      b.textContent = (k + 1) + ". " + branchName(c);
      b.addEventListener("click", function () {
        setLeaf(last[c]);
        var k2 = state.onPath.get(c);
        state.page = Math.floor(k2 / tree.page);
        render();
        show(c);
      });
      nav.appendChild(b);
    });
    return nav;
  }

  function article(i) {
    return el["am-main"].querySelector("article.entry[data-i=\"" + i + "\"]");
  }

  function show(i) {
    var k = state.onPath.get(i);
    if (k === undefined) return false;
    var page = Math.floor(k / tree.page);
    if (page !== state.page) { state.page = page; render(); }
    var a = article(i);
    if (!a) return false;
    if (state.hit >= 0) { var old = article(state.hit); if (old) old.classList.remove("hit"); }
    for (var up = a.parentElement; up; up = up.parentElement) if (up.tagName === "DETAILS") up.open = true;
    a.classList.remove("collapsed");
    a.classList.add("hit");
    state.hit = i;
    a.scrollIntoView({ block: "center" });
    return true;
  }

  // Opens entry i: on its branch (the path to the last entry under it),
  // whatever branch or compaction it sits behind.
  function open(i) {
    if (!state.onPath.has(i)) { setLeaf(last[i]); state.page = 0; render(); }
    return show(i);
  }

  function plain(markup) {
    return markup.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&");
  }
  function textOf(markup) { return plain(markup).toLowerCase(); }

  function findFrom(test, what) {
    var from = state.hit >= 0 && state.onPath.has(state.hit) ? state.onPath.get(state.hit) + 1 : state.page * tree.page;
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
    var head = document.createElement("p");
    head.className = "note";
    head.textContent = found.total + (found.total === 1 ? " entry holds \u201c" : " entries hold \u201c") + found.q + "\u201d" + (found.total > found.hits.length ? " (the first " + found.hits.length + " listed)" : "") + ", on every branch";
    box.appendChild(head);
    var ol = document.createElement("ol");
    found.hits.forEach(function (i) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = "#" + encodeURIComponent(tree.ids[i]);
      a.setAttribute("data-i", String(i));
      a.textContent = tree.kinds[i] + " #" + tree.ids[i];
      li.appendChild(a);
      var raw = plain(html(i));
      var t = raw.toLowerCase();
      if (t.length !== raw.length) raw = t;
      var at = t.indexOf(found.q);
      var snip = document.createElement("span");
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
      // From the page shown: the first hit on the path at or after it, else the first.
      var first = state.page * tree.page;
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
  el["am-prev"].addEventListener("click", function () { if (state.page > 0) { state.page--; render(); } });
  el["am-next"].addEventListener("click", function () { if (state.page + 1 < pages()) { state.page++; render(); } });
  el["am-ctx"].addEventListener("change", function () {
    document.body.classList.toggle("ctxmode", el["am-ctx"].checked);
  });
  el["am-filter"].addEventListener("change", function () {
    document.body.setAttribute("data-filter", el["am-filter"].value);
  });
  el["am-collapse"].addEventListener("click", function () {
    state.collapsed = true;
    collapse(el["am-main"]);
    el["am-main"].querySelectorAll("details[open]").forEach(function (d) { d.open = false; });
  });
  el["am-expand"].addEventListener("click", function () {
    state.collapsed = false;
    var main = el["am-main"];
    main.querySelectorAll("article.entry.collapsed").forEach(function (a) { a.classList.remove("collapsed"); });
    main.querySelectorAll("details:not(.line)").forEach(function (d) { d.open = true; });
  });
  // A collapsed entry opens (and closes again) by its header.
  el["am-main"].addEventListener("click", function (e) {
    var h = e.target.closest ? e.target.closest("article.entry > header") : null;
    if (!h || e.target.closest("a")) return;
    var a = h.parentElement;
    if (a.classList.contains("collapsed")) a.classList.remove("collapsed");
    else if (state.collapsed) a.classList.add("collapsed");
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
      var li = document.createElement("li");
      li.className = "o-" + what.split(" ")[0];
      li.style.marginLeft = Math.min(depth, 12) + "em";
      var a = document.createElement("a");
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
      var more = document.createElement("li");
      more.textContent = "… " + (items - MAX_OUTLINE) + " more";
      ol.appendChild(more);
    }
    el["am-outline"].setAttribute("data-items", String(items));
  }
  el["am-outline"].addEventListener("toggle", function () {
    if (el["am-outline"].open && !el["am-outline"].querySelector("li")) outline();
  });

  // Keys: j/k the next and previous entry, [ ] the page, / search, e the
  // next error, o the outline.
  state.cursor = -1;
  function entriesShown() {
    return Array.prototype.filter.call(el["am-main"].querySelectorAll("article.entry"), function (a) { return a.offsetParent !== null; });
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    var t = e.target;
    if (t && (t.tagName === "INPUT" || t.tagName === "SELECT" || t.tagName === "TEXTAREA")) return;
    if (e.key === "j" || e.key === "k") {
      var list = entriesShown();
      if (!list.length) return;
      state.cursor = Math.max(0, Math.min(list.length - 1, state.cursor + (e.key === "j" ? 1 : -1)));
      var a = list[state.cursor];
      el["am-main"].querySelectorAll("article.cursor").forEach(function (c) { c.classList.remove("cursor"); });
      a.classList.add("cursor");
      a.scrollIntoView({ block: "nearest" });
    } else if (e.key === "]") el["am-next"].click();
    else if (e.key === "[") el["am-prev"].click();
    else if (e.key === "e") el["am-err"].click();
    else if (e.key === "/") { e.preventDefault(); el["am-q"].focus(); }
    else if (e.key === "o") { el["am-outline"].open = !el["am-outline"].open; }
    else return;
  });

  function follow() {
    var id;
    try { id = decodeURIComponent(location.hash.slice(1)); } catch (e) { id = location.hash.slice(1); }
    if (!id || !byId.has(id)) return;
    open(byId.get(id));
  }
  window.addEventListener("hashchange", follow);

  // The chunks are inflated once, when the page opens; their elements are
  // then let go, so the page holds each entry's markup once.
  Promise.all(chunks.map(inflate)).then(function (got) {
    texts = got;
    chunks.forEach(function (script) { script.remove(); });
    setLeaf(state.leaf);
    render();
    follow();
    document.body.setAttribute("data-ready", "1");
  }, function (e) {
    el["am-main"].textContent = "The page's entries could not be read (" + e + "): this browser may lack DecompressionStream.";
  });
})();
