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
