"use strict";
(function () {
  var tree = JSON.parse(document.getElementById("am-tree").textContent);
  var chunks = Array.prototype.slice.call(document.querySelectorAll("script.am-chunk"));
  var el = {};
  ["am-main", "am-ctx", "am-ctxcount", "am-q", "am-find", "am-err", "am-prev", "am-next", "am-pageno", "am-status", "am-leafinfo"].forEach(function (id) {
    el[id] = document.getElementById(id);
  });
  var n = tree.p.length;
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

  var cache = new Map();
  function chunk(k) {
    var got = cache.get(k);
    if (!got) {
      got = JSON.parse(chunks[k].textContent);
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
    el["am-pageno"].textContent = "page " + (state.page + 1) + " of " + pages();
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
      b.textContent = (k + 1) + ". " + (tree.heads[c] || tree.kinds[c]);
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
    var found = null;
    el["am-main"].querySelectorAll("article.entry").forEach(function (a) {
      if (a.getAttribute("data-i") === String(i)) found = a;
    });
    return found;
  }

  function show(i) {
    var k = state.onPath.get(i);
    if (k === undefined) return false;
    var page = Math.floor(k / tree.page);
    if (page !== state.page) { state.page = page; render(); }
    var a = article(i);
    if (!a) return false;
    if (state.hit >= 0) { var old = article(state.hit); if (old) old.classList.remove("hit"); }
    a.classList.add("hit");
    state.hit = i;
    a.scrollIntoView({ block: "center" });
    return true;
  }

  function textOf(markup) {
    return markup.replace(/<[^>]*>/g, " ").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&amp;/g, "&").toLowerCase();
  }

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

  el["am-find"].addEventListener("click", function () {
    var q = el["am-q"].value.toLowerCase();
    if (!q) return;
    findFrom(function (i) { return textOf(html(i)).indexOf(q) >= 0; }, "match");
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

  function follow() {
    var id;
    try { id = decodeURIComponent(location.hash.slice(1)); } catch (e) { id = location.hash.slice(1); }
    if (!id || !byId.has(id)) return;
    var i = byId.get(id);
    if (!state.onPath.has(i)) { setLeaf(last[i]); state.page = 0; render(); }
    show(i);
  }
  window.addEventListener("hashchange", follow);

  setLeaf(state.leaf);
  render();
  follow();
  document.body.setAttribute("data-ready", "1");
})();
