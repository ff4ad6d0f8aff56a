// The mprof HTML report's script: draws the summary, the memory-over-time chart, the
// flame graphs and the tables from the JSON document embedded in the page
// (#mprof-data, written by mprof-display's html module). It fetches nothing.
// Trees arrive as parent links (each node's distance to its parent) in depth-first order (a parent before its
// children, siblings in name order); every walk over them is a loop or an explicit
// stack, never recursion, so a tree 100,000 calls deep draws like a shallow one.
(function () {
  'use strict';
  const D = JSON.parse(document.getElementById('mprof-data').textContent);
  const S = D.summary;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const isC = S.language === 'c';
  const languageName = isC ? 'C' : S.language === 'lisp' ? 'Lisp' : S.language;

  // ------------------------------------------------------------------ helpers

  function el(tag, props, kids) {
    const e = document.createElement(tag);
    for (const k in props || {}) {
      const v = props[k];
      if (v === null || v === undefined) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'class') e.className = v;
      else e.setAttribute(k, v);
    }
    for (const kid of kids || []) e.append(kid);
    return e;
  }
  function svg(tag, attrs) {
    const e = document.createElementNS(SVG_NS, tag);
    for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
    return e;
  }
  const int = (n) => Number(n).toLocaleString('en-US');
  function bytes(n) {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let u = 0;
    let v = Number(n);
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return u === 0 ? int(n) + ' B' : v.toFixed(1) + ' ' + units[u];
  }
  const pct = (a, b) => (b > 0 ? (100 * a / b).toFixed(1) + '%' : '');
  function seconds(ns) {
    const s = Number(ns) / 1e9;
    return s >= 1 ? s.toFixed(3) + ' s' : (s * 1e3).toFixed(3) + ' ms';
  }
  const tooltip = document.getElementById('tooltip');
  function showTip(text, ev) {
    tooltip.textContent = text;
    tooltip.hidden = false;
    const x = Math.min(ev.clientX + 14, window.innerWidth - tooltip.offsetWidth - 8);
    const y = ev.clientY + 18 + tooltip.offsetHeight > window.innerHeight ? ev.clientY - tooltip.offsetHeight - 10 : ev.clientY + 18;
    tooltip.style.left = Math.max(0, x) + 'px';
    tooltip.style.top = Math.max(0, y) + 'px';
  }
  const hideTip = () => { tooltip.hidden = true; };
  // A warm colour that depends only on the name, so a function keeps its colour.
  function colour(name) {
    let h = 2166136261;
    for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 16777619) >>> 0;
    return 'rgb(' + (205 + h % 50) + ',' + (80 + (h >>> 8) % 130) + ',' + ((h >>> 16) % 55) + ')';
  }

  // ------------------------------------------------------------------ summary

  const keptWord = isC ? 'never freed' : 'kept (reachable)';
  const title = S.program ? 'mprof: ' + S.program : 'mprof report (' + languageName + ' profile)';
  document.title = title;
  document.getElementById('title').textContent = title;
  (function summary() {
    const dl = document.getElementById('summary-list');
    const add = (k, v) => { dl.append(el('dt', { text: k }), el('dd', { text: v })); };
    if (S.program) add('program', S.program);
    add('language', languageName + ' (categories: ' + S.categories.map((c) => c[0] + ' ' + c[1]).join(', ') + ')');
    if (D.tables) {
      add('allocated', int(S.allocs) + ' objects, ' + int(S.bytes) + ' bytes (' + bytes(S.bytes) + ')');
      add('freed', int(S.frees) + ' objects, ' + int(S.freed) + ' bytes');
      add(keptWord, int(Math.max(0, S.allocs - S.frees)) + ' objects, ' + int(Math.max(0, S.bytes - S.freed)) + ' bytes');
    } else {
      add('memory', 'not recorded (an execution-only profile)');
    }
    if (S.peak) add('peak', int(S.peak[0]) + ' live bytes (' + bytes(S.peak[0]) + ') at ' + seconds(S.peak[1]));
    if (S.duration_ns !== null) add('duration', seconds(S.duration_ns));
    add('memory samples', int(S.samples));
    add('calling contexts', int(S.nodes) + ' in ' + int(S.functions) + ' functions');
    if (S.unattributed > 0) add('outside any known function', int(S.unattributed) + ' bytes');
    if (S.cycles > 0) add('recursion cycles', int(S.cycles));
    const meta = document.getElementById('metadata');
    meta.append(el('tbody', {}, S.metadata.map((kv) => el('tr', {}, [el('th', { text: kv[0] }), el('td', { text: kv[1] })]))));
    if (!S.metadata.length) document.getElementById('metadata-box').hidden = true;
  })();

  // ------------------------------------------------------------------ memory over time

  const chart = (function () {
    const host = document.getElementById('chart');
    const note = document.getElementById('chart-note');
    const select = document.getElementById('chart-series');
    const T = D.samples.t;
    if (!T.length) {
      note.textContent = 'This profile holds no memory samples (libmprof samples live memory every 10 ms; mprof-lisp after each collection).';
      select.disabled = true;
      return null;
    }
    const W = 1000, H = 260, L = 78, R = 14, TOP = 16, B = 28;
    const CATS = D.samples.cats;
    if (CATS) {
      // Live bytes by category (Lisp types, C size classes), as stacked areas.
      const o = document.createElement('option');
      o.value = 'cats';
      o.textContent = 'live bytes by category';
      select.insertBefore(o, select.firstChild);
      select.value = 'cats';
    }
    // The tops of the stacked layers: layer k is categories 0..k summed.
    function stacked() {
      const tops = [];
      let below = null;
      for (const c of CATS) {
        const top = c.map((v, i) => v + (below ? below[i] : 0));
        tops.push(top);
        below = top;
      }
      return tops;
    }
    function layerPath(xs, ys, lower, px, py) {
      let d = 'M' + px(xs[0]).toFixed(1) + ',' + py(ys[0]).toFixed(1);
      for (let i = 1; i < xs.length; i++) d += 'L' + px(xs[i]).toFixed(1) + ',' + py(ys[i]).toFixed(1);
      for (let i = xs.length - 1; i >= 0; i--) d += 'L' + px(xs[i]).toFixed(1) + ',' + py(lower ? lower[i] : 0).toFixed(1);
      return d + 'Z';
    }
    function draw() {
      host.textContent = '';
      const byCat = select.value === 'cats';
      const tops = byCat ? stacked() : null;
      const ys = byCat ? tops[tops.length - 1] : D.samples[select.value];
      const t1 = Math.max(T[T.length - 1], 1);
      let ymax = 1;
      for (const y of ys) if (y > ymax) ymax = y;
      const px = (t) => L + (W - L - R) * t / t1;
      const py = (y) => H - B - (H - B - TOP) * y / ymax;
      // At most two points (lowest, highest) per horizontal pixel.
      const pts = [];
      let bucket = -1, lo = 0, hi = 0, loT = 0, hiT = 0;
      const flush = () => {
        if (bucket < 0) return;
        if (loT <= hiT) { pts.push([loT, lo]); if (hiT !== loT) pts.push([hiT, hi]); }
        else { pts.push([hiT, hi], [loT, lo]); }
      };
      for (let i = 0; i < T.length; i++) {
        const b = Math.floor(px(T[i]));
        if (b !== bucket) { flush(); bucket = b; lo = hi = ys[i]; loT = hiT = T[i]; continue; }
        if (ys[i] < lo) { lo = ys[i]; loT = T[i]; }
        if (ys[i] > hi) { hi = ys[i]; hiT = T[i]; }
      }
      flush();
      let d = 'M' + px(pts[0][0]).toFixed(1) + ',' + (H - B);
      for (const p of pts) d += 'L' + px(p[0]).toFixed(1) + ',' + py(p[1]).toFixed(1);
      d += 'L' + px(pts[pts.length - 1][0]).toFixed(1) + ',' + (H - B) + 'Z';
      const root = svg('svg', { viewBox: '0 0 ' + W + ' ' + H, preserveAspectRatio: 'none', role: 'img', 'aria-label': 'memory over time' });
      root.append(svg('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }));
      root.append(svg('line', { class: 'axis', x1: L, y1: TOP, x2: L, y2: H - B }));
      for (const f of [0, 0.5, 1]) {
        const t = svg('text', { x: L - 6, y: py(ymax * f) + 4, 'text-anchor': 'end' });
        t.textContent = bytes(Math.round(ymax * f));
        root.append(t);
        const s = svg('text', { x: px(t1 * f), y: H - B + 16, 'text-anchor': f === 0 ? 'start' : f === 1 ? 'end' : 'middle' });
        s.textContent = seconds(t1 * f);
        root.append(s);
      }
      if (byCat) {
        for (let k = tops.length - 1; k >= 0; k--) {
          const layer = svg('path', { class: 'layer cat' + k, d: layerPath(T, tops[k], k > 0 ? tops[k - 1] : null, px, py) });
          const title = svg('title', {});
          title.textContent = S.categories[k] ? S.categories[k][0] + ': ' + S.categories[k][1] : 'category ' + k;
          layer.append(title);
          root.append(layer);
        }
      } else {
        root.append(svg('path', { class: 'area', d: d }));
      }
      // The peak: the highest sample, the earliest of equal ones (as the text report).
      let peak = 0;
      for (let i = 1; i < ys.length; i++) if (ys[i] > ys[peak]) peak = i;
      const g = svg('g', { class: 'peak' });
      const cx = px(T[peak]), cy = py(ys[peak]);
      g.append(svg('circle', { cx: cx, cy: cy, r: 4 }));
      const label = svg('text', { x: cx > W / 2 ? cx - 8 : cx + 8, y: Math.max(cy - 6, TOP + 10), 'text-anchor': cx > W / 2 ? 'end' : 'start' });
      label.textContent = 'peak ' + bytes(ys[peak]) + ' at ' + seconds(T[peak]);
      g.append(label);
      root.append(g);
      const cursor = svg('line', { class: 'cursor', x1: 0, x2: 0, y1: TOP, y2: H - B, visibility: 'hidden' });
      root.append(cursor);
      const overlay = svg('rect', { x: L, y: TOP, width: W - L - R, height: H - B - TOP, fill: 'transparent' });
      overlay.addEventListener('mousemove', (ev) => {
        const box = root.getBoundingClientRect();
        const t = ((ev.clientX - box.left) * W / box.width - L) / (W - L - R) * t1;
        let a = 0, b = T.length - 1;
        while (a < b) { const m = (a + b) >> 1; if (T[m] < t) a = m + 1; else b = m; }
        if (a > 0 && t - T[a - 1] < T[a] - t) a--;
        cursor.setAttribute('x1', px(T[a]));
        cursor.setAttribute('x2', px(T[a]));
        cursor.setAttribute('visibility', 'visible');
        let tip = seconds(T[a]) + '\nlive: ' + int(D.samples.live[a]) + ' bytes\nallocated so far: ' + int(D.samples.alloc[a]) + ' bytes';
        if (CATS) CATS.forEach((c, k) => { tip += '\n  ' + (S.categories[k] ? S.categories[k][1] : k) + ': ' + int(c[a]) + ' bytes live'; });
        showTip(tip, ev);
      });
      overlay.addEventListener('mouseleave', () => { cursor.setAttribute('visibility', 'hidden'); hideTip(); });
      root.append(overlay);
      host.append(root);
      note.textContent = int(S.samples) + ' samples over ' + seconds(t1) +
        (T.length < S.samples ? ' (drawn from ' + int(T.length) + ': the lowest and highest of each stretch of time)' : '') + '.';
    }
    select.addEventListener('change', draw);
    draw();
    return { draw: draw };
  })();

  // ------------------------------------------------------------------ flame graph

  // A tree ready to draw: children lists (in index order, which is name order),
  // and each quantity's inclusive sums (one reverse sweep: parents come first).
  function prepare(t) {
    const n = t.up.length;
    t.parent = new Uint32Array(n);
    for (let i = 1; i < n; i++) t.parent[i] = i - t.up[i];
    const first = new Uint32Array(n + 1);
    for (let i = 1; i < n; i++) first[t.parent[i] + 1]++;
    for (let i = 0; i < n; i++) first[i + 1] += first[i];
    const fill = first.slice(0, n);
    const kids = new Uint32Array(Math.max(n - 1, 0));
    for (let i = 1; i < n; i++) kids[fill[t.parent[i]]++] = i;
    const incl = {};
    for (const q of ['bytes', 'kept', 'allocs', 'ns', 'calls', 'instructions']) {
      if (!t[q]) continue;
      const a = Float64Array.from(t[q]);
      for (let i = n - 1; i > 0; i--) a[t.parent[i]] += a[i];
      incl[q] = a;
    }
    return { t: t, n: n, first: first, kids: kids, incl: incl };
  }
  const trees = {};
  if (D.memory) trees.memory = prepare(D.memory);
  if (D.time) trees.time = prepare(D.time);
  const keptLabel = isC ? 'bytes never freed' : 'bytes kept (reachable)';
  const VALUES = [
    { tree: 'memory', q: 'bytes', label: 'bytes allocated', fmt: (v) => int(v) + ' bytes' },
    { tree: 'memory', q: 'kept', label: keptLabel, fmt: (v) => int(v) + ' bytes' },
    { tree: 'memory', q: 'allocs', label: 'allocations', fmt: (v) => int(v) + ' allocations' },
    { tree: 'time', q: 'ns', label: 'time (self)', fmt: (v) => seconds(v) },
    { tree: 'time', q: 'calls', label: 'calls', fmt: (v) => int(v) + ' calls' },
    { tree: 'time', q: 'instructions', label: 'VM instructions', fmt: (v) => int(v) + ' instructions' },
  ].filter((v) => trees[v.tree] && trees[v.tree].incl[v.q] && trees[v.tree].incl[v.q][0] > 0);

  const flame = (function () {
    const host = document.getElementById('flame');
    const select = document.getElementById('flame-value');
    const search = document.getElementById('flame-search');
    const matches = document.getElementById('flame-matches');
    const note = document.getElementById('flame-note');
    if (!VALUES.length) {
      note.textContent = 'Nothing to draw: the profile records no allocation and no time.';
      select.disabled = search.disabled = true;
      host.hidden = true;
      return null;
    }
    VALUES.forEach((v, i) => select.append(el('option', { value: String(i), text: v.label })));
    const ROW = 18, MIN_WIDTH = 0.5, MAX_ROWS = 400, MAX_FRAMES = 20000, MAX_CALLERS = 12;
    let value = VALUES[0], tree = trees[value.tree], zoom = 0, term = '', nameMatch = null;
    let drawn = []; // [div, node]

    function nameOf(node) { return node === 0 ? 'all' : tree.t.names[tree.t.name[node]]; }
    function matchesTerm(node) { return node !== 0 && nameMatch !== null && nameMatch[tree.t.name[node]] === 1; }

    function frame(node, x, w, row, cls) {
      const name = nameOf(node);
      const d = el('div', { class: 'fr' + (cls ? ' ' + cls : ''), text: name });
      d.style.left = x.toFixed(2) + 'px';
      d.style.top = row * ROW + 'px';
      d.style.width = Math.max(w, 1).toFixed(2) + 'px';
      d.style.background = node === 0 ? '#e0e0e6' : colour(name);
      d.dataset.node = String(node);
      if (matchesTerm(node)) d.classList.add('match');
      drawn.push([d, node]);
      return d;
    }

    function draw() {
      host.textContent = '';
      drawn = [];
      const W = host.clientWidth || 1000;
      const incl = tree.incl[value.q];
      const total = incl[zoom];
      const out = document.createDocumentFragment();
      // The zoomed frame's callers, full width, outermost first (the middle ones
      // folded into one row when there are many).
      const callers = [];
      for (let a = zoom; a !== 0;) { a = tree.t.parent[a]; callers.push(a); }
      callers.reverse();
      let row = 0;
      const folded = callers.length > MAX_CALLERS ? callers.length - MAX_CALLERS + 1 : 0;
      for (let i = 0; i < callers.length; i++) {
        if (folded && i === 1) {
          const d = el('div', { class: 'fr anc', text: '\u2026 ' + int(folded) + ' more callers (click to zoom out one level)' });
          d.style.left = '0px'; d.style.top = row * ROW + 'px'; d.style.width = W + 'px'; d.style.background = '#e0e0e6';
          d.dataset.node = String(tree.t.parent[zoom]);
          out.append(d);
          row++;
          i += folded - 1;
          continue;
        }
        out.append(frame(callers[i], 0, W, row++, 'anc'));
      }
      const base = row;
      let rows = base, cut = false;
      const work = [[zoom, 0, base]];
      while (work.length) {
        const [node, x, r] = work.pop();
        const w = total > 0 ? incl[node] / total * W : 0;
        if (w < MIN_WIDTH && node !== zoom) continue;
        if (r - base >= MAX_ROWS || drawn.length >= MAX_FRAMES) { cut = true; continue; }
        out.append(frame(node, x, w, r, ''));
        rows = Math.max(rows, r + 1);
        // Children from the frame's left edge, in name order (pushed in reverse so
        // the leftmost is drawn first).
        const batch = [];
        let cx = x;
        for (let k = tree.first[node]; k < tree.first[node + 1]; k++) {
          const c = tree.kids[k];
          const cw = total > 0 ? incl[c] / total * W : 0;
          if (cw >= MIN_WIDTH) batch.push([c, cx, r + 1]);
          cx += cw;
        }
        for (let j = batch.length; j-- > 0;) work.push(batch[j]);
      }
      host.style.height = rows * ROW + 'px';
      host.append(out);
      note.textContent = int(drawn.length) + ' frames drawn' + (cut ? ' (deeper or further frames left out: zoom in to see them)' : '') +
        '; ' + value.label + ' in view: ' + value.fmt(total) + (zoom !== 0 ? ' (' + pct(total, incl[0]) + ' of all)' : '') + '.';
      updateMatches();
    }

    function updateMatches() {
      for (const [d, node] of drawn) d.classList.toggle('match', matchesTerm(node));
      if (nameMatch === null) { matches.textContent = ''; return; }
      // Over the whole tree: matching frames, and the value under them counted once
      // (a match inside a match adds nothing). Index order is depth-first order.
      const incl = tree.incl[value.q];
      const under = new Uint8Array(tree.n);
      let count = 0, sum = 0;
      for (let i = 1; i < tree.n; i++) {
        const p = tree.t.parent[i];
        const m = nameMatch[tree.t.name[i]] === 1;
        if (m) { count++; if (!under[p]) sum += incl[i]; }
        under[i] = under[p] || (m ? 1 : 0);
      }
      const shown = drawn.filter(([d]) => d.classList.contains('match')).length;
      matches.textContent = count === 0 ? 'no frame matches' : int(count) + ' frames match (' + int(shown) + ' drawn), ' + value.fmt(sum) + ', ' + pct(sum, incl[0]) + ' of all';
    }

    function setTerm(text) {
      term = text.trim().toLowerCase();
      if (!term) { nameMatch = null; } else {
        const names = tree.t.names;
        nameMatch = new Uint8Array(names.length);
        for (let k = 0; k < names.length; k++) nameMatch[k] = names[k].toLowerCase().includes(term) ? 1 : 0;
      }
      updateMatches();
    }

    host.addEventListener('click', (ev) => {
      const d = ev.target.closest('.fr');
      if (!d) return;
      zoom = Number(d.dataset.node);
      draw();
    });
    host.addEventListener('mousemove', (ev) => {
      const d = ev.target.closest('.fr');
      if (!d) { hideTip(); return; }
      const node = Number(d.dataset.node);
      const incl = tree.incl[value.q];
      const lines = [nameOf(node)];
      const loc = node === 0 ? '' : tree.t.locs[tree.t.name[node]];
      if (loc) lines.push(loc);
      lines.push(value.label + ': ' + value.fmt(incl[node]) + ', ' + pct(incl[node], incl[0]) + ' of all' +
        (zoom !== 0 ? ', ' + pct(incl[node], incl[zoom]) + ' of the zoomed frame' : ''));
      lines.push('in the function itself: ' + value.fmt(tree.t[value.q][node]));
      for (const v of VALUES) if (v.tree === value.tree && v !== value) lines.push(v.label + ': ' + v.fmt(tree.incl[v.q][node]));
      if (node === 0 && tree.t[value.q][0] > 0) lines.push('(outside any function: ' + value.fmt(tree.t[value.q][0]) + ')');
      showTip(lines.join('\n'), ev);
    });
    host.addEventListener('mouseleave', hideTip);
    select.addEventListener('change', () => {
      const next = VALUES[Number(select.value)];
      if (next.tree !== value.tree) zoom = 0;
      value = next;
      tree = trees[value.tree];
      setTerm(search.value);
      draw();
    });
    search.addEventListener('input', () => setTerm(search.value));
    document.getElementById('flame-reset').addEventListener('click', () => { zoom = 0; draw(); });
    let resize = 0;
    window.addEventListener('resize', () => { clearTimeout(resize); resize = setTimeout(draw, 150); });
    draw();
    return { draw: draw };
  })();

  // ------------------------------------------------------------------ tables

  // A sortable table: `columns` [{label, num, title, key(row), cell(row)}], rows drawn
  // `limit` at a time. With `group`, each row is a <tbody> of the <tr>s `group(row)`
  // returns, with the id `groupId(row)`.
  function sortable(host, spec) {
    const table = el('table', { class: 'data ' + (spec.class || ''), id: spec.id });
    const head = el('tr');
    const ths = spec.columns.map((c, i) => {
      const th = el('th', { text: c.label, class: c.num ? 'num' : '', tabindex: '0', scope: 'col' });
      if (c.title) th.title = c.title;
      th.addEventListener('click', () => sortBy(i));
      th.addEventListener('keydown', (ev) => { if (ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); sortBy(i); } });
      head.append(th);
      return th;
    });
    table.append(el('thead', {}, [head]));
    host.append(table);
    let rows = spec.rows.slice();
    let shown = Math.min(rows.length, spec.limit || 500);
    let bodies = [];
    let active = -1, descending = true;
    const more = el('button', { class: 'more', type: 'button' });
    more.addEventListener('click', () => { shown = rows.length; render(); });
    host.append(more);
    function render() {
      for (const b of bodies) b.remove();
      bodies = [];
      if (spec.group) {
        for (let i = 0; i < shown; i++) {
          const tb = el('tbody', { id: spec.groupId(rows[i]) }, spec.group(rows[i]));
          bodies.push(tb);
        }
      } else {
        const tb = el('tbody');
        for (let i = 0; i < shown; i++) {
          tb.append(el('tr', {}, spec.columns.map((c) => {
            const v = c.cell(rows[i]);
            return el('td', { class: (c.num ? 'num ' : '') + (c.cls || '') }, [v]);
          })));
        }
        bodies.push(tb);
      }
      table.append(...bodies);
      more.hidden = shown >= rows.length;
      more.textContent = 'Show all ' + int(rows.length) + ' rows';
    }
    function sortBy(i, desc) {
      const c = spec.columns[i];
      descending = desc !== undefined ? desc : i === active ? !descending : !!c.num;
      active = i;
      const keyed = rows.map((r, k) => [c.key(r), k, r]);
      keyed.sort((a, b) => {
        let d = 0;
        if (a[0] === null || b[0] === null) d = (a[0] === null) - (b[0] === null);
        else if (typeof a[0] === 'number' && typeof b[0] === 'number') d = a[0] - b[0];
        else d = String(a[0]).localeCompare(String(b[0]));
        if (descending && a[0] !== null && b[0] !== null) d = -d;
        return d || a[1] - b[1];
      });
      rows = keyed.map((x) => x[2]);
      ths.forEach((th, k) => { if (k === i) th.setAttribute('aria-sort', descending ? 'descending' : 'ascending'); else th.removeAttribute('aria-sort'); });
      render();
    }
    if (spec.sort !== undefined) sortBy(spec.sort, spec.descending); else render();
    return {
      // Draws every row, so that an anchor inside any of them exists.
      showAll: () => { if (shown < rows.length) { shown = rows.length; render(); } },
    };
  }

  const TB = D.tables;
  const ent = TB ? TB.entities : { name: [], label: [] };
  const inGraph = new Set(TB ? TB.graph.shown : []);
  let graphTable = null;
  function fnLink(e) {
    if (typeof e === 'string') return document.createTextNode(e);
    if (!inGraph.has(e)) return document.createTextNode(ent.label[e]);
    return el('a', { class: 'fn', href: '#cg-' + e, text: ent.label[e], 'data-entity': String(e) });
  }
  // A link to a call-graph entry draws the whole graph table first if the entry is
  // not among the rows drawn yet, then jumps to it.
  document.addEventListener('click', (ev) => {
    const a = ev.target.closest && ev.target.closest('a.fn');
    if (!a || !graphTable) return;
    ev.preventDefault();
    graphTable.showAll();
    const target = document.getElementById('cg-' + a.dataset.entity);
    if (!target) return;
    history.replaceState(null, '', '#cg-' + a.dataset.entity);
    target.scrollIntoView({ block: 'start' });
    for (const f of document.querySelectorAll('tbody.flash')) f.classList.remove('flash');
    target.classList.add('flash');
  });
  function pathCell(complete, steps, site) {
    const span = el('span', { text: complete ? '||' : '...' });
    for (const s of steps) { span.append(' > '); span.append(fnLink(s)); }
    if (site) span.append(' (' + site + ')');
    return span;
  }
  const pathText = (complete, steps, site) => (complete ? '||' : '...') + steps.map((s) => ' > ' + (typeof s === 'string' ? s : ent.label[s])).join('') + (site ? ' (' + site + ')' : '');

  function pathTable(host, id, rows, countLabel) {
    let total = 0;
    for (const r of rows) total += r[1];
    return sortable(host, {
      id: id,
      rows: rows,
      sort: 1,
      columns: [
        { label: countLabel, num: true, key: (r) => r[0], cell: (r) => int(r[0]) },
        { label: 'bytes', num: true, key: (r) => r[1], cell: (r) => int(r[1]) },
        { label: '%', num: true, key: (r) => r[1], cell: (r) => pct(r[1], total) },
        { label: 'path (last ' + D.pathDepth + ' callers)', key: (r) => pathText(r[2][0], r[2][1], r[2][2]), cell: (r) => pathCell(r[2][0], r[2][1], r[2][2]), cls: 'path' },
      ],
    });
  }

  if (!TB) {
    for (const id of ['kept', 'bins', 'direct', 'graph']) {
      const s = document.getElementById(id);
      s.append(el('p', { class: 'note', text: 'This profile holds no memory data.' }));
    }
  } else {
    // Memory leak / kept table, then the figure tables in its layout.
    document.getElementById('kept-title').textContent = isC ? 'Memory leak table' : 'Memory kept table';
    document.getElementById('nav-kept').textContent = isC ? 'Memory leaks' : 'Memory kept';
    document.getElementById('kept-note').textContent = isC
      ? 'Memory allocated and never freed, by path (|| marks a path that starts at the bottom of the stack).'
      : 'Memory still reachable at the report, by path (|| marks a path that starts at the bottom of the stack).';
    if (TB.kept.length) pathTable(document.getElementById('kept-table'), 'kept-rows', TB.kept, 'objects');
    else document.getElementById('kept-table').append(el('p', { class: 'note', text: isC ? 'No memory leaked.' : 'No memory kept.' }));
    const figures = document.getElementById('figures');
    for (const f of TB.figures) {
      const h = el('h3', { text: f.name.charAt(0).toUpperCase() + f.name.slice(1) });
      const box = el('div');
      figures.append(h, box);
      if (f.rows.length) pathTable(box, null, f.rows, 'count'); else box.append(el('p', { class: 'note', text: '(nothing)' }));
    }

    // Allocation bins.
    let binBytes = 0, binKept = 0;
    for (const b of TB.bins) { binBytes += b[3]; binKept += b[5]; }
    const binCols = [
      isC ? { label: 'size', num: true, key: (b) => b[1], cell: (b) => b[0] } : { label: 'type', key: (b) => b[0], cell: (b) => b[0] },
      { label: 'allocs', num: true, key: (b) => b[2], cell: (b) => int(b[2]) },
      { label: 'bytes', num: true, key: (b) => b[3], cell: (b) => int(b[3]) },
      { label: '%', num: true, key: (b) => b[3], cell: (b) => pct(b[3], binBytes) },
      { label: 'frees', num: true, key: (b) => b[4], cell: (b) => int(b[4]) },
      { label: isC ? 'never freed' : 'kept', num: true, key: (b) => b[5], cell: (b) => int(b[5]) },
      { label: '%', num: true, key: (b) => b[5], cell: (b) => pct(b[5], binKept) },
    ];
    if (isC) binCols.push({ label: 'types', key: (b) => b[6], cell: (b) => b[6] });
    if (TB.bins.length) sortable(document.getElementById('bins-table'), { id: 'bins-rows', rows: TB.bins, columns: binCols, sort: isC ? 0 : 2, descending: !isC });
    else document.getElementById('bins-table').append(el('p', { class: 'note', text: 'No allocation.' }));

    // Direct allocation: per function, its own bytes (per category), kept, calls.
    const cats = S.categories;
    const sum = (a) => a.reduce((x, y) => x + y, 0);
    const totBytes = sum(TB.direct.totals[0]);
    const directRows = TB.direct.rows.map((r) => ({ e: r[0], bytes: r[1], kept: r[2], allocs: r[3] }));
    if (TB.direct.outside) directRows.push({ e: '<outside any function>', bytes: TB.direct.outside[0], kept: TB.direct.outside[1], allocs: TB.direct.outside[2] });
    const directCols = [
      { label: 'name', key: (r) => (typeof r.e === 'string' ? r.e : ent.label[r.e]), cell: (r) => fnLink(r.e) },
      { label: 'bytes', num: true, key: (r) => sum(r.bytes), cell: (r) => int(sum(r.bytes)) },
      { label: '% mem', num: true, key: (r) => sum(r.bytes), cell: (r) => pct(sum(r.bytes), totBytes) },
    ];
    cats.forEach((c, k) => directCols.push({ label: c[0], title: c[1] + ' bytes', num: true, key: (r) => r.bytes[k], cell: (r) => int(r.bytes[k]) }));
    directCols.push({ label: isC ? 'never freed' : 'bytes kept', num: true, key: (r) => sum(r.kept), cell: (r) => int(sum(r.kept)) });
    cats.forEach((c, k) => directCols.push({ label: c[0] + ' kept', title: c[1] + ' bytes ' + keptWord, num: true, key: (r) => r.kept[k], cell: (r) => int(r.kept[k]) }));
    directCols.push({ label: 'calls', title: 'allocations', num: true, key: (r) => r.allocs, cell: (r) => int(r.allocs) });
    if (directRows.length) sortable(document.getElementById('direct-table'), { id: 'direct-rows', rows: directRows, columns: directCols, sort: 1 });
    else document.getElementById('direct-table').append(el('p', { class: 'note', text: 'No allocation.' }));

    // Call graph: one <tbody> per entry (callers, the entry, callees), sorted as units.
    const G = TB.graph;
    const at = new Map();
    G.shown.forEach((e, i) => at.set(e, i));
    const ups = G.shown.map(() => []), downs = G.shown.map(() => []);
    for (let k = 0; k < G.caller.length; k++) {
      ups[at.get(G.callee[k])].push(k);
      if (G.down[k]) downs[at.get(G.caller[k])].push(k);
    }
    const byBytes = (a, b) => G.bytes[b] - G.bytes[a] || at.get(G.caller[a]) - at.get(G.caller[b]);
    const grand = totBytes;
    const entries = G.shown.map((e, i) => ({ e: e, i: i }));
    const edgeRow = (cls, k, other, calls, of) => el('tr', { class: cls }, [
      el('td'), el('td'), el('td'),
      el('td', { class: 'num', text: int(G.bytes[k]) }),
      el('td', { class: 'num', text: int(calls) + '/' + int(of) }),
      el('td', { class: 'name' }, [fnLink(other)]),
    ]);
    graphTable = sortable(document.getElementById('graph-table'), {
      id: 'graph-rows',
      class: 'graph',
      rows: entries,
      limit: 300,
      sort: 0,
      descending: false,
      groupId: (r) => 'cg-' + r.e,
      group: (r) => {
        const trs = [];
        for (const k of ups[r.i].slice().sort(byBytes)) trs.push(edgeRow('caller', k, G.caller[k], G.calls[k], G.outCalls[at.get(G.caller[k])]));
        const called = int(G.called[r.i]) + (G.recursion[r.i] > 0 ? '+' + int(G.recursion[r.i]) : '');
        trs.push(el('tr', { class: 'entry' }, [
          el('td', { class: 'num', text: '[' + r.i + ']' }),
          el('td', { class: 'num', text: pct(G.total[r.i], grand) }),
          el('td', { class: 'num', text: int(G.self[r.i]) }),
          el('td', { class: 'num', text: int(G.total[r.i]) }),
          el('td', { class: 'num', text: called }),
          el('td', { class: 'name', text: ent.label[r.e] }),
        ]));
        const byCallee = (a, b) => G.bytes[b] - G.bytes[a] || at.get(G.callee[a]) - at.get(G.callee[b]);
        for (const k of downs[r.i].slice().sort(byCallee)) trs.push(edgeRow('callee', k, G.callee[k], G.calls[k], G.called[at.get(G.callee[k])]));
        return trs;
      },
      columns: [
        { label: 'index', num: true, key: (r) => r.i },
        { label: '% total', num: true, key: (r) => G.total[r.i] },
        { label: 'self', title: 'bytes allocated in the function itself', num: true, key: (r) => G.self[r.i] },
        { label: 'self+desc', title: 'bytes allocated in the function and its descendants (callers/callees: on behalf of that caller, by that callee)', num: true, key: (r) => G.total[r.i] },
        { label: 'called', title: 'allocating calls (+ recursive ones); on caller and callee lines, calls/all calls', num: true, key: (r) => G.called[r.i] },
        { label: 'name', key: (r) => ent.label[r.e] },
      ],
    });

    // Heap errors (C profiles).
    if (TB.errors.length) {
      document.getElementById('errors').hidden = false;
      document.getElementById('nav-errors').hidden = false;
      sortable(document.getElementById('errors-table'), {
        id: 'errors-rows',
        rows: TB.errors,
        sort: 1,
        columns: [
          { label: 'kind', key: (r) => r[0], cell: (r) => r[0] },
          { label: 'count', num: true, key: (r) => r[1], cell: (r) => int(r[1]) },
          { label: 'address', key: (r) => r[2], cell: (r) => r[2] },
          { label: 'path', key: (r) => pathText(r[3][0], r[3][1], r[3][2]), cell: (r) => pathCell(r[3][0], r[3][1], r[3][2]), cls: 'path' },
        ],
      });
    }
  }

  // ------------------------------------------------------------------ text parts

  for (const [key, id] of [['exec', 'exec'], ['listing', 'listing']]) {
    if (D[key] === null) continue;
    document.getElementById(id).hidden = false;
    document.getElementById('nav-' + id).hidden = false;
    document.getElementById(id + '-text').textContent = D[key];
  }

  // For scripts driving the page (the browser test): what was drawn.
  window.mprofReport = { chart: chart, flame: flame, values: VALUES.map((v) => v.label) };
})();
